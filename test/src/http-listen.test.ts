/** serve's HTTP listener: the early refusal of login attempts answers exactly as the framework's path does. */
import { randomBytes } from 'node:crypto';
import type { ServerType } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { AuthService, refuseAuthEarly } from '../../api/auth.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { ListenError, listenHttp } from '../../src/http-listen.js';
import { createLogger } from '../../src/log.js';

const servers: ServerType[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function serve(early: boolean) {
  const store = new SqliteAdminStore(':memory:');
  store.addEntity('acme', { netflow: true });
  store.addUser('acme', 'alice', { netflow: true });
  const cred = generateCredential();
  store.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
  const auth = new AuthService(store, {
    key: randomBytes(32),
    tokenTtlSec: 60,
    maxFailures: 2,
    failureWindowSec: 60,
    now: Date.now,
  });
  const app = createApp({ auth, logger: createLogger('silent'), bodyLimitBytes: 1024, areas: {} });
  const server = await listenHttp(app.fetch, '127.0.0.1', 0, early ? (req, res) => refuseAuthEarly(auth, req, res) : undefined);
  servers.push(server);
  const port = (server.address() as { port: number }).port;
  const login = (secret: string) =>
    fetch(`http://127.0.0.1:${port}/svc/api/netflow/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_id: cred.apiId, secret }),
    });
  return { auth, cred, login, port };
}

/** What a client sees of an answer. */
async function seen(res: Response) {
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
  };
}

describe('listenHttp with the early auth refusal', () => {
  it('answers a locked-out address as the middleware does: same status, headers and envelope', async () => {
    const answers = [];
    for (const early of [false, true]) {
      const s = await serve(early);
      for (let i = 0; i < 2; i++) expect((await s.login('wrong')).status).toBe(401);
      const refused = await seen(await s.login(s.cred.secret));
      answers.push({ ...refused, retryAfter: Number(refused.retryAfter) > 0 });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[1]).toMatchObject({ status: 429, retryAfter: true });
    expect(JSON.parse(answers[1]!.body)).toEqual({
      status: false,
      errorMessage: expect.stringMatching(/^Too many failed authentication attempts\. Try again in \d+ s\.$/),
    });
  });

  it('lets every other request through to the app: logins that may go on, other routes, other methods', async () => {
    const s = await serve(true);
    const ok = await s.login(s.cred.secret);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: { access_token: string } }).result.access_token).toMatch(/^ey/);
    // A GET of the auth path is the app's to answer (its bearer check: 401).
    expect((await fetch(`http://127.0.0.1:${s.port}/svc/api/netflow/auth`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${s.port}/svc/api/openapi.json`)).status).toBe(200);
  });

  it('names the address and the setting to change when the port is taken', async () => {
    const first = await serve(true);
    const err = await listenHttp(() => new Response('ok'), '127.0.0.1', first.port).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenError);
    expect((err as Error).message).toBe(
      `cannot listen for HTTP on 127.0.0.1:${first.port}: address already in use (set http.port or --port)`,
    );
  });
});
