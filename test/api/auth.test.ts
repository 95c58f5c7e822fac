import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { AuthService, type AuthOptions, type LoginRefusal } from '../../api/auth.js';
import { VerifyBusyError } from '../../api/verify-budget.js';
import { RateLimitedError } from '../../api/errors.js';
import { createRouter, useRequiredMessages } from '../../api/router.js';
import type { AdminStore } from '../../storage/admin/admin-store.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { createLogger } from '../../src/log.js';
import { getJson, postJson, serveOnLoopback, type TestServer } from '../helpers/http.js';

// What serve sets at start-up (src/main.ts): a missing parameter is named as missing.
useRequiredMessages();

const GENERIC = 'Authentication failed: invalid credentials or access not enabled.';

/** Every area gets one authenticated route that says who the token speaks for. */
function whoamiRouter() {
  const r = createRouter();
  r.get('/whoami', (c) => c.json({ status: true, result: c.get('principal') }));
  return r;
}

describe('per-area auth', () => {
  let store: AdminStore;
  let server: TestServer;
  let clock: number;
  let logLines: string[];
  let auth: AuthService;

  async function issue(entity: string, user: string) {
    const cred = generateCredential();
    store.replaceCredential(entity, user, cred.apiId, await hashSecret(cred.secret));
    return cred;
  }

  async function login(area: string, apiId: string, secret: string) {
    return postJson(`${server.url}/svc/api/${area}/auth`, { api_id: apiId, secret });
  }

  /** Serves the app with an AuthService built from `extra` over the defaults. */
  async function start(extra: Partial<AuthOptions> = {}) {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    });
    auth = new AuthService(store, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 10,
      failureWindowSec: 300,
      now: () => clock,
      ...extra,
    });
    const app = createApp({
      auth,
      logger: createLogger('info', sink),
      bodyLimitBytes: 1024 * 1024,
      areas: { netflow: whoamiRouter(), logviewer: whoamiRouter(), hotspot: whoamiRouter() },
    });
    server = await serveOnLoopback(app.fetch);
  }

  beforeEach(async () => {
    store = new SqliteAdminStore(':memory:');
    store.addEntity('acme', { netflow: true, logviewer: true, hotspot: true });
    store.addUser('acme', 'alice', { netflow: true, logviewer: true });
    clock = Date.parse('2026-03-25T09:00:00Z');
    logLines = [];
    await start();
  });

  afterEach(async () => {
    await server.close();
    store.close();
  });

  it('issues a Bearer token for the right credentials, and the token opens its area', async () => {
    const cred = await issue('acme', 'alice');
    const res = await login('netflow', cred.apiId, cred.secret);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: true, result: { token_type: 'Bearer', expires_in: 3600 } });
    expect(typeof res.body.message).toBe('string');
    const me = await getJson(`${server.url}/svc/api/netflow/whoami`, res.body.result.access_token);
    expect(me).toEqual({ status: 200, body: { status: true, result: { user: 'alice', entity: 'acme', area: 'netflow' } } });
  });

  it('answers every credential failure with the same 401 and message', async () => {
    const cred = await issue('acme', 'alice');
    const wrongSecret = await login('netflow', cred.apiId, 'not-the-secret');
    const unknownId = await login('netflow', 'nsv_00000000000000000000', cred.secret);
    const userAreaOff = await login('hotspot', cred.apiId, cred.secret); // alice has no hotspot
    store.setEntityArea('acme', 'logviewer', false);
    const entityAreaOff = await login('logviewer', cred.apiId, cred.secret);
    for (const res of [wrongSecret, unknownId, userAreaOff, entityAreaOff]) {
      expect(res).toEqual({ status: 401, body: { status: false, errorMessage: GENERIC } });
    }
  });

  it('refuses a tampered copy of a token already in use', async () => {
    const cred = await issue('acme', 'alice');
    const token = (await login('netflow', cred.apiId, cred.secret)).body.result.access_token as string;
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(200);
    const [head, body, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const otherArea = `${head}.${Buffer.from(JSON.stringify({ ...claims, area: 'logviewer' })).toString('base64url')}.${sig}`;
    const otherSig = `${head}.${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [otherArea, otherSig]) {
      const res = await getJson(`${server.url}/svc/api/${bad === otherArea ? 'logviewer' : 'netflow'}/whoami`, bad);
      expect(res.status).toBe(401);
      expect(res.body.errorMessage).toBe('Token validation failed: invalid token.');
    }
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(200);
  });

  it('refuses a token on another area with 403', async () => {
    const cred = await issue('acme', 'alice');
    const token = (await login('netflow', cred.apiId, cred.secret)).body.result.access_token;
    const res = await getJson(`${server.url}/svc/api/logviewer/whoami`, token);
    expect(res.status).toBe(403);
    expect(res.body.status).toBe(false);
  });

  it('rejects missing, garbage and expired tokens with "Token validation failed"', async () => {
    const cred = await issue('acme', 'alice');
    const token = (await login('netflow', cred.apiId, cred.secret)).body.result.access_token;
    for (const bad of [undefined, 'garbage', `${token.slice(0, -2)}xx`]) {
      const res = await getJson(`${server.url}/svc/api/netflow/whoami`, bad);
      expect(res.status).toBe(401);
      expect(res.body.errorMessage).toMatch(/^Token validation failed/);
    }
    clock += 3599 * 1000;
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(200);
    clock += 2 * 1000;
    const expired = await getJson(`${server.url}/svc/api/netflow/whoami`, token);
    expect(expired.status).toBe(401);
    expect(expired.body.errorMessage).toMatch(/^Token validation failed/);
  });

  it('revokes the old secret and every old token the moment credentials are issued again', async () => {
    const first = await issue('acme', 'alice');
    const oldToken = (await login('netflow', first.apiId, first.secret)).body.result.access_token;
    const second = await issue('acme', 'alice');
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, oldToken)).status).toBe(401);
    expect((await login('netflow', first.apiId, first.secret)).status).toBe(401);
    const fresh = await login('netflow', second.apiId, second.secret);
    expect(fresh.status).toBe(200);
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, fresh.body.result.access_token)).status).toBe(200);
  });

  it('stops a live token at the next request once the user or entity area is switched off', async () => {
    const cred = await issue('acme', 'alice');
    const token = (await login('netflow', cred.apiId, cred.secret)).body.result.access_token;
    store.setUserArea('acme', 'alice', 'netflow', false);
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(401);
    store.setUserArea('acme', 'alice', 'netflow', true);
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(200);
    store.setEntityArea('acme', 'netflow', false);
    expect((await getJson(`${server.url}/svc/api/netflow/whoami`, token)).status).toBe(401);
  });

  it('rate-limits repeated failures from one address with 429, even for then-correct credentials', async () => {
    const cred = await issue('acme', 'alice');
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await login('netflow', cred.apiId, `wrong-${i}`)).status);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const blocked = await login('netflow', cred.apiId, cred.secret);
    expect(blocked.status).toBe(429);
    clock += 301 * 1000;
    expect((await login('netflow', cred.apiId, cred.secret)).status).toBe(200);
  });

  it('holds the limit when the wrong secrets arrive all at once', async () => {
    // Room for all 40 in the scrypt budget, so that only the per-address limit refuses.
    await server.close();
    await start({ verify: { concurrency: 1, queue: 64, queuePerAddress: 64 } });
    const cred = await issue('acme', 'alice');
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => login('netflow', cred.apiId, `wrong-${i}`)));
    const statuses = all.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
  });

  it('never writes a secret or token to the log', async () => {
    const cred = await issue('acme', 'alice');
    const token = (await login('netflow', cred.apiId, cred.secret)).body.result.access_token;
    await getJson(`${server.url}/svc/api/netflow/whoami`, token);
    await login('netflow', cred.apiId, 'wrong');
    const log = logLines.join('');
    expect(logLines.length).toBeGreaterThanOrEqual(3);
    expect(log).toContain('"path":"/svc/api/netflow/whoami"');
    expect(log).not.toContain(cred.secret);
    expect(log).not.toContain(token);
    expect(log).not.toContain(token.split('.')[2]);
  });

  it('gives envelopes for unknown routes, malformed JSON and oversized bodies', async () => {
    const notFound = await getJson(`${server.url}/svc/api/nope`);
    expect(notFound).toEqual({ status: 404, body: { status: false, errorMessage: 'Not found: GET /svc/api/nope' } });
    const malformed = await fetch(`${server.url}/svc/api/netflow/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"api_id": ',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ status: false, errorMessage: expect.stringMatching(/JSON/) });
    const missing = await postJson(`${server.url}/svc/api/netflow/auth`, { api_id: 'x' });
    expect(missing).toEqual({ status: 400, body: { status: false, errorMessage: "Missing required parameter 'secret'." } });
    const big = await fetch(`${server.url}/svc/api/netflow/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_id: 'x', secret: 'y'.repeat(1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ status: false });
    // A form-encoded or text body: 415, saying what to send instead.
    const form = await fetch(`${server.url}/svc/api/netflow/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'api_id=x&secret=y',
    });
    expect(form.status).toBe(415);
    expect(await form.json()).toEqual({
      status: false,
      errorMessage:
        "Unsupported Media Type: send the body as JSON with Content-Type: application/json (got 'application/x-www-form-urlencoded').",
    });
  });
});

describe('auth CPU budget', () => {
  let store: AdminStore;
  let clock: number;
  let cred: { apiId: string; secret: string };

  function service(extra: Partial<AuthOptions> = {}) {
    return new AuthService(store, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 10,
      failureWindowSec: 300,
      now: () => clock,
      ...extra,
    });
  }

  /** 'ok', 'busy' (refused by the budget, unhashed), 'limited' (per-address 429) or 'denied' (401). */
  function attempt(auth: AuthService, secret: string, client: string): Promise<string> {
    return auth.login('netflow', cred.apiId, secret, client).then(
      () => 'ok',
      (err: unknown) =>
        err instanceof VerifyBusyError ? 'busy' : (err as { status?: number }).status === 429 ? 'limited' : 'denied',
    );
  }

  beforeEach(async () => {
    store = new SqliteAdminStore(':memory:');
    store.addEntity('acme', { netflow: true });
    store.addUser('acme', 'alice', { netflow: true });
    clock = Date.parse('2026-03-25T09:00:00Z');
    cred = generateCredential();
    store.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
  });

  afterEach(() => store.close());

  it('answers a storm of wrong secrets from 100 addresses mostly at once, and a fresh address goes next', async () => {
    const auth = service({ verify: { concurrency: 1, queue: 8, queuePerAddress: 2 }, knownSecrets: 0 });
    const storm: Promise<string>[] = [];
    for (let round = 0; round < 10; round++) {
      for (let a = 0; a < 100; a++) storm.push(attempt(auth, `wrong-${round}`, `10.0.${a}.1`));
    }
    let verifiedBeforeGood = -1;
    const good = auth.login('netflow', cred.apiId, cred.secret, '192.0.2.7').then((t) => {
      verifiedBeforeGood = auth.counters.verifications;
      return t;
    });
    expect((await good).token).toMatch(/^ey/);
    // Started by the time it was answered: the one running when it came, its own, and perhaps the next as its slot freed.
    // In arrival order it would have been the tenth: the 8 that waited were all behind it.
    expect(verifiedBeforeGood).toBeLessThanOrEqual(3);
    const outcomes = await Promise.all(storm);
    expect(outcomes.filter((o) => o === 'busy')).toHaveLength(992);
    expect(outcomes.filter((o) => o === 'denied')).toHaveLength(8);
    expect(auth.counters).toEqual({ rateLimited: 0, verifications: 9, busyRefused: 992, knownSecretHits: 0 });
  });

  it('does not count a refusal of the budget as a failure of the address', async () => {
    const auth = service({ verify: { concurrency: 1, queue: 0, queuePerAddress: 1 } });
    const holder = attempt(auth, 'wrong', '198.51.100.1');
    // One after another: attempts under way count against the limit until answered.
    for (let i = 0; i < 20; i++) expect(await attempt(auth, 'wrong', '198.51.100.2')).toBe('busy');
    expect(await holder).toBe('denied');
    expect(await attempt(auth, cred.secret, '198.51.100.2')).toBe('ok');
  });

  it('lets a secret verified before log in again without scrypt, still checking the limit, the switches and the credential', async () => {
    const auth = service();
    expect(await attempt(auth, cred.secret, '192.0.2.1')).toBe('ok');
    expect(auth.counters.verifications).toBe(1);
    expect(await attempt(auth, cred.secret, '192.0.2.2')).toBe('ok');
    expect(auth.counters).toMatchObject({ verifications: 1, knownSecretHits: 1 });

    store.setUserArea('acme', 'alice', 'netflow', false);
    expect(await attempt(auth, cred.secret, '192.0.2.2')).toBe('denied');
    store.setUserArea('acme', 'alice', 'netflow', true);

    for (let i = 0; i < 10; i++) expect(await attempt(auth, `wrong-${i}`, '192.0.2.3')).toBe('denied');
    expect(await attempt(auth, cred.secret, '192.0.2.3')).toBe('limited');

    const old = cred;
    cred = generateCredential();
    store.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    const before = auth.counters.verifications;
    expect(
      await auth.login('netflow', old.apiId, old.secret, '192.0.2.4').then(
        () => 'ok',
        () => 'denied',
      ),
    ).toBe('denied');
    expect(await attempt(auth, cred.secret, '192.0.2.4')).toBe('ok');
    expect(auth.counters.verifications).toBe(before + 2);
  });

  it('tells the operator why each login was refused, never with the secret, while the client sees one answer', async () => {
    const refusals: LoginRefusal[] = [];
    const auth = service({
      maxFailures: 3,
      verify: { concurrency: 1, queue: 0, queuePerAddress: 1 },
      onRefused: (r) => refusals.push(r),
    });
    expect(await attempt(auth, cred.secret, '192.0.2.1')).toBe('ok');
    expect(
      await auth.login('netflow', 'nsv_nobody', 'whatever', '192.0.2.2').then(
        () => 'ok',
        () => 'denied',
      ),
    ).toBe('denied');
    expect(await attempt(auth, 'wrong', '192.0.2.3')).toBe('denied');
    store.setUserArea('acme', 'alice', 'netflow', false);
    expect(await attempt(auth, cred.secret, '192.0.2.4')).toBe('denied');
    store.setUserArea('acme', 'alice', 'netflow', true);
    expect(await attempt(auth, 'wrong', '192.0.2.3')).toBe('denied');
    expect(await attempt(auth, 'wrong', '192.0.2.3')).toBe('denied');
    expect(await attempt(auth, cred.secret, '192.0.2.3')).toBe('limited');
    expect(() => auth.precheck('logviewer', '192.0.2.3')).toThrow(RateLimitedError);
    const holder = attempt(auth, 'wrong', '198.51.100.1');
    expect(await attempt(auth, 'wrong-too', '198.51.100.2')).toBe('busy');
    await holder;
    expect(refusals.map(({ area, client, reason, apiId }) => [area, client, reason, apiId])).toEqual([
      ['netflow', '192.0.2.2', 'unknown_api_id', 'nsv_nobody'],
      ['netflow', '192.0.2.3', 'wrong_secret', cred.apiId],
      ['netflow', '192.0.2.4', 'area_disabled', cred.apiId],
      ['netflow', '192.0.2.3', 'wrong_secret', cred.apiId],
      ['netflow', '192.0.2.3', 'wrong_secret', cred.apiId],
      ['netflow', '192.0.2.3', 'rate_limited', cred.apiId],
      ['logviewer', '192.0.2.3', 'rate_limited', undefined],
      ['netflow', '198.51.100.2', 'busy', cred.apiId],
      ['netflow', '198.51.100.1', 'wrong_secret', cred.apiId],
    ]);
    expect(refusals.filter((r) => r.reason === 'rate_limited').every((r) => r.retryAfterSec! > 0)).toBe(true);
    expect(JSON.stringify(refusals)).not.toContain(cred.secret);
  });

  it('refuses over HTTP before reading the body when the budget is full', async () => {
    const auth = service({ verify: { concurrency: 1, queue: 0, queuePerAddress: 1 }, knownSecrets: 0 });
    const app = createApp({ auth, logger: createLogger('silent'), bodyLimitBytes: 1024, areas: {} });
    const server = await serveOnLoopback(app.fetch);
    try {
      const holder = attempt(auth, 'wrong', '198.51.100.9'); // holds the one slot
      // Malformed JSON would be a 400 once read: a 429 shows it was answered unread.
      const res = await fetch(`${server.url}/svc/api/netflow/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"api_id": ',
      });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await holder).toBe('denied');
      expect(auth.counters).toMatchObject({ verifications: 1, busyRefused: 1 });
      const after = await fetch(`${server.url}/svc/api/netflow/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"api_id": ',
      });
      expect(after.status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it('answers a refusal over HTTP as 429 with Retry-After, and documents it on every auth route', async () => {
    const auth = service({ verify: { concurrency: 1, queue: 0, queuePerAddress: 1 }, knownSecrets: 0 });
    const app = createApp({ auth, logger: createLogger('silent'), bodyLimitBytes: 1024, areas: {} });
    const server = await serveOnLoopback(app.fetch);
    try {
      const send = () =>
        fetch(`${server.url}/svc/api/netflow/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_id: cred.apiId, secret: 'wrong' }),
        });
      const [first, second] = await Promise.all([send(), send()]);
      const busy = [first!, second!].find((r) => r.status === 429)!;
      expect(busy).toBeDefined();
      expect(busy.headers.get('retry-after')).toBe('1');
      expect(await busy.json()).toEqual({
        status: false,
        errorMessage: 'Too many authentication attempts are being checked right now. Try again in 1 s.',
      });
      const doc = (await (await fetch(`${server.url}/svc/api/openapi.json`)).json()) as any;
      for (const area of ['netflow', 'logviewer', 'hotspot']) {
        const r429 = doc.paths[`/svc/api/${area}/auth`].post.responses['429'];
        expect(r429.description).toMatch(/checked at once/);
        expect(r429.headers['Retry-After']).toBeDefined();
      }
    } finally {
      await server.close();
    }
  });
});
