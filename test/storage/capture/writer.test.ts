import { existsSync, readdirSync, statSync, truncateSync, chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FlowBatch } from '../../../common/flow-batch.js';
import { nodeFs, type CaptureFs } from '../../../storage/capture/capture-fs.js';
import { listCaptureFiles, scanFlows } from '../../../storage/capture/reader.js';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { ROW_ORDER } from '../../../storage/capture/format.js';
import { CaptureWriter, type HourSealedEvent } from '../../../storage/capture/writer.js';
import { appendRows } from '../../../storage/capture/open-hour.js';
import { FakeClock, inAnyOrder, prng, randomFlows, rowsOf, slice, tempDataDir } from './flows.js';

const H9 = Date.UTC(2026, 2, 25, 9); // 10:00 in Europe/Paris (CET, before the March DST change)
const H10 = H9 + 3_600_000;
const writers: CaptureWriter[] = [];

/**
 * Writes `minutes` batches of `rows` random flows, one a minute from 09:00 UTC (batch k seeded
 * `seed + k`), the clock ticking past each minute: each becomes one live block.
 */
async function writeMinutes(
  w: CaptureWriter,
  clock: FakeClock,
  minutes: number,
  rows: number,
  seed: number,
): Promise<FlowBatch[]> {
  const all: FlowBatch[] = [];
  for (let k = 0; k < minutes; k++) {
    const b = randomFlows(rows, { received: H9 + k * 60_000, stepMs: 100, seed: seed + k });
    all.push(b);
    w.write('netflow', b);
    clock.t = H9 + (k + 1) * 60_000;
    await w.tick();
  }
  return all;
}

function makeWriter(
  dataDir: string,
  clock: FakeClock,
  extra: Partial<ConstructorParameters<typeof CaptureWriter>[0]> = {},
): CaptureWriter {
  const w = new CaptureWriter({
    dataDir,
    timezone: 'Europe/Paris',
    flushIntervalMs: 5000,
    blockRows: 4096,
    now: clock.now,
    timer: false,
    ...extra,
  });
  writers.push(w);
  return w;
}

function readAll(path: string): Record<string, number | string>[] {
  return rowsOf(scanFlows([path]));
}

afterEach(async () => {
  for (const w of writers.splice(0)) await w.close().catch(() => undefined);
});

describe('capture writer', () => {
  it('writes the open hour as nfcapd.current.<local stamp>, readable after each flush interval, not before', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9 + 60_000);
    const w = makeWriter(dir, clock);
    await w.start();
    const batch = randomFlows(1000, { received: H9 + 1000, stepMs: 50, seed: 1 });
    w.write('netflow', batch);
    const path = join(dir, 'flows/netflow/nfcapd.current.202603251000');
    expect(existsSync(path)).toBe(true);
    expect(readAll(path)).toHaveLength(0); // buffered, interval not over
    clock.advance(4000);
    await w.tick();
    expect(readAll(path)).toHaveLength(0);
    clock.advance(1000);
    await w.tick();
    expect(readAll(path)).toEqual(rowsOf([batch]));
    // a second flush appends a second block; both are read, in order
    const more = randomFlows(500, { received: H9 + 200_000, seed: 2 });
    w.write('netflow', more);
    clock.advance(5000);
    await w.tick();
    const f = CaptureFile.open(path);
    expect(f.sealed).toBe(false);
    expect(f.blocks).toHaveLength(2);
    f.close();
    expect(readAll(path)).toEqual(rowsOf([batch, more]));
  });

  it('flushes early when blockRows rows are waiting', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock, { blockRows: 1000 });
    await w.start();
    w.write('netflow', randomFlows(2500, { received: H9, stepMs: 1 }));
    const [file] = listCaptureFiles(dir, 'netflow', 'Europe/Paris');
    expect(readAll(file!.path)).toHaveLength(2000);
  });

  it('routes rows to the hour of their received time and seals an hour once the clock passes its end', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9 + 3_590_000);
    const sealed: HourSealedEvent[] = [];
    const w = makeWriter(dir, clock, { sealGraceMs: 10_000 });
    w.onHourSealed((e) => void sealed.push(e));
    await w.start();
    const a = randomFlows(300, { received: H9 + 3_597_000, stepMs: 10, seed: 5 }); // straddles 10:00 UTC
    w.write('netflow', a);
    const firstHourRows = Array.from(a.cols.received.subarray(0, a.length)).filter((r) => r < H10).length;
    expect(firstHourRows).toBe(300);
    const b = randomFlows(200, { received: H10 + 500, stepMs: 10, seed: 6 });
    w.write('netflow', b);
    clock.t = H10 + 5_000; // boundary passed, grace not over: both hours open
    await w.tick();
    expect(sealed).toEqual([]);
    expect(readdirSync(join(dir, 'flows/netflow')).sort()).toEqual([
      'nfcapd.current.202603251000',
      'nfcapd.current.202603251100',
    ]);
    clock.t = H10 + 10_000;
    await w.tick();
    const files = listCaptureFiles(dir, 'netflow', 'Europe/Paris');
    expect(files.map((f) => [f.name, f.kind])).toEqual([
      ['nfcapd.202603251000', 'sealed'],
      ['nfcapd.current.202603251100', 'current'],
    ]);
    expect(sealed).toEqual([{ source: 'netflow', hourStart: H9, hourEnd: H10, path: files[0]!.path, flows: 300 }]);
    const f = CaptureFile.open(files[0]!.path, { requireSealed: true });
    expect(f.sealed).toBe(true);
    expect(f.totals?.all.flows).toBe(300);
    expect(f.header.hourStart).toBe(H9);
    f.close();
    expect(readAll(files[0]!.path)).toEqual(rowsOf([a]));
    expect(readAll(files[1]!.path)).toEqual(rowsOf([b]));
  });

  it('merges the small live blocks of an hour into large ones when sealing, keeping every row', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock, { blockRows: 4096 });
    await w.start();
    const all = await writeMinutes(w, clock, 30, 300, 100);
    const cur = listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!;
    const live = CaptureFile.open(cur.path);
    expect(live.blocks.length).toBe(30);
    live.close();
    clock.t = H10 + 60_000;
    await w.tick();
    const sealed = listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!;
    expect(sealed.kind).toBe('sealed');
    const f = CaptureFile.open(sealed.path, { requireSealed: true });
    expect(f.blocks.map((b) => b.rows)).toEqual([3900, 3900, 1200]);
    // Each block holds the rows of its 13 (then 4) live blocks, so its time range is theirs …
    const groups = [all.slice(0, 13), all.slice(13, 26), all.slice(26)];
    expect(f.blocks.map((b) => [b.receivedMin, b.receivedMax])).toEqual(
      groups.map((g) => [g[0]!.cols.received[0], g[g.length - 1]!.cols.received[299]]),
    );
    // … ordered by protocol, destination port, then arrival.
    f.blocks.forEach((_, k) => {
      const b = f.readBlock(k);
      const key = (i: number): number[] => [b.cols.proto[i]!, b.cols.dstPort[i]!, b.cols.received[i]!];
      for (let i = 1; i < b.length; i++) {
        const [p0, d0, r0] = key(i - 1);
        const [p1, d1, r1] = key(i);
        expect(p1! > p0! || (p1 === p0 && (d1! > d0! || (d1 === d0 && r1! >= r0!)))).toBe(true);
      }
      expect(inAnyOrder(rowsOf([b]))).toEqual(inAnyOrder(rowsOf(groups[k]!)));
      // … and each block's index says so, for readers that bisect by protocol and port.
      expect(f.loadBlock(k).rowOrder).toBe(ROW_ORDER.protoDstPort);
    });
    f.close();
    expect(sealed.size).toBeLessThan(cur.size);
    expect(readdirSync(join(dir, 'flows/netflow'))).toEqual(['nfcapd.202603251000']);
  });

  it('seals an hour of large live blocks in place, in arrival order, and its blocks say so', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock, { blockRows: 256 });
    await w.start();
    const all = await writeMinutes(w, clock, 3, 256, 200);
    clock.t = H10 + 60_000;
    await w.tick();
    const sealed = listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!;
    expect(sealed.kind).toBe('sealed');
    const f = CaptureFile.open(sealed.path, { requireSealed: true });
    expect(f.blocks.map((b) => b.rows)).toEqual([256, 256, 256]);
    f.blocks.forEach((_, k) => {
      expect(rowsOf([f.readBlock(k)])).toEqual(rowsOf([all[k]!]));
      expect(f.loadBlock(k).rowOrder).toBe(ROW_ORDER.arrival);
    });
    f.close();
    await w.close();
  });

  it('reopens a sealed hour for rows that arrive late, and seals it again', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const sealed: HourSealedEvent[] = [];
    const w = makeWriter(dir, clock);
    w.onHourSealed((e) => void sealed.push(e));
    await w.start();
    const a = randomFlows(100, { received: H9 + 1000, seed: 1 });
    w.write('netflow', a);
    clock.t = H10 + 60_000;
    await w.tick();
    const late = randomFlows(50, { received: H9 + 3_000_000, seed: 2 }); // a clock step back, say
    w.write('netflow', late);
    expect(w.counters.hoursReopened).toBe(1);
    clock.advance(5000);
    await w.tick(); // over its end: sealed again
    expect(sealed.map((e) => e.flows)).toEqual([100, 150]);
    const [file] = listCaptureFiles(dir, 'netflow', 'Europe/Paris');
    expect(file!.kind).toBe('sealed');
    expect(inAnyOrder(readAll(file!.path))).toEqual(inAnyOrder(rowsOf([a, late])));
  });

  it('keeps running aggregates of the open hour equal to what the file holds', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock);
    await w.start();
    const b = randomFlows(5000, { received: H9, stepMs: 100, seed: 9 });
    w.write('netflow', b);
    w.flush();
    const view = w.openHourAggregates('netflow')!;
    expect(view.hourStart).toBe(H9);
    const t = view.aggregates.totals();
    let bytes = 0;
    let rst = 0;
    const perSrc = new Map<string, number>();
    for (let i = 0; i < b.length; i++) {
      bytes += b.cols.bytes[i]!;
      if (b.cols.proto[i] === 6 && b.cols.tcpFlags[i]! & 4) rst++; // denied_flows: TCP with RST, as nfdump's `flags R`
      const k = Buffer.from(b.srcAddr.subarray(i * 16, i * 16 + 16)).toString('hex');
      perSrc.set(k, (perSrc.get(k) ?? 0) + b.cols.bytes[i]!);
    }
    expect(t.flows).toBe(5000);
    expect(t.bytes).toBe(bytes);
    expect(t.rstFlows).toBe(rst);
    const topBytes = [...perSrc.values()].sort((x, y) => y - x).slice(0, 10);
    expect(view.aggregates.top('srcIp', 'bytes', 10).map((e) => e.bytes)).toEqual(topBytes);
    const protoFlows = view.aggregates.protocols().reduce((s, p) => s + p.flows, 0);
    expect(protoFlows).toBe(5000);
    const portFlows = view.aggregates.top('dstPort', 'flows', 10).reduce((s, p) => s + p.flows, 0);
    const tcpUdp = Array.from(b.cols.proto.subarray(0, b.length)).filter((p) => p === 6 || p === 17).length;
    expect(portFlows).toBe(tcpUdp); // 5 ports only, so the top 10 covers every TCP/UDP flow
  });

  it('keeps the open-hour aggregates whole over many early flushes read between writes', async () => {
    // Flushed rows wait for the aggregates in the batch they were written from, and emptied
    // batches are reused: reading the aggregates between writes must neither lose nor repeat rows.
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock, { blockRows: 1000 });
    await w.start();
    const all = randomFlows(12_345, { received: H9, stepMs: 50, seed: 21 });
    let bytes = 0;
    for (let from = 0, k = 0; from < all.length; from += 777, k++) {
      const part = slice(all, from, Math.min(all.length, from + 777));
      w.write('netflow', part);
      if (k % 3 === 0) w.openHourAggregates('netflow');
    }
    w.flush();
    for (let i = 0; i < all.length; i++) bytes += all.cols.bytes[i]!;
    const t = w.openHourAggregates('netflow')!.aggregates.totals();
    expect(t.flows).toBe(12_345);
    expect(t.bytes).toBe(bytes);
    expect(readAll(w.openHours()[0]!.path)).toHaveLength(12_345);
  });

  it('recovers an open file cut at any point: keeps every whole block, drops and counts the torn tail', async () => {
    const rnd = prng(42);
    for (let trial = 0; trial < 12; trial++) {
      const dir = tempDataDir();
      const clock = new FakeClock(H9);
      const w = makeWriter(dir, clock);
      await w.start();
      const batches: FlowBatch[] = [];
      const ends: number[] = [];
      for (let k = 0; k < 5; k++) {
        const b = randomFlows(200 + k * 37, { received: H9 + k * 100_000, seed: trial * 10 + k });
        batches.push(b);
        w.write('netflow', b);
        w.flush();
        ends.push(statSync(join(dir, 'flows/netflow/nfcapd.current.202603251000')).size);
      }
      await w.close(); // hour not over: file stays open
      const path = join(dir, 'flows/netflow/nfcapd.current.202603251000');
      const size = ends[4]!;
      const cut = Math.floor(rnd() * size);
      truncateSync(path, cut);
      const kept = ends.filter((e) => e <= cut).length;
      const w2 = makeWriter(dir, clock);
      await w2.start();
      expect(w2.counters.recoveredFiles).toBe(1);
      expect(w2.counters.recoveredDroppedBytes).toBe(kept === 5 ? 0 : cut - (kept ? ends[kept - 1]! : statSync(path).size));
      expect(readAll(path)).toEqual(rowsOf(batches.slice(0, kept)));
      // it goes on writing after the kept blocks
      const more = randomFlows(10, { received: H9 + 900_000, seed: 99 });
      w2.write('netflow', more);
      w2.flush();
      expect(readAll(path)).toEqual(rowsOf([...batches.slice(0, kept), more]));
      await w2.close();
    }
  });

  it('seals at start a file a crash left open for an hour that is over', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock);
    await w.start();
    const b = randomFlows(100, { received: H9 + 5, seed: 3 });
    w.write('netflow', b);
    w.flush();
    await w.close();
    clock.t = H10 + 3_600_000;
    const sealed: HourSealedEvent[] = [];
    const w2 = makeWriter(dir, clock);
    w2.onHourSealed((e) => void sealed.push(e));
    await w2.start();
    expect(sealed.map((e) => e.flows)).toEqual([100]);
    expect(readdirSync(join(dir, 'flows/netflow'))).toEqual(['nfcapd.202603251000']);
  });

  it('on a write error (disk full) logs and counts, keeps running, and leaves earlier blocks intact', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    let full = false;
    const errors: string[] = [];
    const cfs: CaptureFs = {
      ...nodeFs,
      writeSync(fd, buf, off, len, pos) {
        if (full) {
          // a partial write then ENOSPC, as a filling disk does
          nodeFs.writeSync(fd, buf, off, Math.min(len, 100), pos);
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        }
        return nodeFs.writeSync(fd, buf, off, len, pos);
      },
    };
    const w = makeWriter(dir, clock, { cfs, log: { info() {}, warn() {}, error: (_o, m) => void errors.push(m ?? '') } });
    await w.start();
    const a = randomFlows(300, { received: H9, seed: 1 });
    w.write('netflow', a);
    w.flush();
    full = true;
    w.write('netflow', randomFlows(300, { received: H9 + 1000, seed: 2 }));
    expect(() => w.flush()).not.toThrow();
    expect(w.counters.writeErrors).toBe(1);
    expect(w.counters.rowsLost).toBe(300);
    expect(errors).toHaveLength(1);
    const path = join(dir, 'flows/netflow/nfcapd.current.202603251000');
    expect(readAll(path)).toEqual(rowsOf([a]));
    full = false; // space again: writing resumes after the last good block
    const c = randomFlows(300, { received: H9 + 2000, seed: 3 });
    w.write('netflow', c);
    w.flush();
    expect(readAll(path)).toEqual(rowsOf([a, c]));
  });

  it('counts rows it cannot store when the directory is read-only, and does not throw', async () => {
    // chmod alone does not stop root (CI runs as root), so the fs also refuses writes, as a read-only mount would.
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    mkdirSync(join(dir, 'flows/netflow'), { recursive: true });
    chmodSync(join(dir, 'flows/netflow'), 0o555);
    const cfs: CaptureFs = {
      ...nodeFs,
      openSync(p, f) {
        if (f !== 'r') throw Object.assign(new Error(`EROFS: read-only file system, open '${p}'`), { code: 'EROFS' });
        return nodeFs.openSync(p, f);
      },
    };
    const w = makeWriter(dir, clock, { cfs });
    await w.start();
    expect(() => w.write('netflow', randomFlows(100, { received: H9, seed: 1 }))).not.toThrow();
    w.flush();
    expect(w.counters.rowsLost).toBe(100);
    expect(w.counters.writeErrors).toBeGreaterThan(0);
    chmodSync(join(dir, 'flows/netflow'), 0o755);
  });

  it('takes a batch the collector reuses: rows are copied at write()', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock);
    await w.start();
    const b = randomFlows(10, { received: H9, seed: 1 });
    const expected = rowsOf([slice(b, 0, 10)]);
    w.write('netflow', b);
    b.cols.bytes.fill(0);
    b.clear();
    w.flush();
    expect(readAll(listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!.path)).toEqual(expected);
  });

  it('keeps at most maxAggregationBacklogRows written rows waiting for the aggregates, however fast rows come', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = makeWriter(dir, clock, { blockRows: 1000, maxAggregationBacklogRows: 2500 });
    await w.start();
    const rows = randomFlows(12_000, { received: H9, stepMs: 1, seed: 8 });
    // Rows in small batches and no timer tick in between: only the flushes of full blocks run.
    for (let from = 0; from < rows.length; from += 500) w.write('netflow', slice(rows, from, from + 500));
    const [open] = w.openHours();
    expect(open!.rows).toBe(12_000);
    expect(open!.aggregationBacklog).toBeGreaterThan(0);
    expect(open!.aggregationBacklog).toBeLessThanOrEqual(2500);
    const totals = w.aggregatesFor('netflow', H9)!.totals();
    expect(totals.flows).toBe(12_000);
    expect(w.openHours()[0]!.aggregationBacklog).toBe(0);
  });

  it('after reopening a large sealed hour for late rows, reads its old rows back in the background, then counts them all', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9 + 3_700_000); // the hour is over, its rows are late
    const w = makeWriter(dir, clock, { blockRows: 1000, maxAggregationBacklogRows: 1000, sealGraceMs: 1_000_000 });
    await w.start();
    w.write('netflow', randomFlows(8000, { received: H9, stepMs: 1, seed: 9 }));
    await w.close({ sealAll: true });
    const again = makeWriter(dir, clock, { blockRows: 1000, maxAggregationBacklogRows: 1000, sealGraceMs: 1_000_000 });
    await again.start();
    clock.t = H9 + 60_000; // as if the clock were still in that hour
    again.write('netflow', randomFlows(1000, { received: H9 + 50_000, seed: 10 })); // reopens it, one block flushed
    // The 8 000 old rows are not read back yet: the hour's figures are to be taken from the file.
    expect(again.aggregatesFor('netflow', H9)).toBeUndefined();
    await again.recovered();
    expect(again.openHours()[0]!.rows).toBe(9000);
    expect(again.aggregatesFor('netflow', H9)!.totals().flows).toBe(9000);
    await again.close();
  });

  it('warms up at start without writing anything', async () => {
    const dir = tempDataDir();
    const w = makeWriter(dir, new FakeClock(H9), { warmUp: true });
    await w.start();
    expect(w.counters).toMatchObject({ rowsReceived: 0, rowsWritten: 0, blocksWritten: 0, hoursOpened: 0 });
    expect(listCaptureFiles(dir, 'netflow', 'Europe/Paris')).toEqual([]);
    expect(w.openHours()).toEqual([]);
  });

  describe('take (a batch the listener gives up)', () => {
    it('writes a batch of nearly a block as one block, after the rows already pending, and keeps every row in order', async () => {
      const dir = tempDataDir();
      const clock = new FakeClock(H9);
      const w = makeWriter(dir, clock, { blockRows: 1000 });
      await w.start();
      const early = randomFlows(30, { received: H9, seed: 1 });
      const big = randomFlows(950, { received: H9 + 1000, seed: 2 }); // ≥ 7/8 of a block
      const grown = new FlowBatch(1000); // the listener's batches have a block's room
      appendRows(grown, big, 0, 950);
      const half = randomFlows(600, { received: H9 + 2000, seed: 3 });
      const halfGrown = new FlowBatch(1000);
      appendRows(halfGrown, half, 0, 600);
      const tail = randomFlows(100, { received: H9 + 3000, seed: 4 });
      w.write('netflow', early);
      w.take('netflow', grown);
      // No flush interval passed: both were written because the batch was nearly a block.
      const path = listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!.path;
      let f = CaptureFile.open(path);
      expect(f.blocks.map((b) => b.rows)).toEqual([30, 950]);
      f.close();
      expect(readAll(path)).toEqual(rowsOf([early, big]));
      // A smaller batch becomes the pending rows; rows written after it follow it.
      w.take('netflow', halfGrown);
      w.write('netflow', tail);
      w.flush();
      f = CaptureFile.open(path);
      expect(f.blocks.map((b) => b.rows)).toEqual([30, 950, 700]);
      f.close();
      expect(readAll(path)).toEqual(rowsOf([early, big, half, tail]));
      expect(w.counters.rowsReceived).toBe(1680);
      expect(w.aggregatesFor('netflow', H9)!.totals().flows).toBe(1680);
    });

    it('gives a lent batch back once its rows are written and aggregated or its hour sealed, never before, and never touches it again', async () => {
      const dir = tempDataDir();
      const clock = new FakeClock(H9);
      const w = makeWriter(dir, clock, { blockRows: 1000 });
      await w.start();
      const lend = (rows: FlowBatch, room = 1000): { batch: FlowBatch; given: () => number } => {
        const batch = new FlowBatch(room);
        appendRows(batch, rows, 0, rows.length);
        let given = 0;
        batch.release = () => {
          given++;
          // What the listener does: the arrays leave for the decode thread, detached here from now on.
          const { numeric, addrs } = batch.buffers();
          structuredClone([...numeric, ...addrs], { transfer: [...numeric, ...addrs] });
        };
        return { batch, given: () => given };
      };
      const a = randomFlows(950, { received: H9 + 1000, seed: 5 });
      const b = randomFlows(600, { received: H9 + 2000, seed: 6 });
      const small = randomFlows(40, { received: H9 + 2500, seed: 7 });
      const lentA = lend(a);
      w.take('netflow', lentA.batch);
      // Written as a block at once, but its rows still wait for the open hour's aggregates.
      expect(lentA.given()).toBe(0);
      const lentB = lend(b);
      w.take('netflow', lentB.batch); // becomes the pending rows
      const lentSmall = lend(small, 64);
      w.take('netflow', lentSmall.batch); // less than a block's room: copied behind b's rows, given back at once
      expect(lentSmall.given()).toBe(1);
      // A query of the open hour brings the aggregates up to date: a is given back; b is still pending.
      expect(w.aggregatesFor('netflow', H9)!.totals().flows).toBe(950);
      expect([lentA.given(), lentB.given()]).toEqual([1, 0]);
      w.flush();
      expect(w.aggregatesFor('netflow', H9)!.totals().flows).toBe(950 + 600 + 40);
      expect([lentA.given(), lentB.given(), lentSmall.given()]).toEqual([1, 1, 1]);
      const path = listCaptureFiles(dir, 'netflow', 'Europe/Paris')[0]!.path;
      expect(readAll(path)).toEqual(rowsOf([a, b, small]));
      // Lent batches still in an hour when it is sealed (pending, or waiting for the
      // aggregates) go back too, and the sealed file holds their rows.
      const c = randomFlows(600, { received: H9 + 3000, seed: 8 });
      const d = randomFlows(950, { received: H9 + 4000, seed: 9 });
      const lentC = lend(c);
      const lentD = lend(d);
      w.take('netflow', lentC.batch); // pending
      w.flush(); // written, waiting for the aggregates
      w.take('netflow', lentD.batch); // written as a block at once, waiting too
      expect([lentC.given(), lentD.given()]).toEqual([0, 0]);
      clock.t = H10 + 120_000;
      await w.tick();
      expect([lentC.given(), lentD.given()]).toEqual([1, 1]);
      const sealed = listCaptureFiles(dir, 'netflow', 'Europe/Paris').find((f) => !f.path.includes('current'))!.path;
      expect(inAnyOrder(readAll(sealed))).toEqual(inAnyOrder(rowsOf([a, b, small, c, d])));
    });

    it('falls back to copying for batches that straddle an hour or are small, with the same rows written', async () => {
      const dir = tempDataDir();
      const clock = new FakeClock(H9 + 3_599_000);
      const w = makeWriter(dir, clock, { blockRows: 1000, sealGraceMs: 60_000 });
      await w.start();
      const straddling = randomFlows(200, { received: H9 + 3_599_000, stepMs: 10, seed: 3 }); // 100 rows each side of 10:00 UTC
      const small = randomFlows(5, { received: H10 + 5000, seed: 4 });
      const expected9 = rowsOf([slice(straddling, 0, 100)]);
      const expected10 = rowsOf([slice(straddling, 100, 200), small]);
      w.take('netflow', straddling);
      w.take('netflow', small);
      w.flush();
      const files = listCaptureFiles(dir, 'netflow', 'Europe/Paris');
      expect(files).toHaveLength(2);
      expect(readAll(files[0]!.path)).toEqual(expected9);
      expect(readAll(files[1]!.path)).toEqual(expected10);
    });
  });
});
