/**
 * End to end with a real rsyslogd: it receives RFC 3164 and RFC 5424
 * messages from `logger` over UDP and TCP on loopback and writes them, with
 * its stock templates, into SystemEvents on a fresh MariaDB database and a
 * fresh PostgreSQL database created from rsyslog's own schema files.
 * `netsvc serve` (its HTTP API on loopback) reads each database as one
 * entity's syslog database, and every message is found through
 * GET /svc/api/logviewer/search and /latest with a real token, with the
 * right host, tag, processid, priority and times. The embedded receiver's
 * parser is checked against rsyslog on the same raw datagrams.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendUdp } from '../helpers/net.js';
import { loopbackConfig } from '../helpers/service.js';
import { parseSyslog } from '../../collector/syslog/syslog-parser.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import type { SqlClient } from '../../storage/sql/sql-client.js';
import type { SyslogRecord } from '../../storage/syslog/syslog-store.js';
import { createLogger } from '../../src/log.js';
import { openAdminStore } from '../../src/admin-store.js';
import { startService, type ServiceHandle } from '../../src/main.js';
import { availableDialects, createTestDatabase, requireAll, type TestDatabase } from '../helpers/databases.js';
import { getJson, postJson } from '../helpers/http.js';
import { clientFor, createSystemEvents } from '../storage/syslog/system-events.js';
import { rsyslogAvailable, startRsyslogd, type RsyslogInstance } from './rsyslogd.js';

const run = promisify(execFile);

const probeDir = mkdtempSync(`${tmpdir()}/netsvc-rsyslog-probe-`);
const haveRsyslog = await rsyslogAvailable(probeDir);
rmSync(probeDir, { recursive: true, force: true });
if (!haveRsyslog && requireAll) throw new Error('rsyslogd with imtcp/ommysql/ompgsql is missing and NETSVC_REQUIRE_ALL=1');
const dialects = (await availableDialects()).filter((d): d is 'mysql' | 'postgres' => d !== 'sqlite');

/** One database rsyslog writes into, read by netsvc as the syslog database of entity `dialect`. */
interface Backend {
  dialect: 'mysql' | 'postgres';
  db: TestDatabase;
  client: SqlClient;
  /** A logviewer token of a user of this backend's entity. */
  token: string;
}

async function waitFor<T>(fn: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const utc = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

describe.skipIf(!haveRsyslog || dialects.length === 0)('rsyslogd → SystemEvents → netsvc serve → logviewer API', () => {
  const backends: Backend[] = [];
  let rsyslog: RsyslogInstance;
  let dir: string;
  let service: ServiceHandle;
  let before: number;

  beforeAll(async () => {
    for (const dialect of dialects) {
      const db = await createTestDatabase(dialect, 'netsvc_rsyslog');
      const client = clientFor(db.url);
      backends.push({ dialect, db, client, token: '' });
      await createSystemEvents(client);
    }
    rsyslog = await startRsyslogd(backends.map((b) => ({ dialect: b.dialect, url: b.db.url })));

    // netsvc serve as an operator runs it next to rsyslog: one entity per database, rsyslog's zone (UTC here).
    dir = mkdtempSync(join(tmpdir(), 'netsvc-rsyslog-serve-'));
    const config = loopbackConfig(dir, {
      syslogReceiver: { enabled: false, host: '127.0.0.1', port: 0 },
      entities: Object.fromEntries(backends.map((b) => [b.dialect, { syslog: b.db.url }])),
    });
    const admin = openAdminStore(config);
    const creds = [];
    for (const b of backends) {
      admin.addEntity(b.dialect, { logviewer: true });
      admin.addUser(b.dialect, 'ops', { logviewer: true });
      const cred = generateCredential();
      admin.replaceCredential(b.dialect, 'ops', cred.apiId, await hashSecret(cred.secret));
      creds.push(cred);
    }
    admin.close();
    service = await startService(config, { logger: createLogger('silent'), now: Date.now });
    for (const [i, b] of backends.entries()) {
      const login = await postJson(`${service.url}/svc/api/logviewer/auth`, {
        api_id: creds[i]!.apiId,
        secret: creds[i]!.secret,
      });
      expect(login.status).toBe(200);
      b.token = login.body.result.access_token;
    }
    before = Math.floor(Date.now() / 1000) * 1000;
  });

  afterAll(async () => {
    await service?.close();
    await rsyslog?.stop();
    for (const b of backends) {
      await b.client.close();
      await b.db.drop();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** GET /svc/api/logviewer/{path} with the backend's token; the records of a 200 answer. */
  async function api(b: Backend, path: 'search' | 'latest', params: Record<string, string>): Promise<SyslogRecord[]> {
    const res = await getJson(`${service.url}/svc/api/logviewer/${path}?${new URLSearchParams(params).toString()}`, b.token);
    expect(res.status, `${b.dialect} ${path} ${JSON.stringify(params)}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(res.body.status).toBe(true);
    return res.body.result;
  }

  /** The record with `marker` in its message, searched with `params` on every backend, once rsyslog has written it. */
  async function rows(marker: string, params: Record<string, string> = {}): Promise<Array<[Backend, SyslogRecord]>> {
    const out: Array<[Backend, SyslogRecord]> = [];
    for (const b of backends) {
      const row = await waitFor(
        async () => (await api(b, 'search', { ...params, message: marker, perPage: '2' }))[0],
        `${marker} in ${b.dialect}`,
      );
      out.push([b, row]);
    }
    return out;
  }

  async function logger(args: string[], text: string): Promise<void> {
    await run('logger', ['-n', '127.0.0.1', '-P', String(rsyslog.port), ...args, text], { env: { ...process.env, TZ: 'UTC' } });
  }

  const host = hostname();
  const short = host.split('.')[0]!;

  function checkTimes(row: SyslogRecord): void {
    const after = utc(Date.now() + 1000);
    expect(row.ReceivedAt! >= utc(before - 1000) && row.ReceivedAt! <= after, `ReceivedAt ${row.ReceivedAt}`).toBe(true);
    expect(
      row.DeviceReportedTime! >= utc(before - 1000) && row.DeviceReportedTime! <= after,
      `DeviceReportedTime ${row.DeviceReportedTime}`,
    ).toBe(true);
  }

  it('RFC 5424 over UDP: tag APP-NAME[PROCID] without colon, severity as Priority', async () => {
    await logger(['-d', '--id=777', '-t', 'e2eapp', '-p', 'local0.warning'], 'e2e-5424-udp k1');
    for (const [b, row] of await rows('e2e-5424-udp k1', { host, tag: 'e2eapp', priority: '4' })) {
      expect(row, b.dialect).toMatchObject({
        FromHost: host,
        SysLogTag: 'e2eapp[777]',
        processid: '777',
        Priority: 4,
        Message: 'e2e-5424-udp k1',
      });
      checkTimes(row);
    }
  });

  it('RFC 3164 over UDP: tag keeps its colon, message its leading space', async () => {
    await logger(['-d', '--rfc3164', '--id=4242', '-t', 'sshd', '-p', 'auth.err'], 'e2e-3164-udp k2');
    for (const [b, row] of await rows('e2e-3164-udp k2', { host: short, tag: 'sshd:', priority: '3' })) {
      expect(row, b.dialect).toMatchObject({
        FromHost: short,
        SysLogTag: 'sshd[4242]:',
        processid: '4242',
        Priority: 3,
        Message: ' e2e-3164-udp k2',
      });
      checkTimes(row);
    }
  });

  it('RFC 5424 over TCP with octet counting, and RFC 3164 over TCP', async () => {
    await logger(['-T', '--octet-count', '-t', 'tcpapp', '-p', 'user.notice'], 'e2e-5424-tcp k3');
    await logger(['-T', '--rfc3164', '-t', 'hostapd', '-p', 'daemon.info'], 'e2e-3164-tcp k4');
    for (const [b, row] of await rows('e2e-5424-tcp k3', { tag: 'tcpapp[1]', priority: '5' })) {
      expect(row, b.dialect).toMatchObject({
        FromHost: host,
        SysLogTag: 'tcpapp',
        processid: '',
        Priority: 5,
        Message: 'e2e-5424-tcp k3',
      });
      checkTimes(row);
    }
    for (const [b, row] of await rows('e2e-3164-tcp k4', { tag: 'hostapd', priority: '6' })) {
      expect(row, b.dialect).toMatchObject({
        FromHost: short,
        SysLogTag: 'hostapd:',
        processid: '',
        Priority: 6,
        Message: ' e2e-3164-tcp k4',
      });
      checkTimes(row);
    }
  });

  it('finds them by time range (ISO 8601 and wall clock) and lists them newest first', async () => {
    const keys = (found: SyslogRecord[]) => found.map((r) => /k\d/.exec(r.Message)?.[0]);
    for (const b of backends) {
      const iso = { startTime: new Date(before - 1000).toISOString(), endTime: new Date(Date.now() + 1000).toISOString() };
      expect(keys(await api(b, 'search', { message: 'e2e-', ...iso })), b.dialect).toEqual(['k4', 'k3', 'k2', 'k1']);
      const wall = { startTime: utc(before - 1000), endTime: utc(Date.now() + 1000) };
      expect(keys(await api(b, 'search', { message: 'e2e-', ...wall })), b.dialect).toEqual(['k4', 'k3', 'k2', 'k1']);
      expect(await api(b, 'search', { message: 'e2e-', endTime: utc(before - 2000) }), b.dialect).toEqual([]);
      expect(keys(await api(b, 'latest', { message: 'e2e-' })), b.dialect).toEqual(['k4', 'k3', 'k2', 'k1']);
      // A time on both sides of one record picks that record alone.
      const [k2] = await api(b, 'search', { message: 'e2e-3164-udp k2' });
      const around = await api(b, 'search', { tag: 'sshd', startTime: k2!.ReceivedAt!, endTime: k2!.ReceivedAt! });
      expect(
        around.map((r) => r.ID),
        b.dialect,
      ).toContain(k2!.ID);
      expect(
        around.every((r) => r.ReceivedAt === k2!.ReceivedAt),
        b.dialect,
      ).toBe(true);
    }
  });

  it("the embedded receiver's parser fills the columns as rsyslog does", async () => {
    const samples = [
      '<134>1 2026-01-02T03:04:05.678+02:00 routerA myapp 999 ID47 - oracle raw 5424 q1',
      '<38>Jan  2 03:04:05 routerB sshd[1234]: oracle Accepted password for bob q2',
      '<13>1 2026-01-02T03:04:05Z h2 app - MSG01 [zoo@123 tiger="hungry"] oracle with sd q3',
      `<14>Jan  2 03:04:05 h3 prog: oracle it's "quoted" back\\slash héllo ✓ q4`,
      '<191>Jan 12 23:59:59 h4 kernel: oracle q5',
      '<0>1 2026-01-02T03:04:05Z h5 a.b-c 42 - - oracle q6',
    ];
    for (const s of samples) await sendUdp(rsyslog.port, s);
    for (const [i, raw] of samples.entries()) {
      const marker = `oracle`;
      for (const [b, row] of await rows(`q${i + 1}`)) {
        expect(row.Message, b.dialect).toContain(marker);
        const ours = parseSyslog(Buffer.from(raw), { receivedAt: row.ReceivedAt!, sender: '127.0.0.1' });
        // The API has no Facility; it is read from the row itself.
        const [fac] = await b.client.query<{ f: number }>('SELECT Facility AS f FROM SystemEvents WHERE ID = ?', [row.ID]);
        expect(
          {
            host: ours.fromHost,
            tag: ours.sysLogTag,
            priority: ours.priority,
            facility: ours.facility,
            message: ours.message,
            time: ours.deviceReportedTime.slice(5),
          },
          `${b.dialect}: ${raw}`,
        ).toEqual({
          host: row.FromHost,
          tag: row.SysLogTag,
          priority: row.Priority,
          facility: Number(fac?.f),
          message: row.Message,
          time: row.DeviceReportedTime!.slice(5),
        });
      }
    }
  });

  it('loses a message whose host is over 60 characters (rsyslog), where the embedded receiver truncates', async () => {
    const raw = `<134>1 2026-01-02T03:04:05Z ${'h'.repeat(61)} app - - - overlong q7`;
    await sendUdp(rsyslog.port, raw);
    await sendUdp(rsyslog.port, '<134>1 2026-01-02T03:04:05Z shorthost app - - - after overlong q8');
    await rows('after overlong q8');
    for (const b of backends) expect(await api(b, 'search', { message: 'overlong q7' })).toEqual([]);
    expect(parseSyslog(Buffer.from(raw), { receivedAt: '2026-01-02 03:04:06', sender: '127.0.0.1' }).fromHost).toBe(
      'h'.repeat(60),
    );
  });
});
