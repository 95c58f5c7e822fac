/**
 * The logviewer answers 503 only when the syslog database cannot be used:
 * while its server is unreachable (a loopback proxy in front of it is taken
 * down, helpers/tcp-proxy.ts, as in hotspot-outage.test.ts) it answers 503
 * and tells the operator (SyslogStoreError `unavailable`), 200 once it is
 * back; a statement that fails on a database that answers and has its table
 * (a column gone) is a fault, not an outage: 500, and no outage is reported.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.js';
import { AuthService } from '../../../api/auth.js';
import { createLogviewerRoutes } from '../../../api/routes/logviewer.js';
import { generateCredential, hashSecret } from '../../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../../storage/admin/sqlite-admin-store.js';
import type { SqlTimeouts } from '../../../storage/sql/sql-client.js';
import { openSyslogStore } from '../../../storage/syslog/open-syslog-store.js';
import type { SqlSyslogStore } from '../../../storage/syslog/sql-syslog-store.js';
import type { SyslogStoreErrorCode } from '../../../storage/syslog/syslog-store.js';
import { createLogger } from '../../../src/log.js';
import { availableDialects, serverOf, urlThroughPort } from '../../helpers/databases.js';
import { getJson, postJson, serveOnLoopback, type TestServer } from '../../helpers/http.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { createSystemEventsDatabase, seed, type SystemEventsDatabase } from '../../storage/syslog/system-events.js';

const dialects = await availableDialects();
const TIMEOUTS: SqlTimeouts = { connectMs: 1000, statementMs: 1500, operationMs: 2000 };
const UNAVAILABLE = { status: false, errorMessage: 'The syslog database cannot be read right now.' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(dialects)('logviewer API when the %s syslog database fails', (dialect) => {
  let events: SystemEventsDatabase;
  let proxy: TcpProxy | undefined;
  let store: SqlSyslogStore;
  let admin: SqliteAdminStore;
  let server: TestServer;
  let token: string;
  const heard: SyslogStoreErrorCode[] = [];

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_logviewer_outage');
    await seed(events.client, [
      {
        receivedAt: '2025-07-05 10:00:00',
        deviceReportedTime: '2025-07-05 10:00:00',
        host: 'routerA',
        tag: 'sshd[812]:',
        priority: 6,
        facility: 4,
        message: 'Accepted password for bob',
      },
    ]);
    let url = events.db.url;
    if (dialect !== 'sqlite') {
      // The outage hits only this file's connections, not the server the other test files share.
      const { host, port } = serverOf(events.db);
      proxy = await startTcpProxy(host, port);
      url = urlThroughPort(events.db, proxy.port);
    }
    store = openSyslogStore(url, '/', {}, TIMEOUTS);
    admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: false, logviewer: true, hotspot: false });
    admin.addUser('acme', 'alice', { netflow: false, logviewer: true, hotspot: false });
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
          onStoreError: (_entity, err) => heard.push(err.code),
        }),
      },
    });
    server = await serveOnLoopback(app.fetch);
    const cred = generateCredential();
    admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    token = (await postJson(`${server.url}/svc/api/logviewer/auth`, { api_id: cred.apiId, secret: cred.secret })).body.result
      .access_token as string;
  });

  afterAll(async () => {
    await server?.close();
    admin?.close();
    await store?.close();
    await proxy?.close();
    await events?.close();
  });

  const latest = () => getJson(`${server.url}/svc/api/logviewer/latest`, token);

  // SQLite has no server to lose (not a skip: the case does not exist there).
  if (dialect !== 'sqlite') {
    it('answers 503 while the server is unreachable, tells the operator, and 200 once it is back', async () => {
      expect((await latest()).status).toBe(200);
      heard.length = 0;
      await proxy!.down();
      try {
        const away = await latest();
        expect(away.status).toBe(503);
        expect(away.body).toEqual(UNAVAILABLE);
        expect(heard).toContain('unavailable');
      } finally {
        await proxy!.up();
      }
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        status = (await latest()).status;
        if (status !== 200) await sleep(250);
      }
      expect(status).toBe(200);
    });
  }

  it('answers 500, not 503, when a statement fails on a database that answers and has its table, and reports no outage', async () => {
    expect((await latest()).status).toBe(200);
    heard.length = 0;
    await events.client.execute('ALTER TABLE SystemEvents RENAME COLUMN Message TO MessageGone');
    store.forgetTableInfo();
    try {
      const res = await latest();
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ status: false, errorMessage: 'Internal server error.' });
      expect(heard).toEqual([]);
    } finally {
      await events.client.execute('ALTER TABLE SystemEvents RENAME COLUMN MessageGone TO Message');
      store.forgetTableInfo();
    }
    expect((await latest()).status).toBe(200);
  });

  it('still answers 503 for a missing SystemEvents table (schema_missing), as the hotspot does for missing tables', async () => {
    heard.length = 0;
    await events.client.execute('ALTER TABLE SystemEvents RENAME TO SystemEventsGone');
    store.forgetTableInfo();
    try {
      const res = await latest();
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(heard).toEqual(['schema_missing']);
    } finally {
      await events.client.execute('ALTER TABLE SystemEventsGone RENAME TO SystemEvents');
      store.forgetTableInfo();
    }
    expect((await latest()).status).toBe(200);
  });
});
