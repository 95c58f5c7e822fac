import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatAddress, type FlowBatch } from '../../../common/flow-batch.js';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { ALL_COLUMNS, BLOCK_HEADER_SIZE, ROW_ORDER } from '../../../storage/capture/format.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { listCaptureFiles, newReadStats } from '../../../storage/capture/reader.js';
import { parseDimensions, DimensionError } from '../../../storage/flow-query/dimensions.js';
import { compileFilter } from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import { FlowAnalytics, FlowAnalyticsBusyError } from '../../../storage/flow-query/flow-analytics.js';
import { flowPage, newestOnDisk, snapshotEnd, type FlowCursor } from '../../../storage/flow-query/flow-pages.js';
import { series } from '../../../storage/flow-query/series.js';
import { countMatching, topN, type Metric } from '../../../storage/flow-query/top-n.js';
import { randomFlows, slice } from '../capture/flows.js';

const H9 = Date.UTC(2026, 2, 25, 9);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * One hour of random flows written in blocks of 512 rows; the batch kept for the reference answers.
 * `edit` changes the batch before it is written.
 */
async function hourOfFlows(
  n = 6000,
  seed = 7,
  spanMs = 3_600_000,
  edit?: (batch: FlowBatch) => void,
): Promise<{ dir: string; batch: FlowBatch; writer: CaptureWriter }> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-fq-'));
  dirs.push(dir);
  const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 512, now: () => H9 + 59 * 60_000, timer: false });
  await writer.start();
  // A few repeated addresses and ports, so groups have more than one flow.
  const batch = randomFlows(n, { received: H9, stepMs: spanMs / n, seed });
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) batch.srcAddr.set(batch.srcAddr.subarray(((i * 7) % 40) * 16, ((i * 7) % 40) * 16 + 16), i * 16);
    if (i % 3 === 0) batch.cols.ipVersion[i] = batch.cols.ipVersion[(i * 7) % 40]!;
  }
  edit?.(batch);
  writer.write('netflow', batch);
  writer.flush();
  return { dir, batch, writer };
}

function scanOf(dir: string, from: number, to: number) {
  return { files: listCaptureFiles(dir, 'netflow', 'UTC'), from, to, stats: newReadStats() };
}

/** Rows of the batch received in [from, to). */
function rowsIn(batch: FlowBatch, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < batch.length; i++) if (batch.cols.received[i]! >= from && batch.cols.received[i]! < to) out.push(i);
  return out;
}

/** The reference: a Map from the key text to counts, computed row by row from the batch. */
function reference(batch: FlowBatch, rows: number[], keyOf: (i: number) => string) {
  const m = new Map<string, { flows: number; packets: number; bytes: number; first: number; last: number }>();
  for (const i of rows) {
    const k = keyOf(i);
    const e = m.get(k) ?? { flows: 0, packets: 0, bytes: 0, first: Infinity, last: -Infinity };
    e.flows++;
    e.packets += batch.cols.packets[i]!;
    e.bytes += batch.cols.bytes[i]!;
    e.first = Math.min(e.first, batch.cols.start[i]!);
    e.last = Math.max(e.last, batch.cols.end[i]!);
    m.set(k, e);
  }
  return m;
}

function prefix24(batch: FlowBatch, i: number): string {
  const text = formatAddress(batch.srcAddr, i);
  if (batch.cols.ipVersion[i] === 4) return `${text.split('.').slice(0, 3).join('.')}.0/24`;
  // /64: the first four groups
  const o = i * 16;
  const g: string[] = [];
  for (let k = 0; k < 8; k += 2) g.push(((batch.srcAddr[o + k]! << 8) | batch.srcAddr[o + k + 1]!).toString(16));
  return `${g.join(':')}::/64`;
}

describe('top-N over capture files', () => {
  const cases: Array<{ by: string; keyOf: (b: FlowBatch, i: number) => string }> = [
    { by: 'src_ip', keyOf: (b, i) => formatAddress(b.srcAddr, i) },
    { by: 'dst_port', keyOf: (b, i) => String(b.cols.dstPort[i]) },
    { by: 'proto', keyOf: (b, i) => String(b.cols.proto[i]) },
    { by: 'input_if', keyOf: (b, i) => String(b.cols.inputIf[i]) },
    { by: 'exporter', keyOf: (b, i) => formatAddress(b.exporter, i) },
    { by: 'src_ip/24', keyOf: prefix24 },
    // IPv4 exporters send IPv6 flows too: the prefix follows the exporter's address, not the flow's version.
    { by: 'exporter/24', keyOf: (b, i) => `${formatAddress(b.exporter, i).split('.').slice(0, 3).join('.')}.0/24` },
    { by: 'proto,dst_port', keyOf: (b, i) => `${b.cols.proto[i]}|${b.cols.dstPort[i]}` },
    { by: 'dst_as,tos,tcp_flags', keyOf: (b, i) => `${b.cols.dstAs[i]}|${b.cols.tos[i]}|${b.cols.tcpFlags[i]}` },
  ];
  for (const { by, keyOf } of cases) {
    for (const metric of ['bytes', 'flows'] as Metric[]) {
      it(`by ${by} and ${metric}: the rows are the reference's largest groups, and rows + other = total`, async () => {
        const { dir, batch } = await hourOfFlows();
        // A window that cuts blocks: 09:10 to 09:50.
        const from = H9 + 10 * 60_000;
        const to = H9 + 50 * 60_000;
        const t = await topN(scanOf(dir, from, to), parseDimensions(by), metric, 15, { times: true });
        const ref = reference(batch, rowsIn(batch, from, to), (i) => keyOf(batch, i));
        const ranked = [...ref.entries()].sort((a, b) => b[1][metric] - a[1][metric]);
        expect(t.rows).toHaveLength(Math.min(15, ref.size));
        expect(t.groups).toBe(ref.size);
        // Each row's counts are its group's exactly; the metrics descend as the reference's do.
        for (const r of t.rows) {
          const key = r.key.map(String).join('|');
          expect(ref.get(key), key).toEqual({ flows: r.flows, packets: r.packets, bytes: r.bytes, first: r.first, last: r.last });
        }
        expect(t.rows.map((r) => r[metric])).toEqual(ranked.slice(0, t.rows.length).map(([, v]) => v[metric]));
        const sum = (f: 'flows' | 'packets' | 'bytes') => t.rows.reduce((a, r) => a + r[f], 0) + t.other[f];
        expect({ flows: sum('flows'), packets: sum('packets'), bytes: sum('bytes') }).toEqual(t.total);
        expect(t.total.flows).toBe(rowsIn(batch, from, to).length);
      });
    }
  }

  it('with a filter: a selective one (other columns decoded for the matching rows only) and a broad one agree with the reference', async () => {
    const { dir, batch } = await hourOfFlows();
    const from = H9 + 10 * 60_000;
    const to = H9 + 50 * 60_000;
    for (const [text, keep] of [
      ['dst port 53', (i: number) => batch.cols.dstPort[i] === 53],
      ['not dst port 53', (i: number) => batch.cols.dstPort[i] !== 53],
      ['proto udp and dst port 53', (i: number) => batch.cols.dstPort[i] === 53 && batch.cols.proto[i] === 17],
    ] as const) {
      const filter = compileFilter(parseFilter(text));
      // Grouped by a column the filter reads too: a selective filter must hand over its values as well.
      const t = await topN({ ...scanOf(dir, from, to), filter }, parseDimensions('dst_port,proto'), 'bytes', 20, {
        times: true,
      });
      const rows = rowsIn(batch, from, to).filter(keep);
      const ref = reference(batch, rows, (i) => `${batch.cols.dstPort[i]}|${batch.cols.proto[i]}`);
      expect(t.total.flows, text).toBe(rows.length);
      expect(t.groups, text).toBe(ref.size);
      for (const r of t.rows) {
        expect(ref.get(r.key.join('|')), text).toEqual({
          flows: r.flows,
          packets: r.packets,
          bytes: r.bytes,
          first: r.first,
          last: r.last,
        });
      }
    }
  });

  it('rejects unknown dimensions, too many, a prefix on a port, and a bad prefix length, naming the part', () => {
    expect(() => parseDimensions('src_ip,colour')).toThrow(/unknown dimension 'colour'/);
    expect(() => parseDimensions('src_ip,dst_ip,proto,tos')).toThrow(/at most 3/);
    expect(() => parseDimensions('dst_port/24')).toThrow(DimensionError);
    expect(() => parseDimensions('src_ip/33')).toThrow(/prefix length '33'/);
    expect(() => parseDimensions('src_ip,src_ip')).toThrow(/twice/);
  });
});

describe('count of matches', () => {
  it('counts what the filter selects: blocks taken whole, counted from their stored columns, cut by the window, or read for addresses', async () => {
    // Two blocks of one protocol only: 'proto udp' takes them whole, without reading a row.
    const { dir, batch, writer } = await hourOfFlows(4000, 11, 3_600_000, (b) => b.cols.proto.fill(17, 1024, 2048));
    const src = formatAddress(batch.srcAddr, 5);
    for (const text of [
      'proto udp',
      'dst port 53',
      'proto udp and dst port < 1024',
      'not port 53',
      `src ip ${src}`,
      'bytes > 1000',
    ]) {
      const filter = compileFilter(parseFilter(text));
      for (const [from, to] of [
        [H9, H9 + 3_600_000],
        [H9 + 7 * 60_000 + 1, H9 + 41 * 60_000 + 7],
      ] as const) {
        const rows = rowsIn(batch, from, to);
        const out = new Uint32Array(batch.length);
        const n = filter.select(batch, 0, batch.length, out);
        const kept = new Set(out.subarray(0, n));
        const stats = newReadStats();
        expect(await countMatching({ ...scanOf(dir, from, to), stats, filter }), `${text} ${from}`).toBe(
          rows.filter((i) => kept.has(i)).length,
        );
        expect(stats.rowsRead, text).toBeGreaterThan(0);
      }
    }
    await writer.close();
  });
});

describe('over a sealed hour, its blocks ordered by protocol and destination port', () => {
  /**
   * An hour written in small live blocks and sealed: sealing merges them into blocks of up to
   * 16 000 rows ordered by protocol and port, which readers bisect. A third of the rows get any
   * port, so that a block holds common ports in long runs and many others in short ones.
   */
  async function sealedHour(): Promise<{ dir: string; batch: FlowBatch }> {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-fq-'));
    dirs.push(dir);
    let now = H9 + 59 * 60_000;
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 16_384, now: () => now, timer: false });
    await writer.start();
    const n = 40_000;
    const batch = randomFlows(n, { received: H9, stepMs: 3_000_000 / n, seed: 21 });
    for (let i = 0; i < n; i++) {
      if (i % 3 === 0) batch.cols.dstPort[i] = (i * 7919) % 65536;
      // Three protocols (a bisection asks more verdicts per protocol a block holds), and one block
      // of one protocol only: the bisection's first verdict takes or drops it whole.
      batch.cols.proto[i] = i >= 16_000 && i < 32_000 ? 17 : [6, 17, 1][i % 3]!;
    }
    for (let at = 0; at < n; at += 1000) {
      writer.write('netflow', slice(batch, at, Math.min(n, at + 1000)));
      writer.flush();
    }
    now = H9 + 61 * 60_000;
    await writer.close();
    const [file] = listCaptureFiles(dir, 'netflow', 'UTC');
    const f = CaptureFile.open(file!.path, { requireSealed: true });
    expect(f.blocks.map((_, k) => f.loadBlock(k).rowOrder)).toEqual(f.blocks.map(() => ROW_ORDER.protoDstPort));
    f.close();
    return { dir, batch };
  }

  const filters: Array<[string, (b: FlowBatch, i: number) => boolean]> = [
    ['dst port 443', (b, i) => b.cols.dstPort[i] === 443],
    ['proto tcp', (b, i) => b.cols.proto[i] === 6],
    ['proto udp and dst port 53', (b, i) => b.cols.proto[i] === 17 && b.cols.dstPort[i] === 53],
    ['not dst port 53', (b, i) => b.cols.dstPort[i] !== 53],
    ['dst port > 1024 and dst port < 2000', (b, i) => b.cols.dstPort[i]! > 1024 && b.cols.dstPort[i]! < 2000],
    ['proto udp or dst port 22', (b, i) => b.cols.proto[i] === 17 || b.cols.dstPort[i] === 22],
    ['dst port in [80 443 123]', (b, i) => [80, 443, 123].includes(b.cols.dstPort[i]!)],
    ['dst port 443 and bytes > 5000', (b, i) => b.cols.dstPort[i] === 443 && b.cols.bytes[i]! > 5000],
    ['port 53', (b, i) => b.cols.dstPort[i] === 53 || b.cols.srcPort[i] === 53],
    ['proto icmp and not tos 8', (b, i) => b.cols.proto[i] === 1 && b.cols.tos[i] !== 8],
    ['dst port 80 and flags S', (b, i) => b.cols.dstPort[i] === 80 && b.cols.proto[i] === 6 && (b.cols.tcpFlags[i]! & 2) !== 0],
  ];

  it('counts, top-N and pages of flows equal the reference for filters on protocol, port and more', async () => {
    const { dir, batch } = await sealedHour();
    for (const [text, keep] of filters) {
      const filter = compileFilter(parseFilter(text));
      for (const [from, to] of [
        [H9, H9 + 3_600_000],
        [H9 + 7 * 60_000 + 1, H9 + 41 * 60_000 + 7],
      ] as const) {
        const rows = rowsIn(batch, from, to).filter((i) => keep(batch, i));
        expect(await countMatching({ ...scanOf(dir, from, to), filter }), `count ${text} ${from}`).toBe(rows.length);
        const t = await topN({ ...scanOf(dir, from, to), filter }, parseDimensions('dst_port,proto'), 'bytes', 1000, {
          times: true,
        });
        const ref = reference(batch, rows, (i) => `${batch.cols.dstPort[i]}|${batch.cols.proto[i]}`);
        expect(t.total.flows, `top ${text} ${from}`).toBe(rows.length);
        expect(t.groups, `top ${text} ${from}`).toBe(ref.size);
        for (const r of t.rows) {
          expect(ref.get(r.key.join('|')), `top ${text} ${from}`).toEqual({
            flows: r.flows,
            packets: r.packets,
            bytes: r.bytes,
            first: r.first,
            last: r.last,
          });
        }
      }
      // Every matching flow once across pages, newest first.
      const seen: number[] = [];
      let cursor: FlowCursor | undefined;
      for (let page = 0; page < 1000; page++) {
        const p = await flowPage(
          { ...scanOf(dir, H9, H9 + 3_600_000), filter },
          { order: 'time', limit: 1000, cursor, total: null },
        );
        for (const f of p.flows) seen.push(f.received * 65536 + f.srcPort);
        if (!p.next) break;
        cursor = p.next;
      }
      const expected = rowsIn(batch, H9, H9 + 3_600_000)
        .filter((i) => keep(batch, i))
        .map((i) => batch.cols.received[i]! * 65536 + batch.cols.srcPort[i]!);
      expect(
        seen.sort((a, b) => a - b),
        `pages ${text}`,
      ).toEqual(expected.sort((a, b) => a - b));
    }
  });
});

describe('over a damaged block ordered by protocol and destination port', () => {
  it('skips and counts it in the count and in a top-N alike, where the bisection decides every row without decoding the filter', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-fq-'));
    dirs.push(dir);
    let now = H9 + 59 * 60_000;
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 8192, now: () => now, timer: false });
    await writer.start();
    // TCP to ports 80 and 443, half each, all on input interface 3: sealed into one block whose
    // halves the bisection's first split decides ('in if 3' holds for the whole block).
    const batch = randomFlows(8000, { received: H9, stepMs: 100, seed: 5 });
    for (let i = 0; i < batch.length; i++) {
      batch.cols.proto[i] = 6;
      batch.cols.dstPort[i] = i % 2 === 0 ? 80 : 443;
      batch.cols.inputIf[i] = 3;
    }
    for (let at = 0; at < batch.length; at += 1000) {
      writer.write('netflow', slice(batch, at, at + 1000));
      writer.flush();
    }
    now = H9 + 61 * 60_000;
    await writer.close();
    const [info] = listCaptureFiles(dir, 'netflow', 'UTC');
    const file = CaptureFile.open(info!.path);
    expect(file.blocks.map((_, k) => file.loadBlock(k).rowOrder)).toEqual([ROW_ORDER.protoDstPort]);
    const at = file.blocks[0]!.offset + BLOCK_HEADER_SIZE;
    const inputIf = file.loadBlock(0).columns.find((c) => ALL_COLUMNS[c.id] === 'inputIf')!;
    file.close();
    const filter = compileFilter(parseFilter('dst port 443 and in if 3'));
    // Before the damage: every TCP/443 flow.
    expect(await countMatching({ ...scanOf(dir, H9, H9 + 3_600_000), filter })).toBe(4000);
    const bytes = readFileSync(info!.path);
    bytes[at + inputIf.offset] = bytes[at + inputIf.offset]! ^ 0xff;
    writeFileSync(info!.path, bytes);
    const counted = newReadStats();
    const n = await countMatching({ ...scanOf(dir, H9, H9 + 3_600_000), stats: counted, filter });
    const grouped = newReadStats();
    const t = await topN({ ...scanOf(dir, H9, H9 + 3_600_000), stats: grouped, filter }, parseDimensions('dst_port'), 'flows', 5);
    expect({ n, corrupt: counted.corruptBlocks }).toEqual({ n: 0, corrupt: 1 });
    expect({ n: t.total.flows, corrupt: grouped.corruptBlocks }).toEqual({ n: 0, corrupt: 1 });
  });
});

describe('count of matches over a damaged block', () => {
  it('skips and counts it as damaged, as a scan that decodes it does, also where every row of it matches', async () => {
    const { dir, writer } = await hourOfFlows(4000, 11, 3_600_000, (b) => b.cols.proto.fill(17, 1024, 1536));
    await writer.close();
    // One byte of block 2's protocol column (one value: 'proto udp' takes the block whole) flipped.
    const [info] = listCaptureFiles(dir, 'netflow', 'UTC');
    const file = CaptureFile.open(info!.path);
    const at = file.blocks[2]!.offset + BLOCK_HEADER_SIZE;
    const proto = file.loadBlock(2).columns.find((c) => ALL_COLUMNS[c.id] === 'proto')!;
    file.close();
    const bytes = readFileSync(info!.path);
    bytes[at + proto.offset] = bytes[at + proto.offset]! ^ 0xff;
    writeFileSync(info!.path, bytes);
    for (const text of ['proto udp', 'proto udp and dst port < 1024']) {
      const filter = compileFilter(parseFilter(text));
      const counted = newReadStats();
      const n = await countMatching({ ...scanOf(dir, H9, H9 + 3_600_000), stats: counted, filter });
      const decoded = newReadStats();
      const t = await topN({ ...scanOf(dir, H9, H9 + 3_600_000), stats: decoded, filter }, parseDimensions('proto'), 'flows', 5);
      expect(n, text).toBe(t.total.flows);
      expect(counted.corruptBlocks, text).toBe(1);
      expect(decoded.corruptBlocks, text).toBe(1);
    }
  });
});

describe('series over capture files', () => {
  it('lines + other add up to the total at every step, and the steps to the window total', async () => {
    const { dir, batch } = await hourOfFlows();
    const from = H9;
    const to = H9 + 3_600_000;
    const s = await series(scanOf(dir, from, to), { dims: parseDimensions('dst_port'), metric: 'bytes', n: 3, step: '5m' });
    expect(s.points).toHaveLength(12);
    expect(s.lines).toHaveLength(3);
    s.points.forEach((_, k) => {
      const parts = s.lines.reduce((a, l) => a + l.values[k]!, 0) + s.other[k]!;
      expect(parts).toBe(s.total[k]);
    });
    const total = s.total.reduce((a, b) => a + b, 0);
    const ref = rowsIn(batch, from, to).reduce((a, i) => a + batch.cols.bytes[i]!, 0);
    expect(total).toBe(ref);
    // The same groups, in the same order, as top-N gives for the window.
    const t = await topN(scanOf(dir, from, to), parseDimensions('dst_port'), 'bytes', 3);
    expect(s.lines.map((l) => [l.key, l.total])).toEqual(t.rows.map((r) => [r.key, r.bytes]));
  });

  it('without dimensions gives totals per step; a 1-minute step puts each flow in its minute', async () => {
    const { dir, batch } = await hourOfFlows(3000);
    const s = await series(scanOf(dir, H9, H9 + 3_600_000), { dims: [], metric: 'flows', n: 10, step: '1m' });
    expect(s.points).toHaveLength(60);
    const perMinute = new Array<number>(60).fill(0);
    for (let i = 0; i < batch.length; i++) perMinute[Math.floor((batch.cols.received[i]! - H9) / 60_000)]!++;
    expect(s.total).toEqual(perMinute);
    expect(s.lines).toEqual([]);
  });
});

describe('flow pages', () => {
  const identity = (b: FlowBatch, i: number): string =>
    [
      b.cols.received[i],
      b.cols.start[i],
      formatAddress(b.srcAddr, i),
      formatAddress(b.dstAddr, i),
      b.cols.srcPort[i],
      b.cols.bytes[i],
    ].join('|');

  async function allPages(dir: string, order: 'time' | 'bytes', limit: number, between?: (page: number) => Promise<void>) {
    const first = scanOf(dir, H9, H9 + 3_600_000);
    const asOf = snapshotEnd(first, newestOnDisk, H9 + 60 * 60_000);
    const total = await countMatching({ ...first, to: asOf });
    const seen: string[] = [];
    let cursor: FlowCursor | undefined;
    for (let page = 0; page < 10_000; page++) {
      const p = await flowPage(scanOf(dir, H9, asOf), { order, limit, cursor, total });
      for (const f of p.flows) seen.push([f.received, f.start, f.srcIp, f.dstIp, f.srcPort, f.bytes].join('|'));
      if (order === 'time')
        for (let k = 1; k < p.flows.length; k++) expect(p.flows[k - 1]!.start).toBeGreaterThanOrEqual(p.flows[k]!.start);
      if (!p.next) break;
      cursor = p.next;
      await between?.(page);
    }
    return { seen, total, asOf };
  }

  for (const order of ['time', 'bytes'] as const) {
    it(`by ${order}: every flow exactly once across pages, and the count of matches`, async () => {
      const { dir, batch } = await hourOfFlows(1500);
      const { seen, total, asOf } = await allPages(dir, order, 97);
      // The open hour's snapshot ends at the newest received time on disk (exclusive).
      const expected = rowsIn(batch, H9, asOf).map((i) => identity(batch, i));
      expect(expected.length).toBe(batch.length - 1);
      expect(total).toBe(expected.length);
      expect(seen.sort()).toEqual(expected.sort());
    });
  }

  it('rows equal in every field are each handed out once, even across a page boundary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-fq-'));
    dirs.push(dir);
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 64, now: () => H9 + 30 * 60_000, timer: false });
    await writer.start();
    const one = randomFlows(1, { received: H9 + 1000, seed: 3 });
    for (let k = 0; k < 25; k++) writer.write('netflow', one);
    // A later flow, so that the 25 are inside the open hour's snapshot.
    writer.write('netflow', randomFlows(1, { received: H9 + 5000, seed: 4 }));
    writer.flush();
    const { seen } = await allPages(dir, 'time', 4);
    expect(seen).toHaveLength(25);
    await writer.close();
  });

  it('flows arriving while a client pages are outside its snapshot, and the pages stay exact', async () => {
    // The first 30 minutes are on disk; later flows arrive (received after them) while the client pages.
    const { dir, batch, writer } = await hourOfFlows(1200, 7, 30 * 60_000);
    let extra = 0;
    const { seen, total, asOf } = await allPages(dir, 'time', 50, async (page) => {
      // Later flows of the same hour arrive between pages (some with old start times).
      const more = randomFlows(40, { received: H9 + 31 * 60_000 + page * 1000, stepMs: 5, seed: 100 + page });
      writer.write('netflow', more);
      writer.flush();
      extra += more.length;
    });
    expect(extra).toBeGreaterThan(0);
    const expected = rowsIn(batch, H9, asOf).map((i) => identity(batch, i));
    expect(expected.length).toBe(batch.length - 1);
    expect(total).toBe(expected.length);
    expect(seen.sort()).toEqual(expected.sort());
    await writer.close();
  });
});

describe('the snapshot of a first page', () => {
  it('leaves out the newest received millisecond while more may arrive in it, and takes it in once settled', async () => {
    // The last flows on disk share one received time, as one datagram's flows do.
    const { dir, batch, writer } = await hourOfFlows(600, 9, 30 * 60_000);
    const last = batch.cols.received[batch.length - 1]!;
    const burst = randomFlows(25, { received: last + 1000, stepMs: 0, seed: 11 });
    writer.write('netflow', burst);
    writer.flush();
    const newest = last + 1000;
    const scan = scanOf(dir, H9, H9 + 3_600_000);
    const settledMs = 6000;

    const early = snapshotEnd(scan, newestOnDisk, newest + 500, settledMs);
    expect(early).toBe(newest);
    expect(await countMatching({ ...scan, to: early })).toBe(batch.length);

    const settled = snapshotEnd(scan, newestOnDisk, newest + settledMs + 1, settledMs);
    expect(settled).toBe(newest + 1);
    expect(await countMatching({ ...scan, to: settled })).toBe(batch.length + burst.length);
    await writer.close();
  });
});

describe('FlowAnalytics under load', () => {
  it('refuses queries beyond the running and waiting slots, and answers the others', async () => {
    const { dir } = await hourOfFlows(3000);
    const a = new FlowAnalytics({ dataDir: dir, timezone: 'UTC', now: () => H9, maxRunning: 1, maxWaiting: 1 });
    const q = {
      source: 'netflow',
      from: H9,
      to: H9 + 3_600_000,
      by: parseDimensions('src_ip'),
      metric: 'bytes' as const,
      limit: 5,
    };
    const results = await Promise.allSettled([a.top(q), a.top(q), a.top(q)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(FlowAnalyticsBusyError);
    // The slots are free again afterwards.
    expect((await a.top(q)).total.flows).toBe(3000);
  });

  it('gives the event loop turns while it scans, so other requests are answered meanwhile', async () => {
    const { dir } = await hourOfFlows(20_000);
    const a = new FlowAnalytics({ dataDir: dir, timezone: 'UTC', now: () => H9 });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await a.top({
      source: 'netflow',
      from: H9,
      to: H9 + 3_600_000,
      by: parseDimensions('src_ip,dst_port'),
      metric: 'bytes',
      limit: 5,
    });
    clearInterval(timer);
    // 20 000 rows in 512-row blocks: about 40 blocks, a turn every two.
    expect(ticks).toBeGreaterThan(5);
  });
});

describe('ranking groups', () => {
  it('among many groups equal to the n-th value, keeps the smallest keys, in key order', async () => {
    const { HashGroups, topSlots, FLOWS } = await import('../../../storage/flow-query/group-table.js');
    const g = new HashGroups(2);
    const keys = new Uint32Array(2);
    const zero = Float64Array.of(0);
    // 50 000 groups of one flow each, keys in a shuffled order; one group of two flows.
    const order = Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 50_000);
    for (const k of order) {
      keys[0] = k % 7;
      keys[1] = k;
      g.addRows(keys, 1, Uint32Array.of(0), { bytes: zero, packets: zero });
    }
    keys[0] = 49_999 % 7;
    keys[1] = 49_999;
    g.addRows(keys, 1, Uint32Array.of(0), { bytes: zero, packets: zero });
    const out = new Uint32Array(2);
    const top = topSlots(g, FLOWS, 4).map((s) => {
      g.key(s, out, 0);
      return [out[0], out[1], g.value(s, FLOWS)];
    });
    expect(top).toEqual([
      [5, 49_999, 2],
      [0, 0, 1],
      [0, 7, 1],
      [0, 14, 1],
    ]);
  });
});
