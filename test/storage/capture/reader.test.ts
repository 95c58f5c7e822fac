import { openSync, closeSync, writeSync, readSync, truncateSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type FlowBatch } from '../../../common/flow-batch.js';
import { totalsOfFiles } from '../../../storage/capture/aggregate.js';
import { nodeFs } from '../../../storage/capture/capture-fs.js';
import { ALL_COLUMNS, CaptureFileError } from '../../../storage/capture/format.js';
import { listCaptureFiles, newestFlows, newReadStats, scanFlows } from '../../../storage/capture/reader.js';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { FakeClock, randomFlows, rowOf, rowsOf, tempDataDir } from './flows.js';

const H9 = Date.UTC(2026, 2, 25, 9);
const H10 = H9 + 3_600_000;

/** Writes `blocks` blocks of `rows` rows into one sealed hour (no compaction: blockRows = rows). */
async function sealedHour(
  blocks: number,
  rows: number,
  seed = 1,
  v6 = 0.3,
): Promise<{ dir: string; path: string; batches: FlowBatch[] }> {
  const dir = tempDataDir();
  const clock = new FakeClock(H9);
  const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: rows, now: clock.now, timer: false });
  await w.start();
  const batches: FlowBatch[] = [];
  for (let k = 0; k < blocks; k++) {
    const b = randomFlows(rows, {
      received: H9 + k * (3_600_000 / blocks),
      stepMs: 3_600_000 / blocks / rows,
      seed: seed + k,
      v6,
    });
    batches.push(b);
    w.write('netflow', b);
  }
  clock.t = H10 + 60_000;
  await w.close();
  const [file] = listCaptureFiles(dir, 'netflow', 'UTC');
  return { dir, path: file!.path, batches };
}

function received(rows: Record<string, number | string>[]): number[] {
  return rows.map((r) => r.received as number);
}

describe('capture reader', () => {
  it('skips blocks outside the received-time window by their index', async () => {
    const { path, batches } = await sealedHour(12, 500);
    const stats = newReadStats();
    const from = H9 + 5 * 300_000 + 1000; // inside block 5
    const to = H9 + 7 * 300_000; // end of block 6
    const rows = rowsOf(scanFlows([path], { from, to, stats }));
    const expected = rowsOf(batches).filter((r) => (r.received as number) >= from && (r.received as number) < to);
    expect(rows).toEqual(expected);
    expect(stats.blocksRead).toBe(2);
    expect(stats.blocksSkipped).toBe(10);
  });

  it('decodes only the requested columns', async () => {
    const { path, batches } = await sealedHour(2, 300);
    const out = [...scanFlows([path], { columns: ['bytes'] })];
    expect(Array.from(out[0]!.cols.bytes.subarray(0, 300))).toEqual(Array.from(batches[0]!.cols.bytes.subarray(0, 300)));
    expect(out[0]!.cols.packets.subarray(0, 300).every((v) => v === 0)).toBe(true);
    expect(out[0]!.dstAddr.every((v) => v === 0)).toBe(true);
  });

  it('reads only the asked columns of a block from the file, and decodes them as a whole read does', async () => {
    const { path } = await sealedHour(2, 3000);
    const reads: number[] = [];
    const f = CaptureFile.open(path, {
      cfs: {
        ...nodeFs,
        readSync: (fd, b, o, l, p) => {
          reads.push(l);
          return nodeFs.readSync(fd, b, o, l, p);
        },
      },
    });
    try {
      const whole = f.readBlock(1, ALL_COLUMNS);
      reads.length = 0;
      // `end` is stored relative to `start`, and `start` to `received`: those come along.
      const loaded = f.loadBlock(1, ['end', 'dstPort', 'srcAddr']);
      const bytesRead = reads.reduce((a, b) => a + b, 0);
      expect(bytesRead).toBeLessThan(f.blocks[1]!.size / 2);
      const part = f.readBlock(1, ['end', 'dstPort', 'srcAddr'], undefined, 0, loaded);
      for (let i = 0; i < 3000; i += 97) {
        const a = rowOf(whole, i);
        const b = rowOf(part, i);
        for (const c of ['received', 'start', 'end', 'dstPort', 'srcAddr'] as const) expect(b[c]).toEqual(a[c]);
      }
      // Asking a partly read block for a column it was not read with is the caller's mistake, not damage.
      expect(() => f.readBlock(1, ['bytes'], undefined, 0, loaded)).toThrow(/not loaded/);
      expect(() => f.readBlock(1, ['bytes'], undefined, 0, loaded)).not.toThrow(CaptureFileError);
    } finally {
      f.close();
    }
  });

  it.each([0, 0.3, 1])(
    'returns the newest N flows of a window by start then received, reading few blocks (IPv6 share %s)',
    async (v6) => {
      const { path, batches } = await sealedHour(20, 1000, 1, v6);
      const all = rowsOf(batches);
      const from = H9 + 600_000;
      const to = H9 + 3_000_000;
      const expected = all
        .filter((r) => (r.received as number) >= from && (r.received as number) < to)
        .sort((a, b) => (b.start as number) - (a.start as number) || (b.received as number) - (a.received as number))
        .slice(0, 200);
      const stats = newReadStats();
      const got = newestFlows([path], { from, to, limit: 200, stats });
      expect(rowsOf([got])).toEqual(expected);
      expect(stats.blocksRead).toBeLessThanOrEqual(4);
    },
  );

  it('reads an open file while it is being written, and a file list mixing sealed and open hours', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H9);
    const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
    await w.start();
    const a = randomFlows(100, { received: H9 + 10, seed: 1 });
    const b = randomFlows(100, { received: H10 + 10, seed: 2 });
    w.write('netflow', a);
    clock.t = H10 + 60_000;
    await w.tick();
    w.write('netflow', b);
    w.flush();
    const files = listCaptureFiles(dir, 'netflow', 'UTC');
    expect(files.map((f) => f.kind)).toEqual(['sealed', 'current']);
    expect(rowsOf(scanFlows(files))).toEqual(rowsOf([a, b]));
    const newest = newestFlows(files, { limit: 1 });
    const bRows = rowsOf([b]).sort((x, y) => (y.start as number) - (x.start as number));
    expect(rowOf(newest, 0)).toEqual(bRows[0]);
    await w.close();
  });

  it('reports a file with a bad magic, a cut footer or a flipped byte with a typed error and a counter, and goes on', async () => {
    const good = await sealedHour(3, 200, 1);
    const badMagic = await sealedHour(3, 200, 10);
    const cut = await sealedHour(3, 200, 20);
    const flipped = await sealedHour(3, 200, 30);

    const fd = openSync(badMagic.path, 'r+');
    writeSync(fd, Buffer.from('XXXX'), 0, 4, 0);
    closeSync(fd);
    truncateSync(cut.path, statSync(cut.path).size - 10);
    // flip one byte inside the second block's column data
    const f = CaptureFile.open(flipped.path);
    const second = f.blocks[1]!;
    f.close();
    const fd2 = openSync(flipped.path, 'r+');
    const one = Buffer.alloc(1);
    const at = second.offset + second.size - 50;
    readSync(fd2, one, 0, 1, at);
    one[0] = one[0]! ^ 0xff;
    writeSync(fd2, one, 0, 1, at);
    closeSync(fd2);

    expect(() => CaptureFile.open(badMagic.path)).toThrow(CaptureFileError);
    try {
      CaptureFile.open(badMagic.path);
    } catch (err) {
      expect((err as CaptureFileError).code).toBe('bad-magic');
    }
    const files = [good, badMagic, cut, flipped].map((h) => listCaptureFiles(h.dir, 'netflow', 'UTC')[0]!);
    const stats = newReadStats();
    const errors: string[] = [];
    const rows = rowsOf(scanFlows(files, { stats, onError: (e) => void errors.push(e.code) }));
    expect(stats.corruptFiles).toBe(2); // bad magic; sealed file without its footer
    expect(stats.corruptBlocks).toBe(1);
    expect(errors.sort()).toEqual(['bad-checksum', 'bad-magic', 'truncated']);
    // the good file whole, and the two undamaged blocks of the flipped one
    expect(received(rows)).toEqual(received(rowsOf([...good.batches, flipped.batches[0]!, flipped.batches[2]!])));
    // Totals decode fewer columns; checksums are per column, so the damaged block counts only if
    // the flipped byte is in a column totals do not read. Either way no exception, no wrong file.
    expect([1000, 1200]).toContain(totalsOfFiles(files).all.flows);
  });
});
