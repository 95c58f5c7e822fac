/**
 * `npm run bench -- flow-filter [--rows N] [--rounds R]`: the compiled filter's
 * `select` over N synthetic flows (default 10 M), as a filtered query scans an
 * hour: block by block, 65 536 rows each (8 distinct blocks cycled, so the
 * columns do not all sit in cache). Prints ns/row and ms per N rows for each
 * filter and round, and the share of rows selected. No I/O, no peer: decoding
 * the columns is the reader's cost and is not in these figures.
 */
import { FlowBatch } from '../common/flow-batch.js';
import { compileFilter, type CompiledFilter } from '../storage/flow-query/filter-compile.js';
import { parseFilter } from '../storage/flow-query/filter-parse.js';
import type { GeoLookup } from '../storage/geo/geo-lookup.js';
import { fmt, log, median } from './lib.js';

const BLOCK_ROWS = 65_536;
const BLOCKS = 8;

/** Typical operator filters: one column, a few columns, addresses, lists, negations. */
const FILTERS = [
  'proto tcp',
  'dst port 443',
  'src net 10.0.0.0/8',
  'host 10.1.2.3',
  'net 2001:db8::/32',
  'proto tcp and dst port in [ 80 443 8080 ]',
  'port in [ 22 25 53 80 110 143 443 993 995 8080 ]',
  'flags S and not flags A',
  'not (proto udp and port 53) and bytes > 1k',
  'src net 10.0.0.0/8 and not dst net 10.0.0.0/8 and (proto tcp or proto udp) and packets > 1',
  'src as 64500',
];

/** xorshift32 in [0, 1), so every run measures the same rows. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

/** A block of flows shaped like an access network's: 80 % IPv4 (half from 10/8), TCP-heavy, well-known server ports. */
function syntheticBlock(seed: number): FlowBatch {
  const rnd = rng(seed);
  const b = new FlowBatch(BLOCK_ROWS);
  const c = b.cols;
  const v6 = new Uint8Array(16);
  v6.set([0x20, 0x01, 0x0d, 0xb8]);
  const ports = [80, 443, 443, 443, 53, 22, 8080, 993, 123, 25];
  for (let r = 0; r < BLOCK_ROWS; r++) {
    const i = b.addRow();
    const six = rnd() < 0.2;
    c.ipVersion[i] = six ? 6 : 4;
    if (six) {
      v6[15] = Math.floor(rnd() * 256);
      b.setV6('srcAddr', i, v6, 0);
      v6[15] = Math.floor(rnd() * 256);
      b.setV6('dstAddr', i, v6, 0);
    } else {
      const inside = (): number => (0x0a000000 | Math.floor(rnd() * 0x10000)) >>> 0;
      const outside = (): number => (0xc6336400 + Math.floor(rnd() * 0x1000000)) >>> 0;
      const outbound = rnd() < 0.5;
      b.setV4('srcAddr', i, outbound ? inside() : outside());
      b.setV4('dstAddr', i, outbound ? outside() : inside());
    }
    b.setV4('exporter', i, 0xc0a80001);
    const p = rnd();
    c.proto[i] = p < 0.7 ? 6 : p < 0.95 ? 17 : 1;
    const server = ports[Math.floor(rnd() * ports.length)]!;
    const client = 1024 + Math.floor(rnd() * 64000);
    const toServer = rnd() < 0.5;
    c.srcPort[i] = toServer ? client : server;
    c.dstPort[i] = toServer ? server : client;
    c.tcpFlags[i] = c.proto[i] === 6 ? Math.floor(rnd() * 64) : 0;
    c.packets[i] = 1 + Math.floor(rnd() * rnd() * 1000);
    c.bytes[i] = c.packets[i]! * (40 + Math.floor(rnd() * 1400));
    c.srcAs[i] = rnd() < 0.5 ? 0 : 64500 + Math.floor(rnd() * 4);
    c.dstAs[i] = 64496;
    c.inputIf[i] = 1 + Math.floor(rnd() * 4);
    c.outputIf[i] = 1 + Math.floor(rnd() * 4);
  }
  return b;
}

/** A stand-in GeoLookup (a table lookup's cost): AS from the address's last byte. */
const geo: GeoLookup = {
  asOf: (col, row) => 64500 + (col[row * 16 + 15]! & 3),
  countryOf: () => 0,
};

function oneRound(
  f: CompiledFilter,
  blocks: readonly FlowBatch[],
  rows: number,
  out: Uint32Array,
): { ms: number; cpuMs: number; selected: number } {
  let selected = 0;
  let done = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let k = 0; done < rows; k++) {
    const b = blocks[k % blocks.length]!;
    const n = Math.min(b.length, rows - done);
    selected += f.select(b, 0, n, out);
    done += n;
  }
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return { ms: wall, cpuMs: (cpu.user + cpu.system) / 1000, selected };
}

export async function run(args: string[]): Promise<void> {
  let rows = 10_000_000;
  let rounds = 5;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--rows') rows = Number(args[++i]);
    else if (args[i] === '--rounds') rounds = Number(args[++i]);
  }
  log(`building ${BLOCKS} blocks of ${BLOCK_ROWS} rows`);
  const blocks = Array.from({ length: BLOCKS }, (_, k) => syntheticBlock(k + 1));
  const out = new Uint32Array(BLOCK_ROWS);
  console.log(
    `flow-filter: select over ${fmt(rows / 1e6, 1)} M rows (blocks of ${BLOCK_ROWS}), ${rounds} rounds; node ${process.version}`,
  );
  console.log(
    [
      'filter',
      'selected',
      'wall ns/row per round',
      'median',
      'CPU ns/row per round',
      'median',
      `median wall ms/${fmt(rows / 1e6, 0)} M`,
    ].join('\t'),
  );
  for (const text of FILTERS) {
    const f = compileFilter(parseFilter(text), { geo });
    oneRound(f, blocks, Math.min(rows, 2 * BLOCK_ROWS * BLOCKS), out); // warm-up: let V8 optimise the loop
    const ms: number[] = [];
    const cpuMs: number[] = [];
    let selected = 0;
    for (let r = 0; r < rounds; r++) {
      const res = oneRound(f, blocks, rows, out);
      ms.push(res.ms);
      cpuMs.push(res.cpuMs);
      selected = res.selected;
      log(`${text}: round ${r + 1} ${fmt((res.ms * 1e6) / rows, 2)} ns/row`);
    }
    const perRow = ms.map((m) => fmt((m * 1e6) / rows, 2));
    const cpuPerRow = cpuMs.map((m) => fmt((m * 1e6) / rows, 2));
    console.log(
      [
        text,
        `${fmt((100 * selected) / rows, 1)} %`,
        perRow.join(' '),
        fmt((median(ms) * 1e6) / rows, 2),
        cpuPerRow.join(' '),
        fmt((median(cpuMs) * 1e6) / rows, 2),
        fmt(median(ms), 0),
      ].join('\t'),
    );
  }
  await Promise.resolve();
}
