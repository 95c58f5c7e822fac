/**
 * The README's first-use walk-through, run as the script it is
 * (docs/first-use.sh), on the embedded default: every command in it must
 * execute and each area must answer what the walk-through shows. Ports of its
 * own on 127.0.0.1 and a data directory of its own; the script's serve is
 * stopped by the script, and the whole process group by the test if it hangs.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { freeUdpPort } from '../helpers/flow-fixtures.js';

const ROOT = resolve('.');
const SCRIPT = join(ROOT, 'docs/first-use.sh');

describe('README first use (docs/first-use.sh)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-first-use-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the README block, word for word', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // The script's commands, from the first after its header comment and settings.
    const body = readFileSync(SCRIPT, 'utf8').split('\n# Start the service')[1]!;
    expect(readme).toContain(`# Start the service${body.trimEnd()}`);
  });

  /** Runs the script on ports and a data directory of its own (`flow`: its flow port), killed after 90 s. */
  async function runScript(name: string, flow: number) {
    const [http, lentor, syslog] = [await freePort(), await freeUdpPort(), await freePort()];
    const env = {
      ...process.env,
      NETSVC_DATA_DIR: join(dir, name, 'data'),
      NETSVC_HTTP__PORT: String(http),
      NETSVC_FLOW_SOURCES: JSON.stringify({
        netflow: { listen: `127.0.0.1:${flow}` },
        lentor: { listen: `127.0.0.1:${lentor}` },
      }),
      NETSVC_SYSLOG_RECEIVER: JSON.stringify({ host: '127.0.0.1', port: syslog }),
      API: `http://127.0.0.1:${http}/svc/api`,
      FLOW_PORT: String(flow),
      SYSLOG_PORT: String(syslog),
      LOG: join(dir, `${name}.log`),
    };
    const child = spawn('bash', [SCRIPT], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    clearTimeout(timer);
    return { code, out, err, log: () => readFileSync(env.LOG, 'utf8') };
  }

  it('runs through netflow, logviewer and hotspot on the embedded default', async () => {
    const { code, out, err, log } = await runScript('ok', await freeUdpPort());
    expect(code, `${out}\n${err}\n${log().slice(-2000)}`).toBe(0);

    const answers = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { status: boolean; result: any });
    expect(answers).toHaveLength(4);
    const [kpi, logs, created, users] = answers;
    expect(kpi!.result.kpi.total_bytes).toBeGreaterThan(0);
    expect(logs!.result.map((r: { Message: string }) => r.Message)).toEqual(['hello from the first-use walk-through']);
    expect(created).toMatchObject({ status: true, result: { username: 'guest1' } });
    expect(users!.result.map((u: { username: string }) => u.username)).toContain('guest1');
  }, 120_000);

  it('stops waiting when serve exits at start, and shows why', async () => {
    // Another program holds the flow port: serve says so in its log and exits.
    const holder = createSocket('udp4');
    await new Promise<void>((r) => holder.bind(0, '127.0.0.1', () => r()));
    try {
      const { code, out, log } = await runScript('port-taken', holder.address().port);
      expect(code).not.toBe(0);
      expect(log()).toContain('cannot listen on 127.0.0.1:');
      expect(out).toContain('cannot listen on 127.0.0.1:');
      // It stopped there: no entity was added to ./data for a later run to trip over.
      expect(out).not.toMatch(/^entity default:/m);
    } finally {
      holder.close();
    }
  }, 120_000);
});
