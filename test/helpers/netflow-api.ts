/**
 * The netflow routes as `serve` builds them (auth, error handler, envelope) on an ephemeral loopback
 * port, for two entities: `acme` (user alice, flow source `netflow`) and `beta` (user bob, source
 * `lentor`), each with a token, so a test can check that one entity never sees the other's flows.
 */
import { randomBytes } from 'node:crypto';
import { createApp } from '../../api/app.js';
import { AuthService } from '../../api/auth.js';
import { createNetflowRoutes, type NetflowRouteDeps } from '../../api/routes/netflow.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { createLogger } from '../../src/log.js';
import { postJson, serveOnLoopback } from './http.js';

export interface NetflowApi {
  url: string;
  /** alice's token (entity acme, source netflow). */
  token: string;
  /** bob's token (entity beta, source lentor). */
  otherToken: string;
  close(): Promise<void>;
}

/** Serves `createNetflowRoutes(deps)` with the two entities' sources; `now` is the auth clock. */
export async function startNetflowApi(
  deps: Omit<NetflowRouteDeps, 'sourcesOf'>,
  now: () => number = Date.now,
): Promise<NetflowApi> {
  const admin = new SqliteAdminStore(':memory:');
  admin.addEntity('acme', { netflow: true, logviewer: false, hotspot: false });
  admin.addUser('acme', 'alice', { netflow: true });
  admin.addEntity('beta', { netflow: true, logviewer: false, hotspot: false });
  admin.addUser('beta', 'bob', { netflow: true });
  const auth = new AuthService(admin, {
    key: randomBytes(32),
    tokenTtlSec: 3600,
    maxFailures: 10,
    failureWindowSec: 300,
    now,
  });
  const owned: Record<string, string[]> = { acme: ['netflow'], beta: ['lentor'] };
  const app = createApp({
    auth,
    logger: createLogger('silent'),
    bodyLimitBytes: 1024 * 1024,
    areas: { netflow: createNetflowRoutes({ ...deps, sourcesOf: (e) => owned[e] ?? [] }) },
  });
  const server = await serveOnLoopback(app.fetch);
  const login = async (entity: string, user: string) => {
    const cred = generateCredential();
    admin.replaceCredential(entity, user, cred.apiId, await hashSecret(cred.secret));
    const res = await postJson(`${server.url}/svc/api/netflow/auth`, { api_id: cred.apiId, secret: cred.secret });
    return res.body.result.access_token as string;
  };
  return {
    url: server.url,
    token: await login('acme', 'alice'),
    otherToken: await login('beta', 'bob'),
    async close() {
      await server.close();
      admin.close();
    },
  };
}
