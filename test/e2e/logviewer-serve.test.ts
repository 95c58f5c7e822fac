/**
 * `netsvc serve` with no syslog database configured: the embedded receiver
 * listens on loopback (UDP and TCP, one non-standard port), `logger` sends
 * RFC 3164 and RFC 5424 messages to it, and they come back through
 * GET /svc/api/logviewer/latest with a real token.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackConfig } from '../helpers/service.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { createLogger } from '../../src/log.js';
import { openAdminStore } from '../../src/admin-store.js';
import { startService, type ServiceHandle } from '../../src/main.js';
import { requireAll } from '../helpers/databases.js';
import { getJson, postJson } from '../helpers/http.js';
import { freePort } from '../helpers/net.js';

const run = promisify(execFile);
const haveLogger = await run('logger', ['-V']).then(
  () => true,
  () => false,
);
if (!haveLogger && requireAll) throw new Error('logger (bsdutils) is missing and NETSVC_REQUIRE_ALL=1');

describe.skipIf(!haveLogger)('netsvc serve: embedded syslog receiver → logviewer latest', () => {
  let dir: string;
  let service: ServiceHandle;
  let port: number;
  let token: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-serve-syslog-'));
    port = await freePort();
    const config = loopbackConfig(dir, {
      syslogReceiver: { host: '127.0.0.1', port, flushIntervalMs: 50 },
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
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function latest(params: Record<string, string>): Promise<any[]> {
    const res = await getJson(`${service.url}/svc/api/logviewer/latest?${new URLSearchParams(params).toString()}`, token);
    expect(res.status).toBe(200);
    return res.body.result;
  }

  async function waitLatest(message: string): Promise<any> {
    const until = Date.now() + 5000;
    for (;;) {
      const [row] = await latest({ message, perPage: '1' });
      if (row) return row;
      if (Date.now() > until) throw new Error(`'${message}' never appeared`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const send = (args: string[], text: string) =>
    run('logger', ['-n', '127.0.0.1', '-P', String(port), ...args, text], { env: { ...process.env, TZ: 'UTC' } });

  it('shows a message sent over UDP (RFC 5424)', async () => {
    await send(['-d', '--id=321', '-t', 'udpapp', '-p', 'local3.crit'], 'serve-udp-5424 s1');
    expect(await waitLatest('serve-udp-5424 s1')).toMatchObject({
      SysLogTag: 'udpapp[321]',
      processid: '321',
      Priority: 2,
      Message: 'serve-udp-5424 s1',
    });
  });

  it('shows a message sent over TCP (RFC 3164, octet-counted)', async () => {
    await send(['-T', '--octet-count', '--rfc3164', '-t', 'sshd', '-p', 'auth.warning'], 'serve-tcp-3164 s2');
    expect(await waitLatest('serve-tcp-3164 s2')).toMatchObject({
      SysLogTag: 'sshd:',
      processid: '',
      Priority: 4,
      Message: ' serve-tcp-3164 s2',
    });
  });

  it('lists them newest first and filters them like any SystemEvents table', async () => {
    const rows = await latest({ message: 'serve-' });
    expect(rows.map((r) => r.Message.trim())).toEqual(['serve-tcp-3164 s2', 'serve-udp-5424 s1']);
    expect((await latest({ tag: 'sshd[1]:' })).map((r) => r.Message)).toEqual([' serve-tcp-3164 s2']);
    expect((await latest({ priority: '2' })).map((r) => r.Message)).toEqual(['serve-udp-5424 s1']);
  });
});
