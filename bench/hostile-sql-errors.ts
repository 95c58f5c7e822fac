/**
 * `npm run bench -- hostile sql-errors`: the bad inputs an outside tester
 * found (a NUL byte in a text filter, the year 0, user ids past int4) sent
 * to the logviewer and hotspot routes over SQLite, MariaDB and PostgreSQL.
 * One row per database: the statuses it answered; all three must answer
 * alike, never 5xx, and log no stack trace. In process (`app.request`),
 * on scratch databases dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../api/app.js';
import { AuthService } from '../api/auth.js';
import { createHotspotRoutes } from '../api/routes/hotspot/index.js';
import { createLogviewerRoutes } from '../api/routes/logviewer.js';
import { generateCredential, hashSecret } from '../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../storage/admin/sqlite-admin-store.js';
import { defaultCatalogue } from '../storage/radius/attribute-catalogue.js';
import { radiusStoreFor } from '../storage/radius/open-radius-store.js';
import { freeradiusSchemaStatements } from '../storage/radius/schema-files.js';
import { openSqlClient } from '../storage/sql/open-sql-client.js';
import type { Dialect } from '../storage/sql/sql-client.js';
import { openSyslogStore } from '../storage/syslog/open-syslog-store.js';
import { schemaStatements } from '../storage/syslog/schema-files.js';
import { createLogger } from '../src/log.js';
import type { HostileRow } from './hostile.js';
import { createDatabase, dropDatabase, LOCAL_SERVERS, log } from './lib.js';

const NUL = encodeURIComponent('a\u0000b');
const BIG_ID = 2 ** 31;

/** The tester's inputs: [method, area, path, JSON body]. */
const INPUTS: Array<[string, 'logviewer' | 'hotspot', string, unknown?]> = [
  ...['host', 'message', 'tag'].map((p) => ['GET', 'logviewer', `/search?${p}=${NUL}`] as [string, 'logviewer', string]),
  ['GET', 'logviewer', '/search?startTime=0000-01-01'],
  ...['username', 'hotspot'].map((p) => ['GET', 'hotspot', `/historical-sessions?${p}=${NUL}`] as [string, 'hotspot', string]),
  ['GET', 'hotspot', `/login-attempts?username=${NUL}`],
  ['GET', 'hotspot', `/quota-purchase-report?remarks=${NUL}`],
  ['GET', 'hotspot', '/historical-sessions?startTime=0000-01-01'],
  ['GET', 'hotspot', '/quota-purchase-report?transaction_time=0000-01-01'],
  ['GET', 'hotspot', `/users/${BIG_ID}`],
  ['POST', 'hotspot', `/users/${BIG_ID}`, { firstname: 'x' }],
  ['DELETE', 'hotspot', `/users/${BIG_ID}`],
  ['POST', 'hotspot', `/users/${BIG_ID}/actions/attach-profile`, { profileName: 'gold' }],
  ['GET', 'hotspot', `/user-access/${BIG_ID}`],
  ['POST', 'hotspot', `/user-access/${BIG_ID}/actions/detach-access`, { attribute: 'Session-Timeout' }],
];

interface EngineResult {
  dialect: Dialect;
  statuses: number[];
  stackLines: number;
}

/** A scratch database URL on `dialect` and the function that removes it. */
async function scratch(dialect: Dialect): Promise<{ url: string; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-bench-sql-errors-'));
    return { url: `sqlite:${join(dir, 'db.sqlite')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `netsvc_bench_sql_errors_${randomBytes(3).toString('hex')}`;
  const url = await createDatabase(dialect, LOCAL_SERVERS, name);
  return { url, drop: () => dropDatabase(dialect, LOCAL_SERVERS, name) };
}

async function probe(dialect: Dialect): Promise<EngineResult> {
  const db = await scratch(dialect);
  const raw = openSqlClient(db.url, '/');
  const radius = radiusStoreFor(openSqlClient(db.url, '/'), { timeZone: 'UTC' });
  const admin = new SqliteAdminStore(':memory:');
  let syslog: ReturnType<typeof openSyslogStore> | undefined;
  try {
    for (const stmt of freeradiusSchemaStatements(dialect)) await raw.execute(stmt);
    await radius.migrate();
    await radius.saveProfile('gold', 'gold plan');
    for (const stmt of schemaStatements(dialect)) await raw.execute(stmt);
    // One row, so the filters reach the database (an empty table is answered before any condition is sent).
    await raw.execute(
      'INSERT INTO SystemEvents (Message, Facility, FromHost, Priority, DeviceReportedTime, ReceivedAt, InfoUnitID, SysLogTag) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ['hello', 4, 'routerA', 6, '2025-07-04 10:00:00', '2025-07-04 10:00:00', 1, 'sshd[1]:'],
    );
    const store = openSyslogStore(db.url, '/');
    syslog = store;

    admin.addEntity('acme', { netflow: false, logviewer: true, hotspot: true });
    admin.addUser('acme', 'alice', { netflow: false, logviewer: true, hotspot: true });
    const cred = generateCredential();
    admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    const auth = new AuthService(admin, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 100,
      failureWindowSec: 300,
      now: Date.now,
    });
    let stackLines = 0;
    const sink = new Writable({
      write: (chunk, _e, cb) => {
        if (String(chunk).includes('"stack"')) stackLines++;
        cb();
      },
    });
    const app = createApp({
      auth,
      logger: createLogger('info', sink),
      bodyLimitBytes: 1024 * 1024,
      areas: {
        logviewer: createLogviewerRoutes({ storeOf: () => store, timezone: 'UTC' }),
        hotspot: createHotspotRoutes({ storeOf: () => radius, catalogue: defaultCatalogue(), timezone: 'UTC' }),
      },
    });
    const tokens: Record<string, string> = {};
    for (const area of ['logviewer', 'hotspot']) {
      const res = await app.request(`/svc/api/${area}/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_id: cred.apiId, secret: cred.secret }),
      });
      tokens[area] = ((await res.json()) as { result: { access_token: string } }).result.access_token;
    }
    const statuses: number[] = [];
    for (const [method, area, path, body] of INPUTS) {
      const res = await app.request(`/svc/api/${area}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tokens[area]}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return { dialect, statuses, stackLines };
  } finally {
    await syslog?.close();
    admin.close();
    await radius.close();
    await raw.close();
    await db.drop();
  }
}

/** "400×7 404×4": how often each status came back. */
function tally(statuses: number[]): string {
  const counts = new Map<number, number>();
  for (const s of [...statuses].sort((a, b) => a - b)) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s}×${n}`).join(' ');
}

export async function run(_args: string[]): Promise<HostileRow[]> {
  const results: EngineResult[] = [];
  for (const dialect of ['sqlite', 'mysql', 'postgres'] as const) {
    log(`sql-errors: ${dialect}`);
    results.push(await probe(dialect));
  }
  const reference = results[0]!.statuses.join(',');
  return results.map((r) => ({
    attack: 'sql-errors',
    measure: `${r.dialect}: statuses for ${INPUTS.length} bad inputs`,
    value: `${tally(r.statuses)}${r.stackLines ? `, ${r.stackLines} stack(s) logged` : ''}`,
    target: 'same on all three, no 5xx, no stack',
    ok: r.statuses.join(',') === reference && r.statuses.every((s) => s < 500) && r.stackLines === 0,
  }));
}
