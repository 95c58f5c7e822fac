/**
 * A wrong-secret storm against `netsvc serve` over loopback (issue 16): 1 000
 * wrong secrets from 100 addresses in parallel, each address sending its 10
 * (under the per-address limit) one after another as fast as it is answered;
 * once every address has been answered, 20 correct logins from another
 * address, one after another, and `GET /netflow/latest` every 20 ms on a
 * connection kept alive (bench/hostile-scrypt.ts measures more). Before
 * the scrypt budget the storm held both cores for a minute (a correct login
 * took 11 s); now the correct logins answer within 1 s and /latest within
 * 200 ms, because most of the storm is refused at once without hashing.
 *
 * Serve runs in its own process (dist/), as in production, so the test's
 * own clients do not share its event loop; the attackers run in a worker
 * thread at serve's own nice value. The remembered-secret shortcut is
 * off (`auth.knownSecrets: 0`): every correct login pays its scrypt, so the
 * budget alone is measured.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import { parseMetrics } from '../../src/commands/status-run.js';
import { processContext, type CliContext } from '../../src/commands/context.js';
import { keepAliveFrom, requestFrom, startAuthStorm, type TimedResponse } from '../../bench/hostile-scrypt-lib.js';
import { spawnServe, type ServeProcess } from '../../bench/spawned-serve.js';

const ATTACKERS = 100;
const PER_ATTACKER = 10;
const GOOD = '127.0.0.200';

/** `p`-th percentile, nearest rank. */
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

describe('netsvc serve under a wrong-secret storm', () => {
  let dir: string;
  let serve: ServeProcess;
  let url: string;
  let cred: { api_id: string; secret: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-auth-storm-'));
    serve = await spawnServe(
      dir,
      {
        auth: { knownSecrets: 0 },
        flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
        syslogReceiver: { host: '127.0.0.1', port: 0 },
        entities: { default: { flowSources: ['netflow', 'lentor'] } },
      },
      () => true,
    );
    url = serve.url;
    const config = join(dir, 'netsvc.config.json');
    const lines: string[] = [];
    const ctx: CliContext = { ...processContext(), out: (t) => lines.push(t), err: () => undefined };
    expect(await runCli(['admin', 'entity', 'add', 'default', '--areas', 'netflow', '--config', config], ctx)).toBe(0);
    expect(await runCli(['admin', 'user', 'add', 'default', 'alice', '--areas', 'netflow', '--config', config], ctx)).toBe(0);
    lines.length = 0;
    expect(await runCli(['admin', 'credentials', 'issue', 'default', 'alice', '--json', '--config', config], ctx)).toBe(0);
    cred = JSON.parse(lines.join(''));
  });

  afterAll(async () => {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds a thousand connections at once in its accept queue', () => {
    // Node's default backlog (511) dropped half of such a burst: those clients waited 1 s, 3 s, … to retry.
    const port = new URL(url).port;
    const ss = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    if (ss.error && !process.env.NETSVC_REQUIRE_ALL) return; // no iproute2
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    const backlog = Number(ss.stdout.trim().split(/\s+/)[2]); // State Recv-Q Send-Q: Send-Q is the backlog
    expect(backlog).toBe(Math.min(4096, somaxconn));
  });

  it('keeps correct logins within 1 s and /netflow/latest within 200 ms, refusing most of the storm unhashed', async () => {
    const login = (from: string, secret: string) =>
      requestFrom(from, `${url}/svc/api/netflow/auth`, { method: 'POST', json: { api_id: cred.api_id, secret } });
    const first = await login(GOOD, cred.secret);
    expect(first.status).toBe(200);
    const token = (JSON.parse(first.body) as { result: { access_token: string } }).result.access_token;
    // The poller keeps its connection, opened before the storm, as a dashboard does; a new
    // connection would queue behind the attackers' in the kernel's accept queue, whatever the
    // service does with them after.
    const agent = keepAliveFrom(GOOD);
    const latestOnce = () =>
      requestFrom(GOOD, `${url}/svc/api/netflow/latest`, { headers: { authorization: `Bearer ${token}` }, agent });
    expect((await latestOnce()).status).toBe(200);

    const storm = startAuthStorm({
      url,
      area: 'netflow',
      apiId: cred.api_id,
      addresses: ATTACKERS,
      perAddress: PER_ATTACKER,
      mode: 'clients',
      nice: 10,
    });
    // Under way: every address has been answered once (and no longer looks new to the budget).
    while (storm.heard() < ATTACKERS) await new Promise((r) => setTimeout(r, 5));
    const stormLeft = ATTACKERS * PER_ATTACKER - storm.answered();

    let polling = true;
    const latest: TimedResponse[] = [];
    const poller = (async () => {
      while (polling) {
        latest.push(await latestOnce());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const good: TimedResponse[] = [];
    for (let i = 0; i < 20; i++) good.push(await login(GOOD, cred.secret));
    const answeredWhenGoodDone = storm.answered();
    const attacks = await storm.done;
    polling = false;
    await poller;
    agent.destroy();

    const statuses = attacks.map((r) => r.status);
    const denied = statuses.filter((s) => s === 401).length;
    const refused = attacks.filter((r) => r.status === 429 && r.retryAfter === '1').length;
    const metrics = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    const metric = (name: string) => metrics.find((s) => s.name === name)?.value;
    const report = {
      stormLeftWhenGoodStarted: stormLeft,
      stormLeftWhenGoodDone: ATTACKERS * PER_ATTACKER - answeredWhenGoodDone,
      goodMs: good.map((r) => Math.round(r.ms)),
      latestP99: Math.round(
        percentile(
          latest.map((r) => r.ms),
          99,
        ),
      ),
      latestMax: Math.round(Math.max(...latest.map((r) => r.ms))),
      denied,
      refused,
    };

    expect(
      good.map((r) => r.status),
      JSON.stringify(report),
    ).toEqual(Array(20).fill(200));
    expect(
      percentile(
        good.map((r) => r.ms),
        99,
      ),
      JSON.stringify(report),
    ).toBeLessThanOrEqual(1000);
    expect(latest.length).toBeGreaterThan(5);
    expect(latest.every((r) => r.status === 200)).toBe(true);
    expect(
      percentile(
        latest.map((r) => r.ms),
        99,
      ),
      JSON.stringify(report),
    ).toBeLessThanOrEqual(200);
    // Every wrong secret was answered: 401 once hashed, else 429 at once (none reached the per-address limit).
    expect(denied + refused).toBe(ATTACKERS * PER_ATTACKER);
    expect(refused).toBeGreaterThan(ATTACKERS * PER_ATTACKER * 0.9);
    expect(metric('netsvc_auth_busy_refused_total')).toBe(refused);
    // Hashed: the storm's 401s, the 21 correct logins.
    expect(metric('netsvc_auth_verifications_total')).toBe(denied + 21);
  });
});
