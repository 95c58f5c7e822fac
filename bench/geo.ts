/**
 * `npm run bench -- geo [--rounds 3] [--lookups 10000000] [--flows 1000000] [--only load,lookup,size] [--mmdb PATH]`
 *
 * Enrichment (issue 20.4): what a lookup at query time costs, against what columns written at
 * ingest would cost on disk.
 *   load    the tables in a fresh process per round (bench/geo-load.ts): ms per kind, table
 *           bytes, RSS growth; from the shipped CSVs, from the table cache, and (`--mmdb`) the
 *           country kind from a MaxMind DB;
 *   lookup  ns per asOf / countryOf over an address column: uniformly random IPv4 addresses,
 *           and IPv6 addresses drawn from the table's own ranges (uniform IPv6 would almost
 *           never hit one), `--lookups` per round;
 *   size    the B/flow four ingest-time columns (srcAs, dstAs u32; srcCountry, dstCountry u16)
 *           would add: the storage benchmark's hour (bench/capture-flows.ts), its internet-side
 *           addresses (the seed's documentation ranges) mapped host by host to random addresses
 *           of the AS table's ranges, private ones kept (AS 0), encoded as the capture writer
 *           encodes a u32/u16 column and compressed with zstd 3 per 65 536-row block.
 * Every round is printed on stderr as it ends; the table on stdout.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowBatch } from '../common/flow-batch.js';
import { createCodec } from '../storage/capture/codec.js';
import { encodeNumeric } from '../storage/capture/column-codec.js';
import { loadShippedTables, type GeoTables } from '../storage/geo/ip-location-db.js';
import { TableGeoLookup } from '../storage/geo/table-geo-lookup.js';
import { expandHour, loadSeedFlows, prng, SEED_FIXTURE } from './capture-flows.js';
import { fmt, log } from './lib.js';

interface Options {
  mmdb: string | undefined;
  rounds: number;
  lookups: number;
  flows: number;
  only: Set<string>;
}

function parseArgs(args: string[]): Options {
  const o: Options = {
    mmdb: undefined,
    rounds: 3,
    lookups: 10_000_000,
    flows: 1_000_000,
    only: new Set(['load', 'lookup', 'size']),
  };
  for (let i = 0; i < args.length; i++) {
    const v = args[i + 1];
    if (args[i] === '--rounds' && v) o.rounds = Number(args[++i]);
    else if (args[i] === '--lookups' && v) o.lookups = Number(args[++i]);
    else if (args[i] === '--flows' && v) o.flows = Number(args[++i]);
    else if (args[i] === '--only' && v) o.only = new Set(args[++i]!.split(','));
    else if (args[i] === '--mmdb' && v) o.mmdb = args[++i];
    else throw new Error(`unknown option ${args[i]}`);
  }
  return o;
}

const rows: [string, string][] = [];

interface LoadResult {
  asnMs?: number;
  asnCpuMs?: number;
  countryMs: number;
  countryCpuMs: number;
  tableMiB: number;
  rssMiB: number;
  rssKeptMiB: number;
  arrayBuffersKeptMiB: number;
  ranges: number[];
}

function loadChild(args: string[]): LoadResult {
  const child = fileURLToPath(new URL('./geo-load.js', import.meta.url));
  const res = spawnSync(process.execPath, ['--expose-gc', child, ...args], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`geo-load failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as LoadResult;
}

function loadRounds(o: Options): void {
  const cacheDir = mkdtempSync(join(tmpdir(), 'netsvc-geo-bench-'));
  const modes: [string, string[]][] = [
    ['shipped CSVs', []],
    ['table cache', ['--cache', cacheDir]],
  ];
  if (o.mmdb) modes.push([`MaxMind DB ${o.mmdb}`, ['--mmdb', o.mmdb]]);
  loadChild(['--cache', cacheDir]); // builds and writes the cache, untimed
  for (const [name, args] of modes) {
    const asn: string[] = [];
    const country: string[] = [];
    let last = '';
    for (let r = 1; r <= o.rounds; r++) {
      const m = loadChild(args);
      if (m.asnMs !== undefined) asn.push(`${m.asnCpuMs} (${m.asnMs})`);
      country.push(`${m.countryCpuMs} (${m.countryMs})`);
      last = `${m.tableMiB} MiB in typed arrays (ranges v4/v6: ${m.ranges.join(', ')}); RSS +${m.rssMiB} MiB after loading, +${m.rssKeptMiB} MiB after a GC (ArrayBuffers +${m.arrayBuffersKeptMiB} MiB)`;
      log(`load ${name} round ${r}: ${JSON.stringify(m)}`);
    }
    if (asn.length) rows.push([`load, fresh process, ${name}: AS, ms CPU (wall) by round`, asn.join(' / ')]);
    rows.push([`load, fresh process, ${name}: country, ms CPU (wall) by round`, country.join(' / ')]);
    rows.push([`  memory (last round)`, last]);
  }
  rmSync(cacheDir, { recursive: true, force: true });
}

/** `n` rows of uniformly random IPv4-mapped addresses. */
function randomV4(n: number, rnd: () => number): Uint8Array {
  const b = new FlowBatch(n);
  for (let i = 0; i < n; i++) b.setV4('srcAddr', b.addRow(), Math.floor(rnd() * 2 ** 32));
  return b.srcAddr.subarray(0, n * 16);
}

/** `n` rows of IPv6 addresses inside random ranges of `t` (a random address of a random range). */
function v6InTable(t: GeoTables, n: number, rnd: () => number): Uint8Array {
  const col = new Uint8Array(n * 16);
  const dv = new DataView(col.buffer);
  const s = t.v6.starts;
  for (let i = 0; i < n; i++) {
    const k = Math.floor(rnd() * t.v6.size) * 4;
    // The range's first /64 with random low 64 bits: inside the range for every range of /64 or wider,
    // and for narrower ones a neighbour that may miss (the search costs the same).
    dv.setUint32(i * 16, s[k]!);
    dv.setUint32(i * 16 + 4, s[k + 1]!);
    dv.setUint32(i * 16 + 8, Math.floor(rnd() * 2 ** 32));
    dv.setUint32(i * 16 + 12, Math.floor(rnd() * 2 ** 32));
  }
  return col;
}

function lookupRounds(o: Options): void {
  log('loading the shipped tables for the lookups');
  const tables = { asn: loadShippedTables('asn'), country: loadShippedTables('country') };
  const geo = new TableGeoLookup((k) => tables[k]);
  const rnd = prng(20);
  const colRows = Math.min(1_000_000, o.lookups);
  const passes = Math.max(1, Math.round(o.lookups / colRows));
  const workloads: [string, Uint8Array][] = [
    ['IPv4, uniformly random', randomV4(colRows, rnd)],
    ['IPv6, inside the AS table', v6InTable(tables.asn, colRows, rnd)],
  ];
  for (const [name, col] of workloads) {
    for (const kind of ['asOf', 'countryOf'] as const) {
      const ns: number[] = [];
      const wall: number[] = [];
      let hits = 0;
      for (let r = 1; r <= o.rounds; r++) {
        hits = 0;
        const t = performance.now();
        const cpu = process.cpuUsage();
        for (let p = 0; p < passes; p++) {
          for (let i = 0; i < colRows; i++) if (geo[kind](col, i) !== 0) hits++;
        }
        const used = process.cpuUsage(cpu);
        const count = passes * colRows;
        const wallNs = ((performance.now() - t) * 1e6) / count;
        // CPU time as well as wall time: on a shared 2-core machine under load, wall time counts other processes' turns.
        const cpuNs = ((used.user + used.system) * 1e3) / count;
        ns.push(cpuNs);
        wall.push(wallNs);
        log(`${kind} ${name} round ${r}: ${fmt(cpuNs)} ns CPU, ${fmt(wallNs)} ns wall per lookup over ${count} lookups`);
      }
      rows.push([
        `${kind}, ${name}: ns/lookup by round, CPU (wall) (${fmt((100 * hits) / (passes * colRows))} % known)`,
        ns.map((x, i) => `${fmt(x)} (${fmt(wall[i]!)})`).join(' / '),
      ]);
    }
  }
}

function sizeRun(o: Options): void {
  log(`expanding ${o.flows} flows`);
  const seed = loadSeedFlows(SEED_FIXTURE);
  const tables = { asn: loadShippedTables('asn'), country: loadShippedTables('country') };
  const geo = new TableGeoLookup((k) => tables[k]);
  const codec = createCodec('zstd', 3);
  const rnd = prng(7);
  const mapped = new Map<string, Uint8Array>();
  const publicFor = (addr: Uint8Array): Uint8Array => {
    const key = Buffer.from(addr).toString('hex');
    let out = mapped.get(key);
    if (!out) {
      out = new Uint8Array(16);
      const v4 = addr[10] === 0xff && addr[11] === 0xff;
      const dv = new DataView(out.buffer);
      if (v4) {
        const t = tables.asn.v4;
        const k = Math.floor(rnd() * t.size);
        out[10] = out[11] = 0xff;
        dv.setUint32(12, t.starts[k]! + Math.floor(rnd() * (t.ends[k]! - t.starts[k]! + 1)));
      } else {
        const t = tables.asn.v6;
        const k = Math.floor(rnd() * t.size) * 4;
        for (let w = 0; w < 2; w++) dv.setUint32(w * 4, t.starts[k + w]!);
        dv.setUint32(12, Math.floor(rnd() * 2 ** 32));
      }
      mapped.set(key, out);
    }
    return out;
  };
  // The seed's internet side: 203.0.113.0/24 (IPv4), 2001:db8:2::/48 and beyond (IPv6); its LAN stays private.
  const isInternet = (a: Uint8Array, o: number): boolean =>
    a[o + 10] === 0xff ? a[o + 12] === 203 : !(a[o + 4] === 0 && a[o + 5] === 0);
  const BLOCK = 65_536;
  const cols = {
    srcAs: new Uint32Array(BLOCK),
    dstAs: new Uint32Array(BLOCK),
    srcCountry: new Uint16Array(BLOCK),
    dstCountry: new Uint16Array(BLOCK),
  };
  const bytes = { srcAs: 0, dstAs: 0, srcCountry: 0, dstCountry: 0 };
  let n = 0;
  let total = 0;
  let known = 0;
  const flush = (): void => {
    for (const name of Object.keys(cols) as (keyof typeof cols)[]) {
      const t = encodeNumeric(cols[name], n, 'int');
      bytes[name] += t.bytes.length >= 32 ? Math.min(t.bytes.length, codec.compress(t.bytes).length) : t.bytes.length;
    }
    n = 0;
  };
  for (const batch of expandHour(seed, { count: o.flows, hourStart: Date.UTC(2026, 2, 25, 9) }, 4096)) {
    for (let i = 0; i < batch.length; i++) {
      for (const [col, as, cc] of [
        ['srcAddr', cols.srcAs, cols.srcCountry],
        ['dstAddr', cols.dstAs, cols.dstCountry],
      ] as const) {
        const a = batch[col];
        if (isInternet(a, i * 16)) a.set(publicFor(a.subarray(i * 16, i * 16 + 16)), i * 16);
        as[n] = geo.asOf(a, i);
        cc[n] = geo.countryOf(a, i);
        if (as[n] !== 0) known++;
      }
      n++;
      total++;
      if (n === BLOCK) flush();
    }
  }
  if (n > 0) flush();
  const per = (x: number): string => fmt(x / total, 3);
  const all = bytes.srcAs + bytes.dstAs + bytes.srcCountry + bytes.dstCountry;
  log(`size: ${total} flows, ${mapped.size} internet hosts, ${fmt((50 * known) / total)} % of addresses with an AS`);
  rows.push([
    `ingest-time columns, ${fmt(total, 0)} flows (${mapped.size} internet hosts; ${fmt((50 * known) / total)} % of addresses public): B/flow after zstd 3`,
    `srcAs ${per(bytes.srcAs)}, dstAs ${per(bytes.dstAs)}, srcCountry ${per(bytes.srcCountry)}, dstCountry ${per(bytes.dstCountry)}; all four ${per(all)}`,
  ]);
}

/** Runs the parts `--only` names (default all) and prints the table. */
export async function run(args: string[]): Promise<void> {
  const o = parseArgs(args);
  log(`geo bench: ${o.rounds} rounds, ${o.lookups} lookups per round`);
  if (o.only.has('load')) loadRounds(o);
  if (o.only.has('lookup')) lookupRounds(o);
  if (o.only.has('size')) sizeRun(o);
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
  await Promise.resolve();
}
