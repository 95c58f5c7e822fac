/** The auth endpoints' counters on the Prometheus registry, read back from its exposition text. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuthService } from '../../api/auth.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { parseMetrics } from '../../src/commands/status-run.js';
import { createMetrics } from '../../src/metrics.js';

describe('auth metrics', () => {
  it('counts verifications, budget refusals, per-address refusals and known-secret logins', async () => {
    const store = new SqliteAdminStore(':memory:');
    store.addEntity('acme', { netflow: true });
    store.addUser('acme', 'alice', { netflow: true });
    const cred = generateCredential();
    store.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    const auth = new AuthService(store, {
      key: randomBytes(32),
      tokenTtlSec: 60,
      maxFailures: 1,
      failureWindowSec: 60,
      now: () => 0,
      verify: { concurrency: 1, queue: 0, queuePerAddress: 1 },
    });
    const metrics = createMetrics();
    expect(parseMetrics(await metrics.text()).some((s) => s.name.startsWith('netsvc_auth_'))).toBe(false);
    metrics.addAuthStats(auth);

    const settle = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        () => 'refused',
      );
    const first = settle(auth.login('netflow', cred.apiId, cred.secret, 'a'));
    expect(await settle(auth.login('netflow', cred.apiId, 'wrong', 'b'))).toBe('refused'); // budget full
    expect(await first).toBe('ok');
    expect(await settle(auth.login('netflow', cred.apiId, cred.secret, 'c'))).toBe('ok'); // known secret
    expect(await settle(auth.login('netflow', cred.apiId, 'wrong', 'd'))).toBe('refused'); // a failure
    expect(await settle(auth.login('netflow', cred.apiId, cred.secret, 'd'))).toBe('refused'); // over the limit

    const samples = parseMetrics(await metrics.text());
    const value = (name: string) => samples.find((s) => s.name === name)?.value;
    expect(value('netsvc_auth_verifications_total')).toBe(2);
    expect(value('netsvc_auth_busy_refused_total')).toBe(1);
    expect(value('netsvc_auth_known_secret_hits_total')).toBe(1);
    expect(value('netsvc_auth_rate_limited_total')).toBe(1);
    expect(value('netsvc_auth_verify_queue_depth')).toBe(0);
    store.close();
  });
});
