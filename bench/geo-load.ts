/**
 * Child of `bench/geo.ts`: loads the shipped tables once in a fresh process (cold: no JIT,
 * no table in memory; the files are in the page cache after the first round) and prints one
 * JSON line: milliseconds per kind, the tables' bytes, and RSS / heap / ArrayBuffer growth,
 * right after loading and once the file buffers are collected.
 */
import { loadShippedTables } from '../storage/geo/ip-location-db.js';

const mb = (n: number): number => Math.round((n / 1048576) * 10) / 10;
const before = process.memoryUsage();
let t = performance.now();
let cpu = process.cpuUsage();
const asn = loadShippedTables('asn');
const asnMs = performance.now() - t;
const asnCpu = process.cpuUsage(cpu);
t = performance.now();
cpu = process.cpuUsage();
const country = loadShippedTables('country');
const countryMs = performance.now() - t;
const countryCpu = process.cpuUsage(cpu);
const after = process.memoryUsage();
// What stays once the file buffers are collected (the child runs with --expose-gc).
(globalThis as { gc?: () => void }).gc?.();
const kept = process.memoryUsage();
// CPU time beside wall time: on a shared machine under load the wall clock counts other processes' turns.
const cpuMs = (u: NodeJS.CpuUsage): number => Math.round((u.user + u.system) / 1000);
const tables = [asn.v4, asn.v6, country.v4, country.v6];
process.stdout.write(
  `${JSON.stringify({
    asnMs: Math.round(asnMs),
    asnCpuMs: cpuMs(asnCpu),
    countryMs: Math.round(countryMs),
    countryCpuMs: cpuMs(countryCpu),
    ranges: tables.map((x) => x.size),
    tableMiB: mb(tables.reduce((s, x) => s + x.byteLength, 0)),
    rssMiB: mb(after.rss - before.rss),
    rssKeptMiB: mb(kept.rss - before.rss),
    arrayBuffersKeptMiB: mb(kept.arrayBuffers - before.arrayBuffers),
    heapMiB: mb(after.heapUsed - before.heapUsed),
    arrayBuffersMiB: mb(after.arrayBuffers - before.arrayBuffers),
  })}\n`,
);
