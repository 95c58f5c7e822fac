/** `netsvc admin unlock` against a running service, and what that service logs about refused logins. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startService, type ServiceHandle } from '../../../src/main.js';
import { runCliCaptured } from '../../helpers/cli.js';
import { postJson } from '../../helpers/http.js';
import { loopbackConfig } from '../../helpers/service.js';

describe('netsvc admin unlock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-unlock-'));
  const data = join(dir, 'data');
  let service: ServiceHandle | undefined;
  afterAll(async () => {
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lifts a lockout the running serve holds, which logged why each login was refused', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    service = await startService(loopbackConfig(dir, { 'auth.maxFailures': 3 }), {
      logger: createLogger('info', sink),
      now: Date.now,
    });
    const cli = (...args: string[]) => runCliCaptured([...args, '-d', data]);
    expect((await cli('admin', 'entity', 'add', 'acme', '--areas', 'netflow')).code).toBe(0);
    expect((await cli('admin', 'user', 'add', 'acme', 'ops', '--areas', 'netflow')).code).toBe(0);
    const cred = JSON.parse((await cli('admin', 'credentials', 'issue', 'acme', 'ops', '--json')).out) as {
      api_id: string;
      secret: string;
    };
    const login = (secret: string) => postJson(`${service!.url}/svc/api/netflow/auth`, { api_id: cred.api_id, secret });

    for (let i = 0; i < 3; i++) expect((await login(`wrong-${i}`)).status).toBe(401);
    expect((await login(cred.secret)).status).toBe(429);
    const refused = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'login refused');
    // One line per address and reason every 10 s: the first wrong secret, then the lockout (refused
    // before its body is read, so without the api_id).
    expect(refused.map((l) => [l.reason, l.client, l.api_id, l.area])).toEqual([
      ['wrong_secret', '127.0.0.1', cred.api_id, 'netflow'],
      ['rate_limited', '127.0.0.1', undefined, 'netflow'],
    ]);
    expect(lines.join('')).not.toContain(cred.secret);
    expect(lines.join('')).not.toContain('wrong-0');

    expect(await cli('admin', 'unlock')).toMatchObject({ code: 2, err: 'netsvc: give one client address, or --all' });
    expect((await cli('admin', 'unlock', 'not-an-ip')).code).toBe(2);
    const unlock = await cli('admin', 'unlock', '127.0.0.1');
    expect(unlock).toMatchObject({ code: 0, out: 'unlock of 127.0.0.1 requested: serve lets it try again at the next attempt' });
    expect((await login(cred.secret)).status).toBe(200);
    // A fresh window: the limit counts from zero again.
    for (let i = 0; i < 3; i++) expect((await login(`again-${i}`)).status).toBe(401);
    expect((await login(cred.secret)).status).toBe(429);
    expect((await cli('admin', 'unlock', '--all')).code).toBe(0);
    expect((await login(cred.secret)).status).toBe(200);
  });
});
