/**
 * What the benchmarks share: progress lines, a scratch database per run on
 * MariaDB or PostgreSQL (`logviewer`, `hotspot`), timing a query many times
 * for its percentiles, and the median and number format of the storage tables.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';

/** The servers a database benchmark loads. */
export type BenchDialect = 'mysql' | 'postgres';

/** Server URLs without a database name (`--mysql`, `--postgres`). */
export interface BenchServers {
  mysqlUrl: string;
  postgresUrl: string;
}

/** The servers on this machine that the benchmarks load unless `--mysql`/`--postgres` name others. */
export const LOCAL_SERVERS: BenchServers = {
  mysqlUrl: 'mysql://root@127.0.0.1:3306',
  postgresUrl: 'postgres://postgres@127.0.0.1:5432',
};

/** A progress line on stderr, so stdout holds only the table. */
export function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
}

/** Creates database `name` on the dialect's server; answers its URL. */
export async function createDatabase(dialect: BenchDialect, servers: BenchServers, name: string): Promise<string> {
  if (dialect === 'mysql') {
    const conn = await mysql.createConnection({ uri: servers.mysqlUrl });
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
    await conn.end();
    return `${servers.mysqlUrl}/${name}`;
  }
  const c = new pg.Client({ connectionString: `${servers.postgresUrl}/postgres` });
  await c.connect();
  await c.query(`CREATE DATABASE "${name}"`);
  await c.end();
  return `${servers.postgresUrl}/${name}`;
}

/** Drops database `name` (PostgreSQL: even with connections still open). */
export async function dropDatabase(dialect: BenchDialect, servers: BenchServers, name: string): Promise<void> {
  if (dialect === 'mysql') {
    const conn = await mysql.createConnection({ uri: servers.mysqlUrl });
    await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await conn.end();
    return;
  }
  const c = new pg.Client({ connectionString: `${servers.postgresUrl}/postgres` });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await c.end();
}

/** The `p`-th percentile (0–100, nearest rank) of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

/** Milliseconds of repeated calls: p50, p95, the slowest, and how many rows the last call returned. */
export interface Sample {
  p50: number;
  p95: number;
  max: number;
  rows: number;
}

/**
 * Times `fn(0 … iterations-1)` one call after another, after `warmups` untimed
 * calls (connection pool, table metadata, first pages into cache) with
 * arguments from 1000 on, which the timed calls do not repeat.
 */
export async function sample(iterations: number, warmups: number, fn: (i: number) => Promise<unknown[]>): Promise<Sample> {
  for (let i = 0; i < Math.min(warmups, iterations); i++) await fn(i + 1000);
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    rows = (await fn(i)).length;
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), max: ms[ms.length - 1]!, rows };
}

/** The median of `xs` (the upper one of an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** `n` with thousands separators and exactly `digits` decimals, as the storage tables print figures. */
export function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
