/**
 * `npm run bench -- logviewer [--rows 1000000,10000000] [--dialects mysql,postgres]
 *   [--iterations 20] [--mysql URL] [--postgres URL] [--keep]`
 *
 * Loads rsyslog-shaped SystemEvents tables (schema files as rsyslog ships
 * them; 100 days, 200 hosts, 50 programs, severities uniform) into a fresh
 * MariaDB and PostgreSQL database per size with INSERT … SELECT over a
 * sequence, then times the logviewer store's queries, first on the stock
 * table (primary key only), then after `db index syslog`. Prints p50/p95 in
 * milliseconds and drops the databases unless --keep.
 */
import { randomBytes } from 'node:crypto';
import { openSqlClient } from '../storage/sql/open-sql-client.js';
import type { SqlClient } from '../storage/sql/sql-client.js';
import { openSyslogStore } from '../storage/syslog/open-syslog-store.js';
import { schemaStatements } from '../storage/syslog/schema-files.js';
import type { PageRequest, SyslogFilter } from '../storage/syslog/syslog-store.js';
import { createDatabase, dropDatabase, LOCAL_SERVERS, log, sample, type BenchDialect } from './lib.js';

interface Options {
  rows: number[];
  dialects: BenchDialect[];
  iterations: number;
  mysqlUrl: string;
  postgresUrl: string;
  keep: boolean;
}

const DAYS = 100;
const SPAN_SEC = DAYS * 86_400;
const BASE = '2025-01-01 00:00:00';
const BASE_MS = Date.UTC(2025, 0, 1);
const HOSTS = 200;
const LOAD_CHUNK = 1_000_000;

function parseArgs(args: string[]): Options {
  const opts: Options = {
    rows: [1_000_000, 10_000_000],
    dialects: ['mysql', 'postgres'],
    iterations: 20,
    ...LOCAL_SERVERS,
    keep: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const next = (): string => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--rows')
      opts.rows = next()
        .split(',')
        .map((s) => Number(s.replace(/_/g, '')));
    else if (a === '--dialects') opts.dialects = next().split(',') as BenchDialect[];
    else if (a === '--iterations') opts.iterations = Number(next());
    else if (a === '--mysql') opts.mysqlUrl = next();
    else if (a === '--postgres') opts.postgresUrl = next();
    else if (a === '--keep') opts.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (opts.rows.some((n) => !Number.isInteger(n) || n < 1000)) throw new Error('--rows: integers >= 1000');
  return opts;
}

/** Rows `from..to` (1-based sequence numbers) of a table of `total` rows, generated inside the database. */
function loadSql(dialect: BenchDialect, from: number, to: number): string {
  // h: Knuth's multiplicative hash of the sequence number, so host, program and severity vary independently.
  if (dialect === 'mysql') {
    return `INSERT INTO SystemEvents (ReceivedAt, DeviceReportedTime, Facility, Priority, FromHost, Message, InfoUnitID, SysLogTag)
      SELECT TIMESTAMP(?) + INTERVAL ((seq - 1) * ? DIV ?) SECOND,
             TIMESTAMP(?) + INTERVAL ((seq - 1) * ? DIV ? - 1) SECOND,
             MOD(h, 24), MOD(h, 8),
             CONCAT('host-', LPAD(MOD(h DIV 65536, ?), 3, '0')),
             CONCAT('user u', MOD(seq, 1000), ' ', ELT(1 + MOD(seq, 5), 'login', 'logout', 'update', 'delete', 'read'),
                    ' session ', seq, IF(MOD(seq, 10007) = 0, ' disk failure', '')),
             1,
             CONCAT('prog', LPAD(MOD(h DIV 256, 50), 2, '0'), '[', MOD(seq, 30000), ']:')
      FROM (SELECT CAST(seq AS SIGNED) AS seq, MOD(seq * 2654435761, 4294967296) AS h FROM seq_${from}_to_${to}) s`;
  }
  return `INSERT INTO SystemEvents (ReceivedAt, DeviceReportedTime, Facility, Priority, FromHost, Message, InfoUnitID, SysLogTag)
    SELECT timestamp '${BASE}' + ((g - 1) * ?::bigint / ?::bigint) * interval '1 second',
           timestamp '${BASE}' + ((g - 1) * ?::bigint / ?::bigint - 1) * interval '1 second',
           h % 24, h % 8,
           'host-' || lpad(((h / 65536) % ?::bigint)::text, 3, '0'),
           'user u' || (g % 1000) || ' ' || (ARRAY['login', 'logout', 'update', 'delete', 'read'])[1 + g % 5] ||
             ' session ' || g || CASE WHEN g % 10007 = 0 THEN ' disk failure' ELSE '' END,
           1,
           'prog' || lpad(((h / 256) % 50)::text, 2, '0') || '[' || (g % 30000) || ']:'
    FROM (SELECT g, (g * 2654435761) % 4294967296 AS h FROM generate_series(?::bigint, ?::bigint) g) s`;
}

async function load(client: SqlClient, dialect: BenchDialect, total: number): Promise<void> {
  for (const stmt of schemaStatements(dialect)) await client.execute(stmt);
  for (let from = 1; from <= total; from += LOAD_CHUNK) {
    const to = Math.min(total, from + LOAD_CHUNK - 1);
    // MariaDB's SEQUENCE engine names its range in the table name; the numbers are ours, not input.
    const sql = loadSql(dialect, from, to);
    if (dialect === 'mysql') await client.execute(sql, [BASE, SPAN_SEC, total, BASE, SPAN_SEC, total, HOSTS]);
    else await client.execute(sql, [SPAN_SEC, total, SPAN_SEC, total, HOSTS, from, to]);
    log(`  loaded ${to.toLocaleString('en')} / ${total.toLocaleString('en')}`);
  }
  if (dialect === 'mysql') await client.query('ANALYZE TABLE SystemEvents');
  else await client.execute('VACUUM (ANALYZE) SystemEvents');
}

function dayBounds(day: number): { startTime: string; endTime: string } {
  const fmt = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  const start = BASE_MS + day * 86_400_000;
  return { startTime: fmt(start), endTime: fmt(start + 86_400_000) };
}

interface Case {
  name: string;
  iterations?: number;
  query: (i: number) => { filter: SyslogFilter; page: PageRequest };
}

const CASES: Case[] = [
  { name: 'latest page 1', query: () => ({ filter: {}, page: { page: 1, perPage: 100 } }) },
  {
    name: 'host+priority search',
    query: (i) => ({
      filter: { host: `host-${String((i * 37) % HOSTS).padStart(3, '0')}`, priority: i % 8 },
      page: { page: 1, perPage: 100 },
    }),
  },
  {
    name: 'tag search',
    query: (i) => ({ filter: { tag: `prog${String((i * 11) % 50).padStart(2, '0')}` }, page: { page: 1, perPage: 100 } }),
  },
  { name: 'one-day time range', query: (i) => ({ filter: dayBounds(10 + ((i * 7) % 80)), page: { page: 1, perPage: 100 } }) },
  {
    name: 'substring in one day',
    query: (i) => ({ filter: { message: 'disk failure', ...dayBounds(10 + ((i * 7) % 80)) }, page: { page: 1, perPage: 100 } }),
  },
  { name: 'latest page 100', query: () => ({ filter: {}, page: { page: 100, perPage: 100 } }) },
  {
    name: 'substring, no range',
    iterations: 3,
    query: () => ({ filter: { message: 'disk failure' }, page: { page: 1, perPage: 100 } }),
  },
];

interface Result {
  dialect: BenchDialect;
  rows: number;
  indexed: boolean;
  name: string;
  p50: number;
  p95: number;
  returned: number;
}

async function measure(
  url: string,
  dialect: BenchDialect,
  rows: number,
  indexed: boolean,
  iterations: number,
): Promise<Result[]> {
  const store = openSyslogStore(url, '/');
  const out: Result[] = [];
  try {
    for (const c of CASES) {
      const s = await sample(c.iterations ?? iterations, 2, (i) => {
        const q = c.query(i);
        return store.find(q.filter, q.page);
      });
      const r = { dialect, rows, indexed, name: c.name, p50: s.p50, p95: s.p95, returned: s.rows };
      log(
        `  ${indexed ? 'indexed' : 'pk only'} ${c.name}: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms (${r.returned} rows)`,
      );
      out.push(r);
    }
  } finally {
    await store.close();
  }
  return out;
}

function table(results: Result[], indexTimes: Map<string, number>, loadTimes: Map<string, number>): string {
  const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
  const lines = [
    '| database | rows | query | PK only p50 / p95 (ms) | with `db index` p50 / p95 (ms) |',
    '|---|---:|---|---:|---:|',
  ];
  const key = (r: Result): string => `${r.dialect}|${r.rows}|${r.name}`;
  const indexed = new Map(results.filter((r) => r.indexed).map((r) => [key(r), r]));
  for (const r of results.filter((x) => !x.indexed)) {
    const i = indexed.get(key(r));
    const db = r.dialect === 'mysql' ? 'MariaDB' : 'PostgreSQL';
    lines.push(
      `| ${db} | ${r.rows.toLocaleString('en')} | ${r.name} | ${fmt(r.p50)} / ${fmt(r.p95)} | ${i ? `${fmt(i.p50)} / ${fmt(i.p95)}` : '–'} |`,
    );
  }
  lines.push('', '| database | rows | bulk load (s) | `db index syslog` (s) |', '|---|---:|---:|---:|');
  for (const [k, t] of loadTimes) {
    const [dialect, rows] = k.split('|');
    lines.push(
      `| ${dialect === 'mysql' ? 'MariaDB' : 'PostgreSQL'} | ${Number(rows).toLocaleString('en')} | ${t.toFixed(0)} | ${(indexTimes.get(k) ?? NaN).toFixed(0)} |`,
    );
  }
  return lines.join('\n');
}

/** Entry point of `npm run bench -- logviewer`. */
export async function run(args: string[]): Promise<void> {
  const opts = parseArgs(args);
  const results: Result[] = [];
  const indexTimes = new Map<string, number>();
  const loadTimes = new Map<string, number>();
  for (const rows of opts.rows) {
    for (const dialect of opts.dialects) {
      const name = `netsvc_bench_syslog_${rows}_${randomBytes(3).toString('hex')}`;
      log(`${dialect}: ${rows.toLocaleString('en')} rows into ${name}`);
      const url = await createDatabase(dialect, opts, name);
      const client = openSqlClient(url, '/');
      try {
        const t0 = performance.now();
        await load(client, dialect, rows);
        loadTimes.set(`${dialect}|${rows}`, (performance.now() - t0) / 1000);
        results.push(...(await measure(url, dialect, rows, false, opts.iterations)));
        const indexer = openSyslogStore(url, '/');
        const t1 = performance.now();
        await indexer.createIndexes();
        indexTimes.set(`${dialect}|${rows}`, (performance.now() - t1) / 1000);
        await indexer.close();
        log(`  db index syslog: ${((performance.now() - t1) / 1000).toFixed(0)} s`);
        results.push(...(await measure(url, dialect, rows, true, opts.iterations)));
      } finally {
        await client.close();
        if (!opts.keep) await dropDatabase(dialect, opts, name);
      }
    }
  }
  process.stdout.write(`${table(results, indexTimes, loadTimes)}\n`);
}
