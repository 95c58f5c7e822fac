/**
 * Child of `bench/geo.ts`: loads tables once in a fresh process (cold: no JIT, no table in
 * memory; the files are in the page cache after the first round) and prints one JSON line:
 * milliseconds per kind, the tables' bytes, and RSS / heap / ArrayBuffer growth, right after
 * loading and once the file buffers are collected (run with --expose-gc).
 *
 *   geo-load.js                 the shipped CSVs, both kinds
 *   geo-load.js --cache DIR     both kinds through the table cache in DIR (built there when absent)
 *   geo-load.js --mmdb PATH     the country kind from a MaxMind DB
 */
import type { GeoKind, GeoTables } from '../storage/geo/ip-location-db.js';
import { loadShippedTables, shippedTablePaths } from '../storage/geo/ip-location-db.js';
import { loadMmdbTables } from '../storage/geo/mmdb.js';
import { cachedTables, sourceKey } from '../storage/geo/table-cache.js';

const [mode, arg] = process.argv.slice(2);
const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
// CPU time beside wall time: on a shared machine under load the wall clock counts other processes' turns.
const cpuMs = (u: NodeJS.CpuUsage): number => Math.round((u.user + u.system) / 1000);

function load(kind: GeoKind): GeoTables {
  if (mode === '--mmdb') return loadMmdbTables(kind, arg!);
  if (mode === '--cache') {
    const files = Object.values(shippedTablePaths(kind));
    return cachedTables(arg!, kind, `bench|${sourceKey(files)}`, () => loadShippedTables(kind));
  }
  return loadShippedTables(kind);
}

const before = process.memoryUsage();
const out: Record<string, unknown> = {};
const tables: GeoTables[] = [];
for (const kind of mode === '--mmdb' ? (['country'] as const) : (['asn', 'country'] as const)) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  tables.push(load(kind));
  out[`${kind}Ms`] = Math.round(performance.now() - t);
  out[`${kind}CpuMs`] = cpuMs(process.cpuUsage(cpu));
}
const after = process.memoryUsage();
(globalThis as { gc?: () => void }).gc?.();
const kept = process.memoryUsage();
out.ranges = tables.flatMap((t) => [t.v4.size, t.v6.size]);
out.tableMiB = mb(tables.reduce((s, t) => s + t.v4.byteLength + t.v6.byteLength, 0));
out.rssMiB = mb(after.rss - before.rss);
out.rssKeptMiB = mb(kept.rss - before.rss);
out.arrayBuffersKeptMiB = mb(kept.arrayBuffers - before.arrayBuffers);
process.stdout.write(`${JSON.stringify(out)}\n`);
