/**
 * The hotspot API while its database server restarts or hangs: the service
 * stays up, answers 503 within the configured time-out while the server is
 * away, 200 again once it is back, and never leaves a half-created user.
 * The server is reached through a loopback proxy (helpers/tcp-proxy.ts), so
 * the outage hits only this file's connections, not the server other test
 * files share; the sessions are ended by the real server (pg_terminate_backend,
 * KILL CONNECTION), which is what a restart does to them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { radiusStoreFor } from '../../../storage/radius/open-radius-store.js';
import type { RadiusStore } from '../../../storage/radius/radius-store.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import type { SqlTimeouts } from '../../../storage/sql/sql-client.js';
import type { SqliteSqlClient } from '../../../storage/sql/sqlite-sql-client.js';
import { availableDialects, serverOf, terminateSessions, urlThroughPort } from '../../helpers/databases.js';
import { startHotspotApi, type HotspotApi } from '../../helpers/hotspot-api.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';
import { startProxyProcess, startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';

const serverDialects = (await availableDialects()).filter((d) => d !== 'sqlite');
const TIMEOUTS: SqlTimeouts = { connectMs: 1000, statementMs: 1500, operationMs: 2000 };
/** Scheduling slack on a loaded 2-core machine, on top of the operation time-out. */
const SLACK_MS = 1500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The status of GET /users once the API answers 200 again, asked every 250 ms for up to 10 s (the last status otherwise). */
async function statusOnceBack(api: HotspotApi): Promise<number> {
  let status = 0;
  for (let i = 0; i < 40 && status !== 200; i++) {
    status = (await api.call('GET', '/users')).status;
    if (status !== 200) await sleep(250);
  }
  return status;
}

describe.each(serverDialects)('hotspot API while the %s server restarts or hangs', (dialect) => {
  let t: RadiusTestDatabase;
  let proxy: TcpProxy;
  let store: RadiusStore;
  let api: HotspotApi;
  const heard: string[] = [];

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { timeZone: 'UTC' });
    const { host, port } = serverOf(t.db);
    proxy = await startTcpProxy(host, port);
    store = radiusStoreFor(openSqlClient(urlThroughPort(t.db, proxy.port), '/', TIMEOUTS), { timeZone: 'UTC' });
    api = await startHotspotApi(store, { onStoreError: (_entity, err) => heard.push(err.code) });
  });

  afterAll(async () => {
    await api?.close();
    await store?.close();
    await proxy?.close();
    await t?.close();
  });

  /** Users whose netsvc row, password row and FreeRADIUS group rows do not all agree. */
  async function halfCreated(): Promise<string[]> {
    const info = await t.raw.query<{ username: string }>('SELECT username FROM netsvc_userinfo');
    const pw = await t.raw.query<{ username: string }>("SELECT username FROM radcheck WHERE attribute = 'Cleartext-Password'");
    const a = new Set(info.map((r) => r.username));
    const b = new Set(pw.map((r) => r.username));
    return [...[...a].filter((u) => !b.has(u)), ...[...b].filter((u) => !a.has(u))];
  }

  it('stays up through a restart during 30 concurrent creations: 503 while away, 200 after, no half-created user', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `restart-${dialect}-${i}`);
    const create = (username: string) => api.call('POST', '/users', { username, usertype: 'user', password: 'Secret-pw1' });

    const first = Promise.all(names.map(create));
    // Let the creations reach the server, then do to their sessions what a restart does, and stay away a while.
    await sleep(40);
    await terminateSessions(t.db);
    await proxy.down();
    let firstResults: Awaited<typeof first>;
    try {
      const away = await Promise.all([api.call('GET', '/users'), create(`restart-${dialect}-late`)]);
      expect(away.map((r) => r.status)).toEqual([503, 503]);
      expect(away[0]!.body).toEqual({ status: false, errorMessage: 'The RADIUS database cannot be reached right now.' });
      firstResults = await first;
    } finally {
      await proxy.up();
    }
    // Each creation either happened or was refused as "not now": none failed as a server error.
    for (const r of firstResults) expect([200, 503], JSON.stringify(r.body)).toContain(r.status);

    // What was refused is sent again, as a client would; one whose commit landed before its answer was lost is 409.
    for (const [i, r] of firstResults.entries()) {
      if (r.status === 200) continue;
      const again = await create(names[i]!);
      expect([200, 409]).toContain(again.status);
    }
    const listed = await api.call('GET', '/users?perPage=100');
    expect(listed.status).toBe(200);
    const usernames = (listed.body.result as Array<{ username: string }>)
      .map((u) => u.username)
      .filter((u) => u.startsWith(`restart-${dialect}-`));
    expect(usernames.sort()).toEqual([...names].sort());
    expect(await halfCreated()).toEqual([]);
    expect(heard).toContain('unavailable');
  });

  it('answers every request 503 within the operation time-out while the server is stopped (SIGSTOP), and 200 once it runs again', async () => {
    // The path to the server is a process of its own, stopped with SIGSTOP as the server would be:
    // connections stay open and new ones are accepted by the kernel, but nothing answers.
    const { host, port } = serverOf(t.db);
    const stopped = await startProxyProcess(host, port);
    const hung = radiusStoreFor(openSqlClient(urlThroughPort(t.db, stopped.port), '/', TIMEOUTS), { timeZone: 'UTC' });
    const hungApi = await startHotspotApi(hung);
    try {
      expect(
        (await hungApi.call('POST', '/users', { username: `hang-${dialect}`, usertype: 'user', password: 'Secret-pw1' })).status,
      ).toBe(200);
      stopped.stop();
      const requests: Array<[string, string, unknown?]> = [
        ['GET', '/users'],
        ['GET', '/users/1'],
        ['POST', '/users', { username: `hang-${dialect}-2`, usertype: 'user', password: 'Secret-pw1' }],
        ['GET', '/profiles'],
        ['GET', '/online-sessions'],
      ];
      try {
        const timed = await Promise.all(
          requests.map(async ([method, path, body]) => {
            const started = performance.now();
            const res = await hungApi.call(method, path, body);
            return { what: `${method} ${path}`, status: res.status, ms: performance.now() - started };
          }),
        );
        for (const r of timed) {
          expect(r.status, r.what).toBe(503);
          expect(r.ms, r.what).toBeLessThan(TIMEOUTS.operationMs + SLACK_MS);
        }
      } finally {
        stopped.resume();
      }
      expect(await statusOnceBack(hungApi)).toBe(200);
      expect(await halfCreated()).toEqual([]);
      // Answered 503, so not created: the work queued while the server was stopped must not land after SIGCONT.
      await sleep(TIMEOUTS.operationMs);
      const late = await t.raw.query<{ n: number }>('SELECT COUNT(*) AS n FROM netsvc_userinfo WHERE username = ?', [
        `hang-${dialect}-2`,
      ]);
      expect(Number(late[0]!.n)).toBe(0);
    } finally {
      await hungApi.close();
      await hung.close();
      await stopped.close();
    }
  });

  it('answers 503 within the time-out through a frozen connection too, and 200 once it flows again', async () => {
    proxy.freeze();
    try {
      const started = performance.now();
      const res = await api.call('GET', '/users');
      expect(res.status).toBe(503);
      expect(performance.now() - started).toBeLessThan(TIMEOUTS.operationMs + SLACK_MS);
    } finally {
      proxy.thaw();
    }
    expect(await statusOnceBack(api)).toBe(200);
  });
});

describe('hotspot API on a full SQLite disk', () => {
  it('answers 503 naming the full disk, keeps every user stored before, and works again once there is room', async () => {
    const t = await createRadiusDatabase('sqlite', { timeZone: 'UTC' });
    const client = openSqlClient(t.db.url, '/');
    // SQLite's own limit gives the same SQLITE_FULL a full file system gives, without filling the machine's disk.
    const sqlite = (client as SqliteSqlClient).db;
    const pages = Number(sqlite.pragma('page_count', { simple: true }));
    sqlite.pragma(`max_page_count = ${pages + 2}`);
    const store = radiusStoreFor(client, { timeZone: 'UTC' });
    const api = await startHotspotApi(store);
    try {
      const created: string[] = [];
      let full: { status: number; body: any } | undefined;
      for (let i = 0; i < 2000 && !full; i++) {
        const username = `full-${i}-${'x'.repeat(40)}`;
        const res = await api.call('POST', '/users', {
          username,
          usertype: 'user',
          password: 'Secret-pw1',
          address: 'y'.repeat(200),
        });
        if (res.status === 200) created.push(username);
        else full = res;
      }
      expect(full).toEqual({
        status: 503,
        body: {
          status: false,
          errorMessage: 'The RADIUS database has no space left: nothing was changed. Free space on its disk, then try again.',
        },
      });
      expect(created.length).toBeGreaterThan(0);
      const listed = await api.call('GET', '/users?perPage=2000');
      expect(listed.status).toBe(200);
      expect((listed.body.result as Array<{ username: string }>).map((u) => u.username).sort()).toEqual([...created].sort());

      sqlite.pragma('max_page_count = 1000000');
      expect(
        (await api.call('POST', '/users', { username: 'after-room', usertype: 'user', password: 'Secret-pw1' })).status,
      ).toBe(200);
    } finally {
      await api.close();
      await store.close();
      await t.close();
    }
  });
});
