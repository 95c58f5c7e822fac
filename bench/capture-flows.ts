/**
 * Realistic flow hours for the storage benchmark, expanded from real exporter output.
 *
 * The seed is softflowd 1.1.0's NetFlow v9 export of flow-oracle traffic as
 * nfdump decoded it (`fixtures/capture/softflowd-v9-seed7-flows.csv.gz`,
 * see the README there). Each pass over the seed keeps every flow's protocol,
 * service port, TCP flags, packets, bytes and duration, and maps its
 * addresses and ephemeral ports into a much larger population (Zipf-skewed,
 * so a few hosts carry most of the traffic, as on a real link). Received
 * times spread over the hour in datagram-sized groups (softflowd packs ~24
 * v9 records per datagram), and a flow ends shortly before it is exported.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { FlowBatch } from '../common/flow-batch.js';

/** One seed flow, as softflowd exported it. */
export interface SeedFlow {
  v6: boolean;
  src: Uint8Array; // 16 bytes, IPv4-mapped for IPv4
  dst: Uint8Array;
  srcPort: number;
  dstPort: number;
  proto: number;
  tcpFlags: number;
  packets: number;
  bytes: number;
  durationMs: number;
}

/** Path of the committed seed (found from dist/bench or bench/, whatever the working directory). */
export const SEED_FIXTURE =
  [
    fileURLToPath(new URL('../../fixtures/capture/softflowd-v9-seed7-flows.csv.gz', import.meta.url)),
    fileURLToPath(new URL('../fixtures/capture/softflowd-v9-seed7-flows.csv.gz', import.meta.url)),
  ].find((p) => existsSync(p)) ?? 'fixtures/capture/softflowd-v9-seed7-flows.csv.gz';

function parseAddress(text: string): Uint8Array {
  const out = new Uint8Array(16);
  if (!text.includes(':')) {
    const parts = text.split('.').map(Number);
    out[10] = 0xff;
    out[11] = 0xff;
    parts.forEach((p, i) => (out[12 + i] = p));
    return out;
  }
  const [head = '', tail = ''] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = text.includes('::') && tail ? tail.split(':') : [];
  const words = [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  words.forEach((w, i) => {
    const v = parseInt(w, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  return out;
}

/** nfdump 1.7 prints flags in 8 positions `CEUAPRSF`; bits are FIN=1 … CWR=128. */
function parseFlags(text: string): number {
  let v = 0;
  for (let i = 0; i < 8; i++) if (text[i] !== '.') v |= 1 << (7 - i);
  return v;
}

/** Reads the seed flows (nfdump `flows.csv` of flow-oracle, gzip). */
export function loadSeedFlows(path: string): SeedFlow[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').trim().split('\n');
  const out: SeedFlow[] = [];
  for (const line of lines.slice(1)) {
    const f = line.split(',');
    if (f.length < 11) continue;
    out.push({
      v6: f[2]!.includes(':'),
      src: parseAddress(f[2]!),
      dst: parseAddress(f[3]!),
      srcPort: Number(f[4]),
      dstPort: Number(f[5]),
      proto: Number(f[6]),
      tcpFlags: parseFlags(f[7]!),
      packets: Number(f[8]),
      bytes: Number(f[9]),
      durationMs: Math.round(Number(f[10]) * 1000),
    });
  }
  return out;
}

/** Small fast deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash32(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

/** Options of one expanded hour. */
export interface ExpandOptions {
  /** Flows in the hour. */
  count: number;
  /** Hour start, ms since epoch. */
  hourStart: number;
  /** Size of the host population addresses are drawn from (Zipf-skewed). */
  hosts?: number;
  seed?: number;
}

/**
 * Yields the hour as FlowBatches of up to `batchRows` rows, in received order,
 * as a collector would hand them to the writer.
 */
export function* expandHour(seed: SeedFlow[], opts: ExpandOptions, batchRows = 4096): Generator<FlowBatch> {
  const hosts = opts.hosts ?? Math.max(1000, Math.floor(opts.count / 10));
  const rnd = prng(opts.seed ?? 1);
  const exporter = parseAddress('127.0.0.1');
  const addrKey = new Map<string, number>();
  const keyOf = (a: Uint8Array): number => {
    const k = Buffer.from(a).toString('hex');
    let id = addrKey.get(k);
    if (id === undefined) addrKey.set(k, (id = addrKey.size + 1));
    return id;
  };
  const seedKeys = seed.map((f) => [keyOf(f.src), keyOf(f.dst)] as const);
  // Zipf-like: index = hosts * u^3 puts most traffic on few hosts, a long tail on the rest.
  const mapAddr = (
    batch: FlowBatch,
    col: 'srcAddr' | 'dstAddr',
    row: number,
    orig: Uint8Array,
    key: number,
    round: number,
    group: number,
  ): void => {
    const u = hash32(key * 7919 + round, group) / 4294967296;
    const idx = Math.floor(hosts * u * u * u);
    if (orig[10] === 0xff && orig[11] === 0xff) {
      // keep the original /16 family so private/public ranges stay plausible
      const second = (orig[13]! + (idx >>> 16)) & 0xff;
      batch.setV4(col, row, ((orig[12]! << 24) | (second << 16) | (idx & 0xffff)) >>> 0);
    } else {
      const a = batch[col];
      a.set(orig, row * 16);
      a[row * 16 + 12] = (idx >>> 24) & 0xff;
      a[row * 16 + 13] = (idx >>> 16) & 0xff;
      a[row * 16 + 14] = (idx >>> 8) & 0xff;
      a[row * 16 + 15] = idx & 0xff;
    }
  };
  const ephemeral = (port: number, round: number, group: number): number =>
    port >= 1024 && port !== 3306 && port !== 3389 && port !== 5432 && port !== 6379 && port !== 8080 && port !== 8443
      ? 1024 + (hash32(port * 31 + round, group) % 64512)
      : port;

  let batch = new FlowBatch(batchRows);
  let received = opts.hourStart;
  const step = 3_600_000 / opts.count;
  let datagramLeft = 0;
  // Conversations (runs of 8 adjacent seed flows, which keep both directions
  // of a session together) are drawn at random, so the hour is not the seed
  // repeated, which a compressor would notice.
  let base = 0;
  let round = 0;
  for (let j = 0; j < opts.count; j++) {
    if (j % 8 === 0) {
      base = Math.floor(rnd() * Math.floor(seed.length / 8)) * 8;
      round = j >> 3;
    }
    const i = base + (j % 8);
    const f = seed[i]!;
    const keys = seedKeys[i]!;
    const group = 0; // one conversation maps its addresses and ports alike
    if (datagramLeft === 0) {
      datagramLeft = 24;
      received = Math.max(received, Math.floor(opts.hourStart + j * step));
    }
    datagramLeft--;
    const r = batch.addRow();
    const c = batch.cols;
    c.received[r] = received;
    const end = received - Math.floor(rnd() * 15_000);
    c.end[r] = end;
    // durations and payload sizes vary from one instance of a conversation to the next
    c.start[r] = end - Math.floor(f.durationMs * (0.5 + rnd()));
    c.bytes[r] = f.packets > 1 ? f.bytes + Math.floor(rnd() * f.bytes * 0.5) : f.bytes;
    c.packets[r] = f.packets;
    c.srcPort[r] = ephemeral(f.srcPort, round, group);
    c.dstPort[r] = ephemeral(f.dstPort, round, group);
    c.proto[r] = f.proto;
    c.tcpFlags[r] = f.tcpFlags;
    c.ipVersion[r] = f.v6 ? 6 : 4;
    c.samplingInterval[r] = 1;
    mapAddr(batch, 'srcAddr', r, f.src, keys[0], round, group);
    mapAddr(batch, 'dstAddr', r, f.dst, keys[1], round, group);
    batch.exporter.set(exporter, r * 16);
    if (batch.length === batchRows) {
      yield batch;
      batch = new FlowBatch(batchRows);
    }
  }
  if (batch.length > 0) yield batch;
}
