/**
 * The logviewer API over HTTP with real tokens, on every database: filters,
 * pages and envelopes, time forms, and each malformed parameter answered
 * with a 400 that names it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.js';
import { AuthService } from '../../../api/auth.js';
import { LAST_PAGE, MORE_PAGES } from '../../../api/envelope.js';
import { createLogviewerRoutes } from '../../../api/routes/logviewer.js';
import { generateCredential, hashSecret } from '../../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../../storage/admin/sqlite-admin-store.js';
import type { SqlClient } from '../../../storage/sql/sql-client.js';
import { openSyslogStore } from '../../../storage/syslog/open-syslog-store.js';
import type { SqlSyslogStore } from '../../../storage/syslog/sql-syslog-store.js';
import type { SyslogFilter, SyslogStoreError } from '../../../storage/syslog/syslog-store.js';
import { createLogger } from '../../../src/log.js';
import { availableDialects } from '../../helpers/databases.js';
import { getJson, postJson, serveOnLoopback, type TestServer } from '../../helpers/http.js';
import {
  countRows,
  createSystemEventsDatabase,
  DIALECT_LABEL,
  modelMatches,
  modelOrder,
  seed,
  type SeedRow,
  type StoredRow,
  type SystemEventsDatabase,
} from '../../storage/syslog/system-events.js';

const dialects = await availableDialects();

function fmt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** 30 rows, one every 2 h from 2025-07-04 00:00 UTC: 10 each from three hosts. */
function dataset(): SeedRow[] {
  const base = Date.UTC(2025, 6, 4);
  const hosts = ['routerA', 'ap-1', "o'hara"];
  const tags = ['sshd[812]:', 'hostapd', 'kernel:', 'hostapd[99]:', 'app_1'];
  const messages = ['Accepted password', 'disk 100% full', 'under_score', 'back\\slash', 'MiXeD'];
  return Array.from({ length: 30 }, (_, i) => ({
    receivedAt: fmt(base + i * 2 * 3600_000),
    deviceReportedTime: fmt(base + i * 2 * 3600_000 - 3000),
    host: hosts[i % 3]!,
    tag: tags[i % 5]!,
    priority: i % 8,
    facility: 4,
    message: `${messages[i % 5]!} n${i}`,
  }));
}

describe.each(dialects)('logviewer API on %s', (dialect) => {
  let events: SystemEventsDatabase;
  let client: SqlClient;
  let store: SqlSyslogStore;
  let admin: SqliteAdminStore;
  let server: TestServer;
  let token: string;
  let netflowToken: string;
  let otherToken: string;
  let rows: StoredRow[];
  const storeErrors: SyslogStoreError[] = [];

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_logviewer_api');
    client = events.client;
    rows = await seed(client, dataset());
    store = openSyslogStore(events.db.url, '/');

    admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: true, logviewer: true, hotspot: false });
    admin.addUser('acme', 'alice', { netflow: true, logviewer: true, hotspot: false });
    admin.addEntity('empty', { netflow: false, logviewer: true, hotspot: false });
    admin.addUser('empty', 'bob', { netflow: false, logviewer: true, hotspot: false });
    const auth = new AuthService(admin, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 100,
      failureWindowSec: 300,
      now: Date.now,
    });
    const app = createApp({
      auth,
      logger: createLogger('silent'),
      bodyLimitBytes: 1024 * 1024,
      areas: {
        logviewer: createLogviewerRoutes({
          storeOf: (entity) => (entity === 'acme' ? store : undefined),
          timezone: 'UTC',
          onStoreError: (_entity, err) => storeErrors.push(err),
        }),
      },
    });
    server = await serveOnLoopback(app.fetch);
    const issue = async (entity: string, user: string) => {
      const cred = generateCredential();
      admin.replaceCredential(entity, user, cred.apiId, await hashSecret(cred.secret));
      return cred;
    };
    const login = async (area: string, cred: { apiId: string; secret: string }) =>
      (await postJson(`${server.url}/svc/api/${area}/auth`, { api_id: cred.apiId, secret: cred.secret })).body.result
        .access_token as string;
    const alice = await issue('acme', 'alice');
    token = await login('logviewer', alice);
    netflowToken = await login('netflow', alice);
    otherToken = await login('logviewer', await issue('empty', 'bob'));
  });

  afterAll(async () => {
    await server?.close();
    admin?.close();
    await store?.close();
    await events?.close();
  });

  const get = (path: string, params: Record<string, string> = {}, t: string = token) =>
    getJson(`${server.url}/svc/api/logviewer/${path}?${new URLSearchParams(params).toString()}`, t);

  const expected = (f: SyslogFilter) => rows.filter((r) => modelMatches(r, f)).sort(modelOrder);

  it(`pages through search newest first until isLastPage (${DIALECT_LABEL[dialect]})`, async () => {
    const seen: number[] = [];
    for (let page = 1; ; page++) {
      const res = await get('search', { perPage: '7', page: String(page) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: true, page, perPage: 7 });
      seen.push(...res.body.result.map((r: { ID: number }) => r.ID));
      if (res.body.isLastPage) {
        expect(res.body.message).toBe(LAST_PAGE);
        break;
      }
      expect(res.body.message).toBe(MORE_PAGES);
      expect(res.body.result).toHaveLength(7);
    }
    expect(seen).toEqual(expected({}).map((r) => r.id));
  });

  it('returns records with the fields of api.md 2.3', async () => {
    const res = await get('latest', { perPage: '1' });
    const newest = expected({})[0]!;
    expect(res.body.result).toEqual([
      {
        ID: newest.id,
        DeviceReportedTime: newest.deviceReportedTime,
        ReceivedAt: newest.receivedAt,
        FromHost: newest.host,
        SysLogTag: newest.tag,
        processid: /\[(\d+)\]/.exec(newest.tag)?.[1] ?? '',
        Message: newest.message,
        Priority: newest.priority,
      },
    ]);
    expect(res.body).toMatchObject({ page: 1, perPage: 1, isLastPage: false });
  });

  it('defaults to page 1 of 100 and reduces perPage 5000 to 2000', async () => {
    const def = await get('latest');
    expect(def.body).toMatchObject({ status: true, page: 1, perPage: 100, isLastPage: true, message: LAST_PAGE });
    expect(def.body.result).toHaveLength(30);
    const big = await get('search', { perPage: '5000' });
    expect(big.status).toBe(200);
    expect(big.body.perPage).toBe(2000);
  });

  it('applies every filter and their combinations', async () => {
    const cases: Array<[Record<string, string>, SyslogFilter]> = [
      [{ host: 'ap-1' }, { host: 'ap-1' }],
      [{ host: "o'hara" }, { host: "o'hara" }],
      [{ host: 'AP-1' }, { host: 'AP-1' }],
      [{ priority: '0' }, { priority: 0 }],
      [{ priority: '7' }, { priority: 7 }],
      [{ tag: 'hostapd' }, { tag: 'hostapd' }],
      [{ tag: 'hostapd[1]:' }, { tag: 'hostapd' }],
      [{ tag: 'sshd:' }, { tag: 'sshd' }],
      [{ tag: 'app_1' }, { tag: 'app_1' }],
      [{ tag: 'app%' }, { tag: 'app%' }],
      [{ message: '100%' }, { message: '100%' }],
      [{ message: '%' }, { message: '%' }],
      [{ message: '_' }, { message: '_' }],
      [{ message: '\\' }, { message: '\\' }],
      [{ message: 'mixed' }, { message: 'mixed' }],
      [
        { host: 'routerA', tag: 'sshd', priority: '0' },
        { host: 'routerA', tag: 'sshd', priority: 0 },
      ],
      [
        { host: 'ap-1', message: 'n1', startTime: '2025-07-05', endTime: '2025-07-06' },
        { host: 'ap-1', message: 'n1', startTime: '2025-07-05 00:00:00', endTime: '2025-07-06 00:00:00' },
      ],
    ];
    for (const [params, filter] of cases) {
      for (const path of params.startTime ? ['search'] : ['search', 'latest']) {
        const res = await get(path, { ...params, perPage: '2000' });
        expect(res.status, `${path} ${JSON.stringify(params)}`).toBe(200);
        expect(
          res.body.result.map((r: { ID: number }) => r.ID),
          `${path} ${JSON.stringify(params)}`,
        ).toEqual(expected(filter).map((r) => r.id));
      }
    }
  });

  it('reads every time form, inclusive at both ends, ISO offsets converted to the service zone', async () => {
    const ids = async (params: Record<string, string>) =>
      (await get('search', { ...params, perPage: '2000' })).body.result.map((r: { ReceivedAt: string }) => r.ReceivedAt);
    const day = await ids({ startTime: '2025-07-05', endTime: '2025-07-06' });
    expect(day[0]).toBe('2025-07-06 00:00:00');
    expect(day.at(-1)).toBe('2025-07-05 00:00:00');
    expect(day).toHaveLength(13);
    expect(await ids({ startTime: '2025-07-05 00:00', endTime: '2025-07-06 00:00:00' })).toEqual(day);
    expect(await ids({ startTime: '2025-07-05T02:00:00+02:00', endTime: '2025-07-06T00:00:00Z' })).toEqual(day);
    expect(await ids({ startTime: '2025-07-05T00:00:00.001Z', endTime: '2025-07-05T03:59:59.999Z' })).toEqual([
      '2025-07-05 02:00:00',
    ]);
    expect(await ids({ startTime: '2030-01-01' })).toEqual([]);
  });

  it('answers each malformed parameter with 400 naming it', async () => {
    const bad: Array<[string, Record<string, string>, string]> = [
      ['search', { priority: '8' }, 'priority'],
      ['search', { priority: '-1' }, 'priority'],
      ['latest', { priority: 'high' }, 'priority'],
      ['search', { page: '0' }, 'page'],
      ['latest', { page: '-2' }, 'page'],
      ['search', { page: 'x' }, 'page'],
      ['search', { perPage: '0' }, 'perPage'],
      ['latest', { perPage: '1.5' }, 'perPage'],
      ['search', { startTime: 'yesterday' }, 'startTime'],
      ['search', { startTime: '2025-02-30' }, 'startTime'],
      ['search', { endTime: '2025-07-05 25:00' }, 'endTime'],
      ['search', { startTime: '2025-07-06', endTime: '2025-07-05' }, 'endTime'],
      ['latest', { startTime: '2025-07-05' }, 'startTime'],
      ['latest', { endTime: '2025-07-05' }, 'endTime'],
      ['search', { message: 'x'.repeat(1001) }, 'message'],
    ];
    for (const [path, params, name] of bad) {
      const res = await get(path, params);
      expect(res.status, `${path} ${JSON.stringify(params)}`).toBe(400);
      expect(res.body.status).toBe(false);
      expect(res.body.errorMessage, `${path} ${JSON.stringify(params)}`).toContain(`'${name}'`);
    }
  });

  it('ignores unknown parameters and changes nothing whatever the filters carry', async () => {
    const before = await countRows(client);
    for (const value of ["'; DELETE FROM SystemEvents; --", "x' OR '1'='1", '%', '_', '\\', '*', '[', '"']) {
      for (const name of ['host', 'tag', 'message']) {
        const res = await get('search', { [name]: value, perPage: '2000', unknown: 'z' });
        expect(res.status).toBe(200);
        const filter: SyslogFilter = { [name]: value };
        expect(
          res.body.result.map((r: { ID: number }) => r.ID),
          `${name}=${value}`,
        ).toEqual(expected(filter).map((r) => r.id));
      }
    }
    expect(await countRows(client)).toBe(before);
  });

  it('needs a logviewer token of an entity with a syslog database', async () => {
    expect((await get('latest', {}, '')).status).toBe(401);
    expect((await get('latest', {}, netflowToken)).status).toBe(403);
    const none = await get('latest', {}, otherToken);
    expect(none.status).toBe(403);
    expect(none.body.errorMessage).toContain("'empty'");
  });

  it('answers 503 when the table cannot be read, and tells the operator why', async () => {
    await client.execute('ALTER TABLE SystemEvents RENAME TO SystemEventsGone');
    store.forgetTableInfo();
    try {
      const res = await get('latest');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: false, errorMessage: 'The syslog database cannot be read right now.' });
      expect(storeErrors.length).toBeGreaterThan(0);
    } finally {
      await client.execute('ALTER TABLE SystemEventsGone RENAME TO SystemEvents');
      store.forgetTableInfo();
    }
    expect((await get('latest')).status).toBe(200);
  });
});
