/**
 * serve's syslog path while another process holds `BEGIN EXCLUSIVE` on the
 * receiver's SQLite file (issue 16, point 7, small): the event loop is never
 * held by the lock (/metrics and a logviewer query answer at once), and every
 * message sent meanwhile is either written once the lock goes or counted as
 * dropped; none vanish.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  holdSqliteLock,
  openIdleConnections,
  syslogCounters,
  syslogLine,
  type HeldLock,
} from '../../../bench/hostile-syslog-lib.js';
import { generateCredential, hashSecret } from '../../../storage/admin/secret-hash.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { createLogger } from '../../../src/log.js';
import { openAdminStore } from '../../../src/admin-store.js';
import { startService, type ServiceHandle } from '../../../src/main.js';
import { postJson } from '../../helpers/http.js';
import { freePort, sendUdp } from '../../helpers/net.js';
import { loopbackConfig } from '../../helpers/service.js';
import { availableDialects } from '../../helpers/databases.js';
import { redactUrl } from '../../../storage/sql/sql-client.js';
import { createSystemEventsDatabase, type SystemEventsDatabase } from '../../storage/syslog/system-events.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('netsvc serve: syslog SQLite locked by another process', () => {
  let dir: string;
  let service: ServiceHandle;
  let port: number;
  let token: string;
  let lock: HeldLock | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-syslog-lock-'));
    port = await freePort();
    const config = loopbackConfig(dir, {
      syslogReceiver: { host: '127.0.0.1', port, tcp: false, flushIntervalMs: 50, batchSize: 100, maxQueue: 1000 },
    });
    const admin = openAdminStore(config);
    admin.addEntity('default', { logviewer: true });
    admin.addUser('default', 'ops', { logviewer: true });
    const cred = generateCredential();
    admin.replaceCredential('default', 'ops', cred.apiId, await hashSecret(cred.secret));
    admin.close();
    service = await startService(config, { logger: createLogger('silent'), now: Date.now });
    token = (await postJson(`${service.url}/svc/api/logviewer/auth`, { api_id: cred.apiId, secret: cred.secret })).body.result
      .access_token;
  });

  afterAll(async () => {
    lock?.kill();
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const timed = async (
    url: string,
    headers: Record<string, string> = {},
  ): Promise<{ ms: number; status: number; text: string }> => {
    const a = performance.now();
    const res = await fetch(url, { headers });
    const text = await res.text();
    return { ms: performance.now() - a, status: res.status, text };
  };

  it('answers /metrics and logviewer at once during the lock, then stores what fits the queue and counts the rest as dropped', async () => {
    const sent = 1500;
    const file = join(dir, 'data', 'syslog.sqlite');
    lock = await holdSqliteLock(file, 3000);
    let locked = true;
    void lock.released.then(() => (locked = false));

    // 1 500 messages over about 1.5 s while the file is locked; the queue holds 1 000.
    const sending = (async () => {
      for (let i = 0; i < sent; i += 50) {
        for (let j = i; j < i + 50; j++) await sendUdp(port, syslogLine(`locked-${String(j).padStart(4, '0')}`));
        await sleep(50);
      }
    })();
    const metricsMs: number[] = [];
    const latestMs: number[] = [];
    while (locked) {
      const m = await timed(`${service.url}/metrics`);
      expect(m.status).toBe(200);
      metricsMs.push(m.ms);
      const l = await timed(`${service.url}/svc/api/logviewer/latest?perPage=5`, { authorization: `Bearer ${token}` });
      expect(l.status).toBe(200);
      latestMs.push(l.ms);
      await sleep(50);
    }
    await sending;
    // Waiting out SQLite's busy_timeout would show here as seconds; nothing waits on the lock.
    expect(Math.max(...metricsMs)).toBeLessThan(500);
    expect(Math.max(...latestMs)).toBeLessThan(500);
    expect(metricsMs.length).toBeGreaterThan(10);

    let c = syslogCounters((await timed(`${service.url}/metrics`)).text);
    for (const end = Date.now() + 10_000; (c.queueDepth > 0 || c.receivedUdp < sent - c.kernelDrops) && Date.now() < end;) {
      await sleep(50);
      c = syslogCounters((await timed(`${service.url}/metrics`)).text);
    }
    expect(c.writeErrors).toBeGreaterThan(0);
    expect(c.queueDepth).toBe(0);
    // Every message accounted for: written after the lock, or dropped (the oldest) and counted.
    expect(c.stored + c.dropped + c.kernelDrops).toBe(sent);
    expect(c.dropped).toBeGreaterThanOrEqual(sent - 1000 - c.kernelDrops);
    const raw = openSqlClient(`sqlite:${file}`, dir);
    try {
      const rows = await raw.query<{ n: number }>('SELECT COUNT(*) AS n FROM SystemEvents');
      expect(Number(rows[0]!.n)).toBe(c.stored);
      // The newest are the ones kept.
      const newest = await raw.query<{ m: string }>(
        "SELECT Message AS m FROM SystemEvents WHERE Message LIKE 'locked-%' ORDER BY ID DESC LIMIT 1",
      );
      expect(newest[0]?.m).toBe(`locked-${String(sent - 1).padStart(4, '0')}`);
    } finally {
      await raw.close();
    }
  });
});

describe('netsvc serve: the receiver limits come from syslogReceiver', () => {
  let dir: string;
  let service: ServiceHandle;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-syslog-limits-'));
    port = await freePort();
    const config = loopbackConfig(dir, {
      syslogReceiver: {
        host: '127.0.0.1',
        port,
        maxConnectionsPerAddress: 2,
        maxConnections: 3,
        tcpIdleTimeoutSec: 1,
        receiveBuffer: 64 * 1024,
      },
    });
    service = await startService(config, { logger: createLogger('silent'), now: Date.now });
  });

  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('caps TCP connections per address and in all, closes idle ones, and sets the UDP receive buffer', async () => {
    const scrape = async () => syslogCounters(await (await fetch(`${service.url}/metrics`)).text());
    const a = await openIdleConnections(port, '127.0.0.2', 3);
    const b = await openIdleConnections(port, '127.0.0.3', 2);
    try {
      await sleep(100);
      expect(a.open()).toBe(2);
      expect(b.open()).toBe(1);
      const c = await scrape();
      expect(c).toMatchObject({ tcpRejectedAddress: 1, tcpRejectedTotal: 2, tcpOpen: 3 });
      if (process.platform === 'linux') expect(c.receiveBuffer).toBe(64 * 1024);
      for (const end = Date.now() + 5000; (a.open() || b.open()) && Date.now() < end;) await sleep(50);
      expect(a.open() + b.open()).toBe(0);
      expect((await scrape()).tcpIdleClosed).toBe(3);
    } finally {
      a.destroy();
      b.destroy();
    }
  });
});

const servers = (await availableDialects()).filter((d) => d !== 'sqlite');

describe.each(servers)('netsvc serve: a syslog database on %s', (dialect) => {
  let dir: string;
  let events: SystemEventsDatabase;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-syslog-external-'));
    events = await createSystemEventsDatabase(dialect, 'netsvc_feed');
  });
  afterAll(async () => {
    await events?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const start = async (receiver: Record<string, unknown>, lines: string[]) => {
    const port = await freePort();
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const config = loopbackConfig(dir, {
      entities: { default: { syslog: events.db.url } },
      syslogReceiver: { host: '127.0.0.1', port, tcp: false, flushIntervalMs: 50, ...receiver },
    });
    return { port, service: await startService(config, { logger: createLogger('info', sink), now: Date.now }) };
  };

  it('says at start-up what feeds it and how to have the embedded receiver feed it', async () => {
    const lines: string[] = [];
    const { service, port } = await start({}, lines);
    await service.close();
    const off = lines.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.startsWith('syslog receiver off'));
    expect(off?.msg).toBe(
      `syslog receiver off: entity 'default' reads ${redactUrl(events.db.url)}, which rsyslog (or another writer) must feed; ` +
        `set syslogReceiver.feedExternal (NETSVC_SYSLOG_RECEIVER__FEED_EXTERNAL=true) for netsvc's receiver on port ${port} to write into it`,
    );
  });

  it('with syslogReceiver.feedExternal, the embedded receiver writes what it receives into SystemEvents', async () => {
    const { service, port } = await start({ feedExternal: true }, []);
    try {
      const marker = `fed-${dialect}-${Date.now()}`;
      await sendUdp(port, syslogLine(marker));
      let rows: Array<{ message: string; fromhost: string; priority: number | string }> = [];
      for (let i = 0; i < 100 && rows.length === 0; i++) {
        await sleep(50);
        rows = await events.client.query(
          'SELECT Message AS message, FromHost AS fromhost, Priority AS priority FROM SystemEvents WHERE Message = ?',
          [marker],
        );
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]!.fromhost).toBe('bench-host');
      expect(Number(rows[0]!.priority)).toBe(6);
    } finally {
      await service.close();
    }
  });
});
