/**
 * `npm run bench -- hostile scrypt [--addresses 100] [--per-address 10]
 *                                  [--logins 20] [--modes clients,burst]`
 *
 * The outside tester's wrong-secret storm against a spawned `netsvc serve`:
 * 1 000 wrong secrets from 100 loopback addresses (10 each, under the
 * per-address limit), while one more address logs in correctly 20 times, one
 * after another, and polls `GET /netflow/latest` every 20 ms. Before the
 * auth budget the storm held both cores for a minute and a correct login
 * took 11.4 s. Two shapes of storm, each on a fresh serve:
 *
 *   clients  every address sends its attempts one after another, each as soon
 *            as the last is answered (Retry-After ignored), all addresses at
 *            once; the correct logins start once every address has been
 *            answered, i.e. while the storm runs.
 *   burst    all 1 000 attempts on their own connections at once; the correct
 *            logins start at the first answer. Whatever auth does, the first
 *            of them waits for serve to take a thousand connections and answer
 *            them (≈ 0.8 ms of the event loop each on the 2-core build
 *            machine, bench/README.md), so this shape measures the HTTP stack
 *            more than auth.
 *
 * The correct logins each pay an scrypt (`auth.knownSecrets: 0`: the
 * remembered-secret shortcut would answer all but the first without one), on
 * new connections. `/latest` is polled on a kept-alive connection, as a
 * dashboard does, and on a new connection each time, shown for information:
 * a new connection waits behind the attackers' in the kernel's accept queue.
 * The attackers run in a worker thread at nice 10, like serve's own threads
 * (a remote attacker takes no CPU from serve).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostileRow } from './hostile.js';
import { keepAliveFrom, requestFrom, startAuthStorm, type TimedResponse } from './hostile-scrypt-lib.js';
import { log, percentile } from './lib.js';
import { ROOT, spawnServe } from './spawned-serve.js';

const CLI = join(ROOT, 'dist/src/cli.js');
const GOOD = '127.0.0.200';
const LOGIN_P99_MS = 1000;
const LATEST_P99_MS = 200;

interface Options {
  addresses: number;
  perAddress: number;
  logins: number;
  modes: Array<'clients' | 'burst'>;
}

function parseArgs(args: string[]): Options {
  const value = (name: string): string | undefined => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const modes = (value('modes') ?? 'clients,burst')
    .split(',')
    .filter((m): m is 'clients' | 'burst' => m === 'clients' || m === 'burst');
  return {
    addresses: Number(value('addresses') ?? 100),
    perAddress: Number(value('per-address') ?? 10),
    logins: Number(value('logins') ?? 20),
    modes: modes.length ? modes : ['clients', 'burst'],
  };
}

const ms = (x: number): string => String(Math.round(x));
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/** One storm against a fresh serve; its rows. */
async function once(mode: 'clients' | 'burst', o: Options): Promise<HostileRow[]> {
  const attack = `scrypt (${mode})`;
  const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-bench-scrypt-'));
  const serve = await spawnServe(
    dataDir,
    {
      auth: { knownSecrets: 0 },
      flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
      syslogReceiver: { host: '127.0.0.1', port: 0 },
      entities: { default: { flowSources: ['netflow', 'lentor'] } },
    },
    () => true,
  );
  try {
    const config = join(dataDir, 'netsvc.config.json');
    const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8' });
    cli(['admin', 'entity', 'add', 'default', '--areas', 'netflow']);
    cli(['admin', 'user', 'add', 'default', 'bench', '--areas', 'netflow']);
    const cred = JSON.parse(cli(['admin', 'credentials', 'issue', 'default', 'bench', '--json']).stdout) as {
      api_id: string;
      secret: string;
    };
    const login = () => requestFrom(GOOD, `${serve.url}/svc/api/netflow/auth`, { method: 'POST', json: cred });
    const first = await login();
    if (first.status !== 200) throw new Error(`login before the storm answered ${first.status}: ${first.body}`);
    const token = (JSON.parse(first.body) as { result: { access_token: string } }).result.access_token;
    const auth = { authorization: `Bearer ${token}` };
    // Connected before the storm, as a dashboard that was already open.
    const agent = keepAliveFrom(GOOD);
    await requestFrom(GOOD, `${serve.url}/svc/api/netflow/latest`, { headers: auth, agent });

    const total = o.addresses * o.perAddress;
    const t0 = performance.now();
    const storm = startAuthStorm({
      url: serve.url,
      area: 'netflow',
      apiId: cred.api_id,
      addresses: o.addresses,
      perAddress: o.perAddress,
      mode,
      nice: 10,
    });
    const underWay = mode === 'clients' ? () => storm.heard() >= o.addresses : () => storm.answered() > 0;
    while (!underWay()) await new Promise((r) => setTimeout(r, 2));
    const leftAtStart = total - storm.answered();

    let polling = true;
    const kept: TimedResponse[] = [];
    const fresh: TimedResponse[] = [];
    const poll = async (into: TimedResponse[], withAgent: boolean): Promise<void> => {
      while (polling) {
        into.push(
          await requestFrom(GOOD, `${serve.url}/svc/api/netflow/latest`, { headers: auth, agent: withAgent ? agent : undefined }),
        );
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const pollers = [poll(kept, true), poll(fresh, false)];
    const good: TimedResponse[] = [];
    for (let i = 0; i < o.logins; i++) good.push(await login());
    const leftAfterLogins = total - storm.answered();
    const answers = await storm.done;
    const stormMs = performance.now() - t0;
    polling = false;
    await Promise.all(pollers);
    agent.destroy();

    const metrics = await (await fetch(`${serve.url}/metrics`)).text();
    const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    const refused = answers.filter((a) => a.status === 429 && a.retryAfter === '1').length;
    const denied = answers.filter((a) => a.status === 401).length;
    const other = total - refused - denied;

    const g = sorted(good.map((r) => r.ms));
    const k = sorted(kept.map((r) => r.ms));
    const f = sorted(fresh.map((r) => r.ms));
    const allGood = good.every((r) => r.status === 200);
    const latestOk = kept.length > 0 && kept.every((r) => r.status === 200);
    log(
      `${attack}: ${total} wrong secrets in ${ms(stormMs)} ms; ${leftAtStart} unanswered when the correct logins began, ${leftAfterLogins} when they ended`,
    );
    return [
      {
        attack,
        measure: `correct login p50 / p99 / max ms (${good.length}, new connections)`,
        value: `${ms(percentile(g, 50))} / ${ms(percentile(g, 99))} / ${ms(g[g.length - 1]!)}${allGood ? '' : ` (${good.filter((r) => r.status !== 200).length} not 200)`}`,
        target: `p99 ≤ ${LOGIN_P99_MS}, all 200`,
        ok: allGood && percentile(g, 99) <= LOGIN_P99_MS,
      },
      {
        attack,
        measure: `/netflow/latest p99 / max ms (${kept.length}, kept-alive connection)`,
        value: `${ms(percentile(k, 99))} / ${ms(k[k.length - 1]!)}`,
        target: `p99 ≤ ${LATEST_P99_MS}`,
        ok: latestOk && percentile(k, 99) <= LATEST_P99_MS,
      },
      {
        attack,
        measure: `/netflow/latest p99 / max ms (${fresh.length}, new connection each)`,
        value: `${ms(percentile(f, 99))} / ${ms(f[f.length - 1]!)}`,
        target: 'information',
        ok: true,
      },
      {
        attack,
        measure: 'wrong secrets refused at once without hashing (429)',
        value: `${refused} of ${total}; ${denied} hashed (401)${other ? `; ${other} other` : ''}`,
        target: 'most; every one answered',
        ok: other === 0 && refused > total / 2,
      },
      {
        attack,
        measure: 'scrypt verifications; refusals counted by serve',
        value: `${metric('netsvc_auth_verifications_total')}; ${metric('netsvc_auth_busy_refused_total')}`,
        target: `${denied + good.length + 1}; ${refused}`,
        ok:
          metric('netsvc_auth_verifications_total') === denied + good.length + 1 &&
          metric('netsvc_auth_busy_refused_total') === refused,
      },
    ];
  } finally {
    await serve.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<HostileRow[]> {
  const o = parseArgs(args);
  const rows: HostileRow[] = [];
  for (const mode of o.modes) rows.push(...(await once(mode, o)));
  return rows;
}
