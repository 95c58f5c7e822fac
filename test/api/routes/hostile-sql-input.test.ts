/**
 * Issue 16, point 6: input one database refuses and the others take (a NUL
 * byte, the year 0, a user id past the column's range) gets the same answer
 * on MariaDB, PostgreSQL and SQLite: 400 naming the parameter, or 404 for a
 * user that cannot exist, never a 5xx, and no stack trace in the log (the
 * client's mistake is not the operator's problem).
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.js';
import { AuthService } from '../../../api/auth.js';
import { createHotspotRoutes } from '../../../api/routes/hotspot/index.js';
import { createLogviewerRoutes } from '../../../api/routes/logviewer.js';
import { generateCredential, hashSecret } from '../../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../../storage/admin/sqlite-admin-store.js';
import { defaultCatalogue } from '../../../storage/radius/attribute-catalogue.js';
import { RadiusStoreError, type RadiusStore } from '../../../storage/radius/radius-store.js';
import { openSyslogStore } from '../../../storage/syslog/open-syslog-store.js';
import { SyslogInputError, type SyslogStore } from '../../../storage/syslog/syslog-store.js';
import { createLogger } from '../../../src/log.js';
import { availableDialects } from '../../helpers/databases.js';
import { postJson, serveOnLoopback, type TestServer } from '../../helpers/http.js';
import { createRadiusDatabase, insertAcct, insertPostAuth, type RadiusTestDatabase } from '../../helpers/radius.js';
import { createSystemEventsDatabase, seed, type SystemEventsDatabase } from '../../storage/syslog/system-events.js';

const dialects = await availableDialects();

/** One request and the answer every database must give. */
interface Case {
  method: 'GET' | 'POST' | 'DELETE';
  area: 'logviewer' | 'hotspot';
  path: string;
  body?: unknown;
  status: number;
  /** The parameter a 400 names. */
  param?: string;
}

const NUL = encodeURIComponent('a\u0000b');
/** One past PostgreSQL's `serial`, the narrowest id column of the three. */
const BEYOND_INT4 = 2 ** 31;
const get = (area: Case['area'], path: string, status: number, param?: string): Case => ({
  method: 'GET',
  area,
  path,
  status,
  param,
});

const CASES: Case[] = [
  // A NUL byte: PostgreSQL's text cannot hold one (22021), the others compare it.
  ...['host', 'message', 'tag'].flatMap((p) => [
    get('logviewer', `/search?${p}=${NUL}`, 400, p),
    get('logviewer', `/latest?${p}=${NUL}`, 400, p),
  ]),
  ...['username', 'hotspot'].flatMap((p) => [
    get('hotspot', `/historical-sessions?${p}=${NUL}`, 400, p),
    get('hotspot', `/online-sessions?${p}=${NUL}`, 400, p),
  ]),
  get('hotspot', `/login-attempts?username=${NUL}`, 400, 'username'),
  ...['username', 'plan_name', 'user_profiles', 'remarks'].map((p) =>
    get('hotspot', `/quota-purchase-report?${p}=${NUL}`, 400, p),
  ),
  get('hotspot', `/users?username=${NUL}`, 400, 'username'),
  // The year 0: PostgreSQL has no such date (22008); MariaDB's DATETIME starts at the year 1000.
  get('logviewer', '/search?startTime=0000-01-01', 400, 'startTime'),
  get('logviewer', `/search?endTime=${encodeURIComponent('0000-01-01 10:00:00')}`, 400, 'endTime'),
  get('logviewer', '/search?startTime=0999-12-31T23:00:00Z', 400, 'startTime'),
  get('hotspot', '/historical-sessions?startTime=0000-01-01', 400, 'startTime'),
  get('hotspot', '/online-sessions?endTime=0000-01-01', 400, 'endTime'),
  get('hotspot', '/login-attempts?startTime=0000-01-01', 400, 'startTime'),
  get('hotspot', '/quota-purchase-report?endTime=0000-01-01', 400, 'endTime'),
  get('hotspot', '/quota-purchase-report?transaction_time=0000-01-01', 400, 'transaction_time'),
  get('hotspot', `/quota-purchase-report?transaction_time=${encodeURIComponent('0000-01-01 00:00:00')}`, 400, 'transaction_time'),
  // User ids past every id column: no such user can exist.
  ...[BEYOND_INT4, 9_999_999_999].flatMap((id) => [
    get('hotspot', `/users/${id}`, 404),
    { method: 'POST' as const, area: 'hotspot' as const, path: `/users/${id}`, body: { firstname: 'x' }, status: 404 },
    { method: 'DELETE' as const, area: 'hotspot' as const, path: `/users/${id}`, status: 404 },
    {
      method: 'POST' as const,
      area: 'hotspot' as const,
      path: `/users/${id}/actions/attach-profile`,
      body: { profileName: 'gold' },
      status: 404,
    },
    {
      method: 'POST' as const,
      area: 'hotspot' as const,
      path: `/users/${id}/actions/detach-profile`,
      body: { profileName: 'gold' },
      status: 404,
    },
    get('hotspot', `/user-access/${id}`, 404),
    {
      method: 'POST' as const,
      area: 'hotspot' as const,
      path: `/user-access/${id}/actions/attach-access`,
      body: { attribute: 'Session-Timeout', value: 60 },
      status: 404,
    },
    {
      method: 'POST' as const,
      area: 'hotspot' as const,
      path: `/user-access/${id}/actions/detach-access`,
      body: { attribute: 'Session-Timeout' },
      status: 404,
    },
  ]),
  // The deepest page there is: an OFFSET of two thousand billion rows is no error anywhere.
  get('logviewer', '/search?page=999999999&perPage=2000', 200),
  get('hotspot', '/users?page=999999999&perPage=2000', 200),
  get('hotspot', '/historical-sessions?page=999999999&perPage=2000', 200),
  get('hotspot', '/quota-purchase-report?page=999999999&perPage=2000', 200),
  // A body field the database would refuse: a NUL in the new user's name and in an info field.
  {
    method: 'POST',
    area: 'hotspot',
    path: '/users',
    body: { username: 'a\u0000b', usertype: 'pin' },
    status: 400,
    param: 'username',
  },
  {
    method: 'POST',
    area: 'hotspot',
    path: '/users',
    body: { username: 'nul1', usertype: 'pin', company: 'a\u0000b' },
    status: 400,
    param: 'company',
  },
];

describe.each(dialects)('hostile SQL input on %s', (dialect) => {
  let radius: RadiusTestDatabase;
  let events: SystemEventsDatabase;
  let syslog: SyslogStore;
  let admin: SqliteAdminStore;
  let server: TestServer;
  const tokens: Record<string, string> = {};
  const logLines: string[] = [];

  beforeAll(async () => {
    radius = await createRadiusDatabase(dialect, { timeZone: 'UTC' });
    await radius.store.saveProfile('gold', 'gold plan');
    // One row of each report, to show the widest accepted time range still finds it.
    const at = Date.UTC(2025, 6, 4, 10);
    await radius.store.createUser({ username: 'carol', usertype: 'pin' }, { name: 'test' });
    await insertAcct(radius.raw, { sessionId: 's1', username: 'carol', start: at });
    await insertPostAuth(radius.raw, 'carol', 'pw', 'Access-Accept', at);
    await radius.store.recordQuotaPurchase(
      { transaction_time: '2025-07-04 10:00:00', username: 'carol', plan_name: '1GB', currency: 'EUR', amount: '5' },
      { name: 'test' },
    );
    events = await createSystemEventsDatabase(dialect, 'netsvc_hostile_sql');
    await seed(events.client, [
      {
        receivedAt: '2025-07-04 10:00:00',
        deviceReportedTime: '2025-07-04 10:00:00',
        host: 'routerA',
        tag: 'sshd[1]:',
        priority: 6,
        facility: 4,
        message: 'hello',
      },
    ]);
    syslog = openSyslogStore(events.db.url, '/');

    admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: false, logviewer: true, hotspot: true });
    admin.addUser('acme', 'alice', { netflow: false, logviewer: true, hotspot: true });
    const auth = new AuthService(admin, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 100,
      failureWindowSec: 300,
      now: Date.now,
    });
    const sink = new Writable({
      write: (chunk, _e, cb) => {
        logLines.push(String(chunk));
        cb();
      },
    });
    const app = createApp({
      auth,
      logger: createLogger('info', sink),
      bodyLimitBytes: 1024 * 1024,
      areas: {
        logviewer: createLogviewerRoutes({ storeOf: (e) => (e === 'acme' ? syslog : undefined), timezone: 'UTC' }),
        hotspot: createHotspotRoutes({
          storeOf: (e) => (e === 'acme' ? radius.store : undefined),
          catalogue: defaultCatalogue(),
          timezone: 'UTC',
        }),
      },
    });
    server = await serveOnLoopback(app.fetch);
    const cred = generateCredential();
    admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    for (const area of ['logviewer', 'hotspot']) {
      tokens[area] = (
        await postJson(`${server.url}/svc/api/${area}/auth`, { api_id: cred.apiId, secret: cred.secret })
      ).body.result.access_token;
    }
  });

  afterAll(async () => {
    await server?.close();
    admin?.close();
    await syslog?.close();
    await events?.close();
    await radius?.close();
  });

  it('answers every bad input with the same 400 naming the parameter, or 404', async () => {
    const seen: string[] = [];
    const want: string[] = [];
    for (const c of CASES) {
      const res = await fetch(`${server.url}/svc/api/${c.area}${c.path}`, {
        method: c.method,
        headers: {
          authorization: `Bearer ${tokens[c.area]}`,
          ...(c.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: c.body === undefined ? undefined : JSON.stringify(c.body),
      });
      const body = (await res.json()) as { status: boolean; errorMessage?: string };
      const named = c.param === undefined || String(body.errorMessage).includes(`'${c.param}'`);
      seen.push(
        `${c.method} ${c.area}${c.path} → ${res.status}${named ? '' : ` (names not '${c.param}': ${body.errorMessage})`}`,
      );
      want.push(`${c.method} ${c.area}${c.path} → ${c.status}`);
    }
    expect(seen).toEqual(want);
  });

  it('a filter on an id no row can have finds nothing', async () => {
    const res = await fetch(`${server.url}/svc/api/hotspot/users?id=${BEYOND_INT4}`, {
      headers: { authorization: `Bearer ${tokens.hotspot}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown[] }).result).toEqual([]);
  });

  it('the first and the last second of the accepted years still find every row', async () => {
    const range = `startTime=1000-01-01&endTime=${encodeURIComponent('9999-12-31 23:59:59')}`;
    for (const [area, path] of [
      ['logviewer', '/search'],
      ['hotspot', '/historical-sessions'],
      ['hotspot', '/online-sessions'],
      ['hotspot', '/login-attempts'],
      ['hotspot', '/quota-purchase-report'],
    ] as const) {
      const res = await fetch(`${server.url}/svc/api/${area}${path}?${range}`, {
        headers: { authorization: `Bearer ${tokens[area]}` },
      });
      const body = (await res.json()) as { result?: unknown[] };
      expect([path, res.status, body.result?.length]).toEqual([path, 200, 1]);
    }
  });

  it('logs no stack trace and no error for any of them', () => {
    const lines = logLines.join('');
    expect(lines).toContain('"request"');
    expect(lines).not.toContain('"stack"');
    expect(lines).not.toMatch(/"level":(50|60)/);
  });
});

describe('the net under the checks', () => {
  it('a value the database refused past the checks is a 400 on both areas, not an outage, and logs nothing', async () => {
    const admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: false, logviewer: true, hotspot: true });
    admin.addUser('acme', 'alice', { netflow: false, logviewer: true, hotspot: true });
    const auth = new AuthService(admin, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 100,
      failureWindowSec: 300,
      now: Date.now,
    });
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk, _e, cb) => {
        lines.push(String(chunk));
        cb();
      },
    });
    const outages: unknown[] = [];
    const syslog = {
      find: async () => Promise.reject(new SyslogInputError('refused')),
      close: async () => undefined,
    } as SyslogStore;
    const radius = {
      listUsers: async () =>
        Promise.reject(
          new RadiusStoreError('invalid', 'Invalid input: a value holds a character the RADIUS database cannot store.'),
        ),
    } as unknown as RadiusStore;
    const app = createApp({
      auth,
      logger: createLogger('info', sink),
      bodyLimitBytes: 1024,
      areas: {
        logviewer: createLogviewerRoutes({
          storeOf: () => syslog,
          timezone: 'UTC',
          onStoreError: (_e, err) => outages.push(err),
        }),
        hotspot: createHotspotRoutes({
          storeOf: () => radius,
          catalogue: defaultCatalogue(),
          timezone: 'UTC',
          onStoreError: (_e, err) => outages.push(err),
        }),
      },
    });
    const server = await serveOnLoopback(app.fetch);
    try {
      const cred = generateCredential();
      admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
      for (const [area, path] of [
        ['logviewer', '/search?host=x'],
        ['hotspot', '/users?username=x'],
      ] as const) {
        const token = (await postJson(`${server.url}/svc/api/${area}/auth`, { api_id: cred.apiId, secret: cred.secret })).body
          .result.access_token;
        const res = await fetch(`${server.url}/svc/api/${area}${path}`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await res.json()) as { status: boolean; errorMessage: string };
        expect([area, res.status, body.status]).toEqual([area, 400, false]);
        expect(body.errorMessage).toMatch(/^Invalid input: /);
      }
      expect(outages).toEqual([]);
      expect(lines.join('')).not.toContain('"stack"');
    } finally {
      await server.close();
      admin.close();
    }
  });
});
