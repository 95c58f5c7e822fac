/**
 * A `netsvc serve` spawned by a benchmark (and by the e2e tests that run
 * the hostile benches small): its config written into its data directory,
 * every listener on loopback, started when its output says so, stopped by
 * its PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, whether this runs compiled (dist/bench) or from source under vitest (bench). */
const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = basename(dirname(HERE)) === 'dist' ? join(HERE, '..', '..') : join(HERE, '..');
const CLI = join(ROOT, 'dist/src/cli.js');

/** A running serve. */
export interface ServeProcess {
  pid: number;
  url: string;
  /** Milliseconds from spawn to `ready`. */
  startMs: number;
  /** What it printed on stdout and stderr. */
  output(): string;
  /** SIGTERM, then SIGKILL after `killAfterMs`. */
  stop(): Promise<void>;
}

/**
 * Writes `config` (over a loopback base: HTTP on an ephemeral 127.0.0.1 port,
 * UTC, logs at info) to `<dataDir>/netsvc.config.json` and spawns serve on
 * it; resolves once its URL is printed and `ready(output)` holds.
 */
export async function spawnServe(
  dataDir: string,
  config: Record<string, unknown>,
  ready: (out: string) => boolean,
  killAfterMs = 15_000,
): Promise<ServeProcess> {
  const path = join(dataDir, 'netsvc.config.json');
  writeFileSync(
    path,
    JSON.stringify({ dataDir, timezone: 'UTC', log: { level: 'info' }, http: { host: '127.0.0.1', port: 0 }, ...config }),
  );
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', '--config', path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      await exited;
      clearTimeout(t);
    }
  };
  const deadline = Date.now() + 60_000;
  let url = '';
  while (!url) {
    const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
    if (m && ready(out)) url = m[1]!;
    else if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`serve did not start: ${out.slice(-2000)}`);
    } else await new Promise((r) => setTimeout(r, 10));
  }
  return { pid: child.pid!, url, startMs: performance.now() - t0, output: () => out, stop };
}
