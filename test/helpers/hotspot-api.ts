/**
 * The hotspot API over a real FreeRADIUS database for tests: the app as
 * `serve` builds it (auth, error handler, hotspot routes), served on an
 * ephemeral loopback port, with a token for one API user of entity `acme`.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createApp } from '../../api/app.js';
import { AuthService } from '../../api/auth.js';
import { createHotspotRoutes, type HotspotRouteDeps } from '../../api/routes/hotspot/index.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { defaultCatalogue } from '../../storage/radius/attribute-catalogue.js';
import type { RadiusStore } from '../../storage/radius/radius-store.js';
import { createLogger } from '../../src/log.js';
import { postJson, serveOnLoopback, type TestServer } from './http.js';

/** A served hotspot API and a caller holding a token. */
export interface HotspotApi {
  url: string;
  /** The bearer token of `api-alice`, for requests `call` cannot make (another content type, no body). */
  token: string;
  /** Calls `/svc/api/hotspot<path>` with the token; answers status and parsed body. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** The same as API user `api-olga` of entity `other`, which has no RADIUS database. */
  callOther(method: string, path: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** Serves the hotspot routes over `store` for entity `acme`, user `api-alice`. */
export async function startHotspotApi(
  store: RadiusStore,
  options: { timezone?: string; maxPerPage?: number; onStoreError?: HotspotRouteDeps['onStoreError'] } = {},
): Promise<HotspotApi> {
  const admin = new SqliteAdminStore(':memory:');
  admin.addEntity('acme', { hotspot: true });
  admin.addEntity('other', { hotspot: true });
  admin.addUser('acme', 'api-alice', { hotspot: true });
  admin.addUser('other', 'api-olga', { hotspot: true });
  const cred = generateCredential();
  admin.replaceCredential('acme', 'api-alice', cred.apiId, await hashSecret(cred.secret));
  const otherCred = generateCredential();
  admin.replaceCredential('other', 'api-olga', otherCred.apiId, await hashSecret(otherCred.secret));
  const auth = new AuthService(admin, {
    key: randomBytes(32),
    tokenTtlSec: 3600,
    maxFailures: 1000,
    failureWindowSec: 300,
    now: Date.now,
  });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const app = createApp({
    auth,
    logger: createLogger('silent', sink),
    bodyLimitBytes: 1024 * 1024,
    areas: {
      hotspot: createHotspotRoutes({
        storeOf: (entity) => (entity === 'acme' ? store : undefined),
        catalogue: defaultCatalogue(),
        timezone: options.timezone ?? 'UTC',
        maxPerPage: options.maxPerPage,
        onStoreError: options.onStoreError,
      }),
    },
  });
  const server: TestServer = await serveOnLoopback(app.fetch);
  const login = await postJson(`${server.url}/svc/api/hotspot/auth`, { api_id: cred.apiId, secret: cred.secret });
  const token = login.body.result.access_token as string;
  const otherLogin = await postJson(`${server.url}/svc/api/hotspot/auth`, { api_id: otherCred.apiId, secret: otherCred.secret });
  const otherToken = otherLogin.body.result.access_token as string;
  return {
    url: server.url,
    token,
    async call(method, path, body) {
      const res = await fetch(`${server.url}/svc/api/hotspot${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: res.status, body: parsed };
    },
    async callOther(method, path) {
      const res = await fetch(`${server.url}/svc/api/hotspot${path}`, {
        method,
        headers: { authorization: `Bearer ${otherToken}` },
      });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await server.close();
      admin.close();
    },
  };
}
