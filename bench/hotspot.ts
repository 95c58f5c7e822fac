/**
 * `npm run bench -- hotspot [--rows 10000000] [--open 100000] [--users 20000]
 *   [--dialects mysql,postgres] [--iterations 40] [--stock-iterations 5]
 *   [--creates 2000] [--mysql URL] [--postgres URL] [--keep]
 *   [--reuse mysql=DB,postgres=DB]`
 *
 * Loads FreeRADIUS-shaped radacct tables (FreeRADIUS's own schema.sql; one
 * session every 3 s over ~a year, 200 NASes, `--users` users each with one
 * MAC and IP; the newest `--open` sessions still open) into a fresh MariaDB
 * and PostgreSQL database with INSERT … SELECT over a sequence (secondary
 * indexes are dropped for the load and rebuilt exactly as the schema made
 * them). Then it times page 1 of historical-sessions and online-sessions
 * through the RadiusStore, first on FreeRADIUS's stock indexes, then after
 * `netsvc db index radius`, and the rate of user creation. Prints p50/p95
 * in milliseconds and drops the databases unless --keep. `--reuse` times a
 * database kept by an earlier `--keep` run instead of loading a new one.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createApp } from '../api/app.js';
import { AuthService } from '../api/auth.js';
import { createHotspotRoutes } from '../api/routes/hotspot/index.js';
import { generateCredential, hashSecret } from '../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../storage/admin/sqlite-admin-store.js';
import { defaultCatalogue } from '../storage/radius/attribute-catalogue.js';
import { createLogger } from '../src/log.js';
import { radiusStoreFor } from '../storage/radius/open-radius-store.js';
import type { RadiusStore, SessionFilter } from '../storage/radius/radius-store.js';
import { freeradiusSchemaStatements } from '../storage/radius/schema-files.js';
import { openSqlClient } from '../storage/sql/open-sql-client.js';
import type { SqlClient } from '../storage/sql/sql-client.js';
import { createDatabase, dropDatabase, LOCAL_SERVERS, log, sample, type BenchDialect } from './lib.js';

interface Options {
  rows: number;
  open: number;
  users: number;
  dialects: BenchDialect[];
  iterations: number;
  stockIterations: number;
  creates: number;
  reuse: Partial<Record<BenchDialect, string>>;
  mysqlUrl: string;
  postgresUrl: string;
  keep: boolean;
}

const STEP_SEC = 3;
const NASES = 200;
const LOAD_CHUNK = 500_000;
const PAGE = { page: 1, perPage: 100 };

function parseArgs(args: string[]): Options {
  const opts: Options = {
    rows: 10_000_000,
    open: 100_000,
    users: 20_000,
    dialects: ['mysql', 'postgres'],
    iterations: 40,
    stockIterations: 5,
    creates: 2000,
    reuse: {},
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
    const int = () => Number(next().replace(/_/g, ''));
    if (a === '--rows') opts.rows = int();
    else if (a === '--open') opts.open = int();
    else if (a === '--users') opts.users = int();
    else if (a === '--dialects') opts.dialects = next().split(',') as BenchDialect[];
    else if (a === '--iterations') opts.iterations = int();
    else if (a === '--stock-iterations') opts.stockIterations = int();
    else if (a === '--creates') opts.creates = int();
    else if (a === '--reuse') {
      for (const pair of next().split(',')) {
        const [d, db] = pair.split('=');
        if ((d !== 'mysql' && d !== 'postgres') || !db || !/^[A-Za-z0-9_]+$/.test(db))
          throw new Error('--reuse: mysql=DB,postgres=DB');
        opts.reuse[d] = db;
      }
    } else if (a === '--mysql') opts.mysqlUrl = next();
    else if (a === '--postgres') opts.postgresUrl = next();
    else if (a === '--keep') opts.keep = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!(opts.rows >= 1000 && opts.open < opts.rows && opts.users >= 100 && opts.users < 16_000_000)) {
    throw new Error('want --rows >= 1000, --open < --rows, 100 <= --users < 16M');
  }
  return opts;
}

/** Start of the data: the newest session starts one step before "now". */
function baseEpoch(opts: Options): number {
  return Math.floor(Date.now() / 1000) - opts.rows * STEP_SEC;
}

/** Generated columns in terms of n (1…rows), per dialect; every value is a function of n, so runs are reproducible. */
function loadSql(dialect: BenchDialect, opts: Options, from: number, to: number): string {
  const base = baseEpoch(opts);
  const openFrom = opts.rows - opts.open;
  if (dialect === 'mysql') {
    const uid = `((n * 7919) % ${opts.users})`;
    const hex = `LPAD(HEX(${uid}), 6, '0')`;
    return `INSERT INTO radacct (acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, nasporttype,
        acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, acctauthentic,
        acctinputoctets, acctoutputoctets, calledstationid, callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress)
      SELECT CONCAT('s', n), MD5(n), CONCAT('user', ${uid}), '', CONCAT('10.0.0.', n % ${NASES} + 1), CAST(n % 48 AS CHAR), 'Wireless-802.11',
        FROM_UNIXTIME(${base} + n * ${STEP_SEC}),
        FROM_UNIXTIME(${base} + n * ${STEP_SEC} + 60),
        IF(n > ${openFrom}, NULL, FROM_UNIXTIME(${base} + n * ${STEP_SEC} + 60 + (n * 13) % 7200)),
        60, 60 + (n * 13) % 7200, 'RADIUS', (n * 997) % 100000000, (n * 991) % 400000000,
        CONCAT('00-11-22-00-', LPAD(HEX(n % ${NASES}), 2, '0'), '-01:Guest'),
        CONCAT('AA-BB-CC-', SUBSTR(${hex}, 1, 2), '-', SUBSTR(${hex}, 3, 2), '-', SUBSTR(${hex}, 5, 2)),
        IF(n > ${openFrom}, '', 'User-Request'), 'Framed-User', 'PPP',
        CONCAT('10.', 100 + (${uid} DIV 65536) % 100, '.', (${uid} DIV 256) % 256, '.', ${uid} % 256)
      FROM (SELECT seq AS n FROM seq_${from}_to_${to}) s`;
  }
  const uid = `((n::bigint * 7919) % ${opts.users})`;
  const hex = `lpad(to_hex(${uid}), 6, '0')`;
  return `INSERT INTO radacct (acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, nasporttype,
      acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, acctauthentic,
      acctinputoctets, acctoutputoctets, calledstationid, callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress)
    SELECT 's' || n, md5(n::text), 'user' || ${uid}, NULL, ('10.0.0.' || (n % ${NASES} + 1))::inet, (n % 48)::text, 'Wireless-802.11',
      to_timestamp(${base} + n::bigint * ${STEP_SEC}),
      to_timestamp(${base} + n::bigint * ${STEP_SEC} + 60),
      CASE WHEN n > ${openFrom} THEN NULL ELSE to_timestamp(${base} + n::bigint * ${STEP_SEC} + 60 + (n::bigint * 13) % 7200) END,
      60, 60 + (n::bigint * 13) % 7200, 'RADIUS', (n::bigint * 997) % 100000000, (n::bigint * 991) % 400000000,
      '00-11-22-00-' || upper(lpad(to_hex(n % ${NASES}), 2, '0')) || '-01:Guest',
      'AA-BB-CC-' || upper(substr(${hex}, 1, 2) || '-' || substr(${hex}, 3, 2) || '-' || substr(${hex}, 5, 2)),
      CASE WHEN n > ${openFrom} THEN NULL ELSE 'User-Request' END, 'Framed-User', 'PPP',
      ('10.' || (100 + (${uid} / 65536) % 100) || '.' || ((${uid} / 256) % 256) || '.' || (${uid} % 256))::inet
    FROM generate_series(${from}, ${to}) AS n`;
}

/** Drops radacct's secondary indexes and answers the statements that rebuild them as they were. */
async function dropSecondaryIndexes(client: SqlClient): Promise<string[]> {
  if (client.dialect === 'mysql') {
    const rows = await client.query<{ name: string; col: string; uniq: number; seq: number; sub: number | null }>(
      `SELECT INDEX_NAME AS name, COLUMN_NAME AS col, NON_UNIQUE AS uniq, SEQ_IN_INDEX AS seq, SUB_PART AS sub
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'radacct' AND INDEX_NAME <> 'PRIMARY'
       ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
    );
    const byName = new Map<string, { unique: boolean; cols: string[] }>();
    for (const r of rows) {
      const e = byName.get(r.name) ?? { unique: Number(r.uniq) === 0, cols: [] };
      e.cols.push(r.sub ? `${r.col}(${r.sub})` : r.col);
      byName.set(r.name, e);
    }
    if (byName.size)
      await client.execute(`ALTER TABLE radacct ${[...byName.keys()].map((n) => `DROP INDEX \`${n}\``).join(', ')}`);
    return byName.size
      ? [
          `ALTER TABLE radacct ${[...byName].map(([n, e]) => `ADD ${e.unique ? 'UNIQUE ' : ''}INDEX \`${n}\` (${e.cols.join(', ')})`).join(', ')}`,
        ]
      : [];
  }
  const rows = await client.query<{ name: string; def: string; con: string | null }>(
    `SELECT i.indexname AS name, i.indexdef AS def, c.conname AS con FROM pg_indexes i
     LEFT JOIN pg_constraint c ON c.conname = i.indexname
     WHERE i.tablename = 'radacct' AND i.schemaname = current_schema() AND i.indexname <> 'radacct_pkey'`,
  );
  const rebuild: string[] = [];
  for (const r of rows) {
    if (r.con) {
      await client.execute(`ALTER TABLE radacct DROP CONSTRAINT "${r.con}"`);
      rebuild.push(`ALTER TABLE radacct ADD CONSTRAINT "${r.con}" UNIQUE (acctuniqueid)`);
    } else {
      await client.execute(`DROP INDEX "${r.name}"`);
      rebuild.push(r.def);
    }
  }
  return rebuild;
}

async function load(client: SqlClient, dialect: BenchDialect, opts: Options): Promise<void> {
  const started = Date.now();
  const rebuild = await dropSecondaryIndexes(client);
  for (let from = 1; from <= opts.rows; from += LOAD_CHUNK) {
    const to = Math.min(opts.rows, from + LOAD_CHUNK - 1);
    await client.execute(loadSql(dialect, opts, from, to));
    log(`  ${dialect}: ${to.toLocaleString('en')} rows (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  const t = Date.now();
  if (dialect === 'postgres') await client.execute("SET maintenance_work_mem = '512MB'");
  for (const stmt of rebuild) await client.execute(stmt);
  log(`  ${dialect}: stock indexes rebuilt in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  if (dialect === 'postgres') await client.execute('ANALYZE');
  else await client.execute('ANALYZE TABLE radacct');
  // Users with info rows, so online-sessions can print names.
  const u = opts.users;
  if (dialect === 'mysql') {
    await client.execute(
      `INSERT INTO netsvc_userinfo (username, usertype, firstname, lastname, createddate, createdby)
       SELECT CONCAT('user', seq), 'user', CONCAT('First', seq), CONCAT('Last', seq), NOW(), 'bench' FROM seq_0_to_${u - 1}`,
    );
    await client.execute(
      `INSERT INTO radcheck (username, attribute, op, value) SELECT CONCAT('user', seq), 'Cleartext-Password', ':=', CONCAT('pw', seq) FROM seq_0_to_${u - 1}`,
    );
  } else {
    await client.execute(
      `INSERT INTO netsvc_userinfo (username, usertype, firstname, lastname, createddate, createdby)
       SELECT 'user' || n, 'user', 'First' || n, 'Last' || n, now(), 'bench' FROM generate_series(0, ${u - 1}) n`,
    );
    await client.execute(
      `INSERT INTO radcheck (username, attribute, op, value) SELECT 'user' || n, 'Cleartext-Password', ':=', 'pw' || n FROM generate_series(0, ${u - 1}) n`,
    );
  }
  log(`  ${dialect}: loaded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** Removes what an earlier run left: netsvc's report indexes and the users the create phase made. */
async function resetReused(client: SqlClient): Promise<void> {
  const names =
    client.dialect === 'mysql'
      ? await client.query<{ name: string; tbl: string }>(
          "SELECT DISTINCT INDEX_NAME AS name, TABLE_NAME AS tbl FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME LIKE 'netsvc!_rad%' ESCAPE '!'",
        )
      : await client.query<{ name: string; tbl: string }>(
          "SELECT indexname AS name, tablename AS tbl FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'netsvc!_rad%' ESCAPE '!'",
        );
  for (const n of names)
    await client.execute(client.dialect === 'mysql' ? `DROP INDEX \`${n.name}\` ON ${n.tbl}` : `DROP INDEX "${n.name}"`);
  for (const t of ['radcheck', 'netsvc_userinfo']) await client.execute(`DELETE FROM ${t} WHERE username LIKE 'bench-new-%'`);
}

interface Timing {
  label: string;
  p50: number;
  p95: number;
  max: number;
  rows: number;
}

async function time(label: string, iterations: number, fn: (i: number) => Promise<unknown[]>): Promise<Timing> {
  return { label, ...(await sample(iterations, 3, fn)) };
}

function userName(opts: Options, i: number): string {
  return `user${(i * 4099 + 17) % opts.users}`;
}

function macOf(opts: Options, i: number): string {
  const hex = ((i * 4099 + 17) % opts.users).toString(16).padStart(6, '0');
  return `aa:bb:cc:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}

async function queries(store: RadiusStore, opts: Options, phase: string, it: number): Promise<Timing[]> {
  const nowMs = Date.now();
  const hist = (f: (i: number) => SessionFilter) => (i: number) => store.historicalSessions(f(i), PAGE);
  const out: Timing[] = [];
  out.push(
    await time(
      `${phase} historical, no filter`,
      it,
      hist(() => ({})),
    ),
  );
  out.push(
    await time(
      `${phase} historical, username`,
      it,
      hist((i) => ({ username: userName(opts, i) })),
    ),
  );
  out.push(
    await time(
      `${phase} historical, macaddress`,
      it,
      hist((i) => ({ macaddress: macOf(opts, i) })),
    ),
  );
  out.push(
    await time(
      `${phase} historical, nas`,
      it,
      hist((i) => ({ nas: `10.0.0.${(i % NASES) + 1}` })),
    ),
  );
  out.push(
    await time(
      `${phase} historical, last 24 h`,
      it,
      hist(() => ({ from: nowMs - 86_400_000, to: nowMs })),
    ),
  );
  out.push(
    await time(
      `${phase} historical, username + 30 days`,
      it,
      hist((i) => ({ username: userName(opts, i), from: nowMs - 30 * 86_400_000, to: nowMs })),
    ),
  );
  out.push(await time(`${phase} online, no filter`, it, () => store.onlineSessions({}, PAGE)));
  out.push(await time(`${phase} online, username`, it, (i) => store.onlineSessions({ username: userName(opts, i) }, PAGE)));
  out.push(await time(`${phase} online, nas`, it, (i) => store.onlineSessions({ nas: `10.0.0.${(i % NASES) + 1}` }, PAGE)));
  return out;
}

/** Concurrent callers of the user-creation benchmarks. */
const CREATE_WORKERS = 8;

/** Runs `fn(0 … count-1)` on CREATE_WORKERS concurrent callers, each taking the next index when done; answers the seconds it took. */
async function concurrently(count: number, fn: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CREATE_WORKERS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        await fn(i);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

async function createRate(store: RadiusStore, opts: Options, dialect: string): Promise<string> {
  const sec = await concurrently(opts.creates, async (i) => {
    await store.createUser(
      { username: `bench-new-${i}`, usertype: 'user', password: `pw-${i}`, firstname: 'B', email: 'b@corp.test' },
      { name: 'bench' },
    );
  });
  return `${dialect}: created ${opts.creates} users with ${CREATE_WORKERS} concurrent callers in ${sec.toFixed(2)} s = ${Math.round(opts.creates / sec)} users/s`;
}

/** The same creates through the HTTP app in process (routing, JWT check, validation, envelope), without sockets. */
async function apiCreateRate(store: RadiusStore, opts: Options, dialect: string): Promise<string> {
  const admin = new SqliteAdminStore(':memory:');
  admin.addEntity('bench', { hotspot: true });
  admin.addUser('bench', 'bench', { hotspot: true });
  const cred = generateCredential();
  admin.replaceCredential('bench', 'bench', cred.apiId, await hashSecret(cred.secret));
  const auth = new AuthService(admin, {
    key: randomBytes(32),
    tokenTtlSec: 3600,
    maxFailures: 10,
    failureWindowSec: 300,
    now: Date.now,
  });
  const app = createApp({
    auth,
    logger: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })),
    bodyLimitBytes: 1024 * 1024,
    areas: { hotspot: createHotspotRoutes({ storeOf: () => store, catalogue: defaultCatalogue(), timezone: 'UTC' }) },
  });
  const login = await app.request('/svc/api/hotspot/auth', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_id: cred.apiId, secret: cred.secret }),
  });
  const token = ((await login.json()) as { result: { access_token: string } }).result.access_token;
  let failed = 0;
  const sec = await concurrently(opts.creates, async (i) => {
    const res = await app.request('/svc/api/hotspot/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        username: `bench-new-api-${i}`,
        usertype: 'user',
        password: `pw-${i}`,
        firstname: 'B',
        email: 'b@corp.test',
      }),
    });
    if (res.status !== 200) failed++;
    await res.arrayBuffer();
  });
  admin.close();
  return `${dialect}: POST /hotspot/users ${opts.creates} times with ${CREATE_WORKERS} concurrent callers in ${sec.toFixed(2)} s = ${Math.round(opts.creates / sec)} users/s (${failed} failed)`;
}

function table(rows: Timing[]): string {
  const head = `| query (page 1, perPage 100) | p50 ms | p95 ms | max ms | rows |`;
  const sep = '|---|---:|---:|---:|---:|';
  return [
    head,
    sep,
    ...rows.map((r) => `| ${r.label} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${r.rows} |`),
  ].join('\n');
}

/** Runs the hotspot benchmark. */
export async function run(args: string[]): Promise<void> {
  const opts = parseArgs(args);
  const reports: string[] = [];
  for (const dialect of opts.dialects) {
    const reused = opts.reuse[dialect];
    const name = reused ?? `netsvc_bench_hotspot_${randomBytes(3).toString('hex')}`;
    log(
      `${dialect}: database ${name}, ${opts.rows.toLocaleString('en')} radacct rows, ${opts.open.toLocaleString('en')} open${reused ? ' (reused)' : ''}`,
    );
    const url = reused
      ? `${dialect === 'mysql' ? opts.mysqlUrl : opts.postgresUrl}/${name}`
      : await createDatabase(dialect, opts, name);
    const raw = openSqlClient(url, '/');
    const store = radiusStoreFor(openSqlClient(url, '/'), { timeZone: 'UTC' });
    try {
      if (reused) await resetReused(raw);
      else {
        for (const stmt of freeradiusSchemaStatements(dialect)) await raw.execute(stmt);
        await store.migrate();
        await load(raw, dialect, opts);
      }
      const stock = await queries(store, opts, 'stock indexes:', opts.stockIterations);
      const t = Date.now();
      await store.createIndexes();
      if (dialect === 'postgres') await raw.execute('ANALYZE');
      const indexSec = ((Date.now() - t) / 1000).toFixed(0);
      const indexed = await queries(store, opts, 'db index radius:', opts.iterations);
      const rate = await createRate(store, opts, dialect);
      const apiRate = await apiCreateRate(store, opts, dialect);
      const text = [
        `### ${dialect}: ${opts.rows.toLocaleString('en')} radacct rows, ${opts.open.toLocaleString('en')} open, ${opts.users.toLocaleString('en')} users`,
        '',
        table([...stock, ...indexed]),
        '',
        `\`netsvc db index radius\` took ${indexSec} s on this table.`,
        '',
        `- store: ${rate}`,
        `- API: ${apiRate}`,
      ].join('\n');
      reports.push(text);
      console.log(`${text}\n`);
    } finally {
      await store.close();
      await raw.close();
      if (!opts.keep && !reused) {
        await dropDatabase(dialect, opts, name);
        log(`${dialect}: dropped ${name}`);
      }
    }
  }
}
