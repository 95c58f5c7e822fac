/**
 * `npm run bench -- storage [--flows 1000000,10000000] [--no-nfdump] [--keep DIR]`
 *
 * Capture-file part of the storage benchmark (the KPI/API rows are added by
 * their owners). For each hour size it:
 *   1. expands real softflowd output into one hour of flows (bench/capture-flows.ts),
 *   2. writes it through CaptureWriter at live pacing (fake clock = received
 *      time, so blocks are flushed every 5 s of traffic as live) and measures
 *      the writer's CPU time per flow, the open file's size, the seal
 *      (compaction) time and the sealed size,
 *   3. reads: newest 200 flows of the hour and of its last minute, a full scan
 *      of every column, and the aggregates the KPI needs,
 *   4. sends the same flows as NetFlow v9 datagrams to a real nfcapd on
 *      127.0.0.1, converts its file to LZ4 (`nfdump -J 3`, what `nfcapd -y`
 *      writes), and times nfdump on it for the same questions.
 * Prints one table; figures go to bench/README.md.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FlowBatch } from '../common/flow-batch.js';
import { aggregateFiles } from '../storage/capture/aggregate.js';
import { listCaptureFiles, newestFlows, scanFlows } from '../storage/capture/reader.js';
import { CaptureWriter } from '../storage/capture/writer.js';
import { expandHour, loadSeedFlows, SEED_FIXTURE, type SeedFlow } from './capture-flows.js';
import { fmt, median } from './lib.js';
import { kpiRows } from './storage-kpi.js';

/** The hour the suite writes. */
export const HOUR = Date.UTC(2026, 2, 25, 9);

interface Row {
  label: string;
  netsvc: string;
  nfdump: string;
  ratio: string;
}

function timeIt(runs: number, fn: () => void): number {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = performance.now();
    fn();
    t.push(performance.now() - a);
  }
  return median(t);
}

function dirSize(dir: string): number {
  return readdirSync(dir).reduce((s, n) => s + statSync(join(dir, n)).size, 0);
}

/** Writes the hour through the writer at live pacing; returns timings and sizes. */
/** Writes `count` flows of one hour through CaptureWriter at live pacing; its timings. */
export async function writeHour(
  seed: SeedFlow[],
  count: number,
  dataDir: string,
  aggregates = true,
): Promise<Record<string, number>> {
  let clock = HOUR;
  const w = new CaptureWriter({
    dataDir,
    timezone: 'UTC',
    now: () => clock,
    timer: false,
    flushIntervalMs: 5000,
    blockRows: 65_536,
    codec: 'zstd',
    level: 3,
    aggregates,
  });
  await w.start();
  let writeMs = 0;
  let genMs = 0;
  let g = performance.now();
  for (const batch of expandHour(seed, { count, hourStart: HOUR }, 1024)) {
    const a = performance.now();
    genMs += a - g;
    clock = batch.cols.received[batch.length - 1]!;
    w.write('netflow', batch);
    await w.tick();
    g = performance.now();
    writeMs += g - a;
  }
  const a = performance.now();
  w.flush();
  // aggregation is deferred to ticks and queries: count what is left of it too
  w.openHourAggregates('netflow');
  writeMs += performance.now() - a;
  const dir = join(dataDir, 'flows/netflow');
  const openBytes = dirSize(dir);
  const blocksLive = w.counters.blocksWritten;
  clock = HOUR + 3_600_000 + 60_000;
  const s = performance.now();
  await w.tick();
  await w.settled();
  const sealMs = performance.now() - s;
  await w.close();
  const sealedBytes = dirSize(dir);
  return { writeMs, genMs, openBytes, sealedBytes, sealMs, blocksLive };
}

// ---------------------------------------------------------------- NetFlow v9 encoder (bench only)

const V9_FIELDS_V4: Array<[number, number]> = [
  [8, 4],
  [12, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [6, 1],
  [5, 1],
  [2, 4],
  [1, 8],
  [22, 4],
  [21, 4],
  [10, 2],
  [14, 2],
];
const V9_FIELDS_V6: Array<[number, number]> = [
  [27, 16],
  [28, 16],
  [7, 2],
  [11, 2],
  [4, 1],
  [6, 1],
  [5, 1],
  [2, 4],
  [1, 8],
  [22, 4],
  [21, 4],
  [10, 2],
  [14, 2],
];
const recLen = (f: Array<[number, number]>): number => f.reduce((s, [, l]) => s + l, 0);

function templateFlowSet(): Buffer {
  const parts: Buffer[] = [];
  for (const [id, fields] of [
    [256, V9_FIELDS_V4],
    [257, V9_FIELDS_V6],
  ] as const) {
    const t = Buffer.alloc(4 + fields.length * 4);
    t.writeUInt16BE(id, 0);
    t.writeUInt16BE(fields.length, 2);
    fields.forEach(([f, l], i) => {
      t.writeUInt16BE(f, 4 + i * 4);
      t.writeUInt16BE(l, 6 + i * 4);
    });
    parts.push(t);
  }
  const body = Buffer.concat(parts);
  const h = Buffer.alloc(4);
  h.writeUInt16BE(0, 0);
  h.writeUInt16BE(4 + body.length, 2);
  return Buffer.concat([h, body]);
}

/** Encodes rows as v9 datagrams of up to `perDatagram` records (one family per flowset). */
function* v9Datagrams(batch: FlowBatch, seq: { n: number }, perDatagram = 24): Generator<Buffer> {
  const boot = HOUR - 86_400_000;
  const tpl = templateFlowSet();
  const c = batch.cols;
  for (let from = 0; from < batch.length; from += perDatagram) {
    const to = Math.min(batch.length, from + perDatagram);
    const sets: Buffer[] = [];
    if (seq.n % 20 === 0) sets.push(tpl);
    for (const v6 of [false, true]) {
      const fields = v6 ? V9_FIELDS_V6 : V9_FIELDS_V4;
      const rows: number[] = [];
      for (let i = from; i < to; i++) if ((c.ipVersion[i] === 6) === v6) rows.push(i);
      if (!rows.length) continue;
      const len = 4 + rows.length * recLen(fields);
      const pad = (4 - (len % 4)) % 4;
      const b = Buffer.alloc(len + pad);
      b.writeUInt16BE(v6 ? 257 : 256, 0);
      b.writeUInt16BE(len + pad, 2);
      let o = 4;
      for (const i of rows) {
        if (v6) {
          b.set(batch.srcAddr.subarray(i * 16, i * 16 + 16), o);
          b.set(batch.dstAddr.subarray(i * 16, i * 16 + 16), o + 16);
          o += 32;
        } else {
          b.set(batch.srcAddr.subarray(i * 16 + 12, i * 16 + 16), o);
          b.set(batch.dstAddr.subarray(i * 16 + 12, i * 16 + 16), o + 4);
          o += 8;
        }
        b.writeUInt16BE(c.srcPort[i]!, o);
        b.writeUInt16BE(c.dstPort[i]!, o + 2);
        b.writeUInt8(c.proto[i]!, o + 4);
        b.writeUInt8(c.tcpFlags[i]!, o + 5);
        b.writeUInt8(c.tos[i]!, o + 6);
        b.writeUInt32BE(c.packets[i]!, o + 7);
        b.writeBigUInt64BE(BigInt(c.bytes[i]!), o + 11);
        b.writeUInt32BE(c.start[i]! - boot, o + 19);
        b.writeUInt32BE(c.end[i]! - boot, o + 23);
        b.writeUInt16BE(c.inputIf[i]!, o + 27);
        b.writeUInt16BE(c.outputIf[i]!, o + 29);
        o += 31;
      }
      sets.push(b);
    }
    const now = c.received[to - 1]!;
    const h = Buffer.alloc(20);
    h.writeUInt16BE(9, 0);
    h.writeUInt16BE(to - from + (seq.n % 20 === 0 ? 2 : 0), 2);
    h.writeUInt32BE(now - boot, 4);
    h.writeUInt32BE(Math.floor(now / 1000), 8);
    h.writeUInt32BE(seq.n++ >>> 0, 12);
    h.writeUInt32BE(1, 16);
    yield Buffer.concat([h, ...sets]);
  }
}

/** Sends the hour to a fresh nfcapd; returns its directory, or undefined when nfcapd is missing. */
async function nfcapdHour(seed: SeedFlow[], count: number, work: string, ratePerSec: number): Promise<string | undefined> {
  if (spawnSync('nfcapd', ['-V']).error) return undefined;
  const dir = join(work, 'nfcapd');
  mkdirSync(dir, { recursive: true });
  const port = 30000 + Math.floor(Math.random() * 20000);
  const proc = spawn('nfcapd', ['-w', dir, '-b', '127.0.0.1', '-p', String(port), '-t', '3600', '-B', '8388608'], {
    stdio: 'ignore',
  });
  try {
    await sleep(700);
    const sock = createSocket('udp4');
    const seq = { n: 0 };
    let sent = 0;
    const t0 = performance.now();
    for (const batch of expandHour(seed, { count, hourStart: HOUR }, 1024)) {
      for (const d of v9Datagrams(batch, seq)) {
        await new Promise<void>((res, rej) => sock.send(d, port, '127.0.0.1', (e) => (e ? rej(e) : res())));
        sent++;
        // pace: nfcapd on a shared 2-core box is lossless well below 60 000 datagrams/s
        const due = (sent / ratePerSec) * 1000;
        const ahead = due - (performance.now() - t0);
        if (ahead > 5) await sleep(ahead);
      }
    }
    sock.close();
    await sleep(1000);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
  return dir;
}

function nfdumpTime(args: string[]): { ms: number; out: string } {
  const t = performance.now();
  const r = spawnSync('nfdump', args, { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, TZ: 'UTC' } });
  return { ms: performance.now() - t, out: r.stdout };
}

/** Runs the suite. */
export async function run(args: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const sizes = (get('--flows') ?? '1000000,10000000').split(',').map(Number);
  const withNfdump = !args.includes('--no-nfdump');
  const seed = loadSeedFlows(SEED_FIXTURE);
  for (const count of sizes) {
    const work = get('--keep') ?? mkdtempSync(join(tmpdir(), 'netsvc-bench-storage-'));
    mkdirSync(work, { recursive: true });
    const rows: Row[] = [];
    const bare = await writeHour(seed, count, join(work, 'no-aggregates'), false);
    rmSync(join(work, 'no-aggregates'), { recursive: true, force: true });
    const w = await writeHour(seed, count, work);
    const files = listCaptureFiles(work, 'netflow', 'UTC');
    const last200 = timeIt(7, () => newestFlows(files, { limit: 200 }));
    const lastMinute = timeIt(7, () => newestFlows(files, { limit: 200, from: HOUR + 3_540_000, to: HOUR + 3_600_000 }));
    let scanned = 0;
    const scanMs = timeIt(1, () => {
      for (const b of scanFlows(files)) scanned += b.length;
    });
    let aggMs = 0;
    const agg = (() => {
      const t = performance.now();
      const a = aggregateFiles(files);
      aggMs = performance.now() - t;
      return a;
    })();
    agg.top('srcIp', 'bytes', 10);

    let nf:
      { flows: number; rawBytes: number; lz4Bytes: number; tops: number; newest: number; scan: number; file: string } | undefined;
    if (withNfdump) {
      const dir = await nfcapdHour(seed, count, work, count > 2_000_000 ? 30_000 : 20_000);
      if (dir) {
        const [file] = readdirSync(dir).filter((n) => n.startsWith('nfcapd.') && !n.includes('current'));
        if (file) {
          const path = join(dir, file);
          const info = nfdumpTime(['-r', path, '-I']).out;
          const flows = Number(/Flows: (\d+)/.exec(info)?.[1] ?? 0);
          const rawBytes = statSync(path).size;
          spawnSync('nfdump', ['-r', path, '-J', '3']);
          const lz4Bytes = statSync(path).size;
          const tops = nfdumpTime([
            '-r',
            path,
            '-q',
            '-n',
            '10',
            '-s',
            'srcip/bytes',
            '-s',
            'dstip/bytes',
            '-s',
            'dstport/flows',
          ]).ms;
          // nfdump has no "newest first": sort the last minute by start and keep the tail (the issue's measurement)
          const lastMinute = '2026/03/25.09:59:00-2026/03/25.10:00:00';
          const newest = nfdumpTime(['-r', path, '-q', '-t', lastMinute, '-O', 'tstart']).ms;
          const scan = nfdumpTime(['-r', path, '-q', '-o', 'csv', '-c', String(count)]);
          nf = { flows, rawBytes, lz4Bytes, tops, newest, scan: scan.ms, file: path };
        }
      }
    }
    const ratio = (ours: number, theirs: number | undefined, higherBetter = false): string =>
      theirs === undefined ? '' : `${fmt(higherBetter ? ours / theirs : theirs / ours, 1)}×`;
    rows.push({
      label: 'disk, open hour (live 5 s blocks), B/flow',
      netsvc: fmt(w.openBytes! / count, 2),
      nfdump: nf ? `${fmt(nf.lz4Bytes / nf.flows, 2)} (LZ4)` : '',
      ratio: nf ? ratio(w.openBytes! / count, nf.lz4Bytes / nf.flows) : '',
    });
    rows.push({
      label: 'disk, sealed hour, B/flow',
      netsvc: fmt(w.sealedBytes! / count, 2),
      nfdump: nf ? `${fmt(nf.rawBytes / nf.flows, 2)} (uncompressed)` : '',
      ratio: nf ? ratio(w.sealedBytes! / count, nf.lz4Bytes / nf.flows) : '',
    });
    rows.push({
      label: 'writer, flows/s (one core, with aggregates)',
      netsvc: fmt(count / (w.writeMs! / 1000), 0),
      nfdump: '',
      ratio: '',
    });
    rows.push({
      label: 'writer, flows/s (one core, aggregates off)',
      netsvc: fmt(count / (bare.writeMs! / 1000), 0),
      nfdump: '',
      ratio: '',
    });
    rows.push({ label: 'seal (compaction + fsync), ms', netsvc: fmt(w.sealMs!, 0), nfdump: '', ratio: '' });
    rows.push({ label: 'newest 200 flows of the hour, ms', netsvc: fmt(last200, 2), nfdump: '', ratio: '' });
    rows.push({
      label: 'newest 200 of the last minute, ms',
      netsvc: fmt(lastMinute, 2),
      nfdump: nf ? `${fmt(nf.newest, 0)} (-t minute -O tstart)` : '',
      ratio: nf ? ratio(lastMinute, nf.newest) : '',
    });
    rows.push({
      label: 'full scan, all columns, M flows/s',
      netsvc: fmt(scanned / scanMs / 1000, 2),
      nfdump: nf ? `${fmt(nf.flows / nf.scan / 1000, 2)} (-o csv)` : '',
      ratio: nf ? ratio(scanned / scanMs, nf.flows / nf.scan, true) : '',
    });
    rows.push({
      label: 'KPI aggregates (totals, proto, src/dst IP, port), ms',
      netsvc: fmt(aggMs, 0),
      nfdump: nf ? `${fmt(nf.tops, 0)} (3 × -s)` : '',
      ratio: nf ? ratio(aggMs, nf.tops) : '',
    });
    // KPI cache and netflow API rows (bench/storage-kpi.ts).
    rows.push(...(await kpiRows(work, HOUR, nf)));
    console.log(
      `\ncapture files, ${count.toLocaleString('en-US')} flows in one hour (softflowd v9 seed expanded; ${agg.size('srcIp').toLocaleString('en-US')} distinct sources)${nf ? `; nfcapd stored ${nf.flows.toLocaleString('en-US')} flows` : ''}`,
    );
    console.log(`blocks while open: ${w.blocksLive}; generation time excluded (${fmt(w.genMs! / 1000, 1)} s)`);
    const wl = Math.max(...rows.map((r) => r.label.length));
    const wn = Math.max(8, ...rows.map((r) => r.netsvc.length));
    const wf = Math.max(8, ...rows.map((r) => r.nfdump.length));
    console.log(`${'measure'.padEnd(wl)} | ${'netsvc'.padStart(wn)} | ${'nfdump 1.7'.padStart(wf)} | ratio`);
    console.log(`${'-'.repeat(wl)}-|-${'-'.repeat(wn)}-|-${'-'.repeat(wf)}-|------`);
    for (const r of rows) console.log(`${r.label.padEnd(wl)} | ${r.netsvc.padStart(wn)} | ${r.nfdump.padStart(wf)} | ${r.ratio}`);
    if (!get('--keep')) rmSync(work, { recursive: true, force: true });
  }
}
