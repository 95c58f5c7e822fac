/**
 * `npm run bench -- cli [--runs N] [--warmup N] [--rounds N] [--base DIR]`: how long `netsvc` takes to start
 * and finish a light command, measured as hyperfine does (warm-up runs, then N timed runs of
 * each command, one process each, output to /dev/null), with `node -e 0` as the floor. Commands
 * alternate within a round so that the machine's load falls on all of them alike. Besides wall
 * time it reports the CPU time (user + system) of each run, which the other processes on a shared
 * machine disturb less. Target (issue 19): `--help` and `admin entity list` ≤ 0.2 s. `--base DIR`
 * adds the same commands of another build (a checkout with its dist/ built), in the same rounds.
 * The floor and the main commands run twice, with the environment as given and with
 * NODE_EXTRA_CA_CERTS unset (Node reads that whole file at every start), and each round ends
 * with what every command adds over the floor of its own environment.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const TARGET_S = 0.2;

interface Case {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Held to the target. */
  target: boolean;
}

interface Run {
  wallS: number;
  cpuS: number;
}

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

/** One process, its output to /dev/null; wall time from spawn to exit, and the CPU time it reports. */
function runOnce(c: Case): Promise<Run> {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, c.args, { stdio: ['ignore', 'ignore', 'pipe'], env: c.env ?? process.env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      const wallS = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) {
        fail(new Error(`${c.name} exited ${code}: ${stderr}`));
        return;
      }
      // Node gives no reaped child's resource usage: the child reports its own (the probe).
      const cpu = /__cpu=(\d+)/.exec(stderr);
      done({ wallS, cpuS: cpu ? Number(cpu[1]) / 1e6 : NaN });
    });
  });
}

function stats(xs: number[]): { mean: number; min: number; max: number; sd: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
  return { mean, min: Math.min(...xs), max: Math.max(...xs), sd };
}

const f3 = (x: number): string => x.toFixed(3);

/** Runs the suite. */
export async function run(args: string[]): Promise<void> {
  const runs = option(args, '--runs', 10);
  const warmup = option(args, '--warmup', 3);
  const rounds = option(args, '--rounds', 1);
  const cli = resolve('dist/src/cli.js');
  const work = mkdtempSync(join(tmpdir(), 'netsvc-bench-cli-'));
  // A preloaded module that reports the process's own CPU time at exit, as the last line of stderr.
  const probe = join(work, 'cpu-probe.mjs');
  writeFileSync(
    probe,
    "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write(`__cpu=${u.user + u.system}\\n`); });\n",
  );
  const cache = join(work, 'cache');
  const dataDir = join(work, 'data');
  const configFile = join(work, 'netsvc.config.json');
  writeFileSync(configFile, JSON.stringify({ timezone: 'UTC', http: { port: 18080 }, log: { level: 'warn' } }));
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cache };
  for (const k of Object.keys(env)) if (k.startsWith('NETSVC_')) delete env[k];
  // Node 20 reads and parses the whole file NODE_EXTRA_CA_CERTS names at the start of every
  // process (≈ 40–60 ms for the system bundle this machine's environment names): every command
  // runs both with the environment as given and with that variable unset, so that what netsvc
  // itself adds over the floor shows apart from it.
  const noCa: NodeJS.ProcessEnv = { ...env };
  delete noCa.NODE_EXTRA_CA_CERTS;
  const floorEnv: NodeJS.ProcessEnv = { ...process.env };
  const floorNoCa: NodeJS.ProcessEnv = { ...process.env };
  delete floorNoCa.NODE_EXTRA_CA_CERTS;
  const caVar = process.env.NODE_EXTRA_CA_CERTS;
  const node = (a: string[]): string[] => ['--import', probe, ...a];
  const baseIndex = args.indexOf('--base');
  const base = baseIndex >= 0 ? resolve(args[baseIndex + 1] ?? '.', 'dist/src/cli.js') : undefined;
  const both = (name: string, a: string[], target: boolean, given: NodeJS.ProcessEnv, unset: NodeJS.ProcessEnv): Case[] => [
    { name, args: node(a), env: given, target },
    { name: `${name} [CA var unset]`, args: node(a), env: unset, target: false },
  ];
  const list = ['admin', 'entity', 'list', '--data-dir', dataDir];
  const cases: Case[] = [
    ...both('node -e 0 (floor)', ['-e', '0'], false, floorEnv, floorNoCa),
    ...both('netsvc --help', [cli, '--help'], true, env, noCa),
    { name: 'netsvc status --help', args: node([cli, 'status', '--help']), env, target: false },
    ...both('netsvc admin entity list', [cli, ...list], true, env, noCa),
    {
      name: 'netsvc admin entity list --config',
      args: node([cli, 'admin', 'entity', 'list', '--config', configFile, '--data-dir', dataDir]),
      env,
      target: true,
    },
  ];
  if (base) {
    // The base build keeps its own validated-configuration cache, as a separate installation
    // would: two builds sharing one, with different entry formats, would replace each other's
    // entries and validate on every other run.
    const baseEnv: NodeJS.ProcessEnv = { ...env, XDG_CACHE_HOME: join(work, 'base-cache') };
    const baseNoCa: NodeJS.ProcessEnv = { ...noCa, XDG_CACHE_HOME: join(work, 'base-cache') };
    cases.push(
      ...both('base: netsvc --help', [base, '--help'], false, baseEnv, baseNoCa),
      ...both('base: netsvc admin entity list', [base, ...list], false, baseEnv, baseNoCa),
    );
  }
  console.log(
    `# netsvc start-up: ${warmup} warm-up runs, then ${runs} runs per command, ${rounds} round(s); target ≤ ${TARGET_S} s`,
  );
  console.log(
    `# NODE_EXTRA_CA_CERTS ${caVar === undefined ? 'not set' : `= ${caVar}`}; "[CA var unset]": the same run without it`,
  );
  console.log(
    `# node ${process.version}, load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let allMet = true;
  for (let round = 1; round <= rounds; round++) {
    // Warm-up fills the page cache and the validated-configuration cache (as any second run finds them).
    for (let i = 0; i < warmup; i++) for (const c of cases) await runOnce(c);
    const results = new Map<Case, Run[]>(cases.map((c) => [c, []]));
    for (let i = 0; i < runs; i++) for (const c of cases) results.get(c)!.push(await runOnce(c));
    console.log(`\n## round ${round} of ${rounds} (${new Date().toISOString().slice(0, 19)}Z)`);
    console.log('| command | wall mean ± sd (s) | wall min | wall max | CPU mean (s) | ≤ 0.2 s | every run, wall (s) |');
    console.log('|---|---|---|---|---|---|---|');
    for (const c of cases) {
      const rs = results.get(c)!;
      const w = stats(rs.map((r) => r.wallS));
      const cpu = stats(rs.map((r) => r.cpuS));
      const met = c.target ? (w.mean <= TARGET_S ? 'yes' : 'no') : '—';
      if (c.target && w.mean > TARGET_S) allMet = false;
      console.log(
        `| ${c.name} | ${f3(w.mean)} ± ${f3(w.sd)} | ${f3(w.min)} | ${f3(w.max)} | ${f3(cpu.mean)} | ${met} | ${rs.map((r) => f3(r.wallS)).join(' ')} |`,
      );
    }
    // What each command adds over the floor of the same environment (mean wall; CPU in brackets).
    const mean = (c: Case, f: (r: Run) => number): number => stats(results.get(c)!.map(f)).mean;
    const [floor, floorUnset] = [cases[0]!, cases[1]!];
    const over = (c: Case): string => {
      const f = c.env?.NODE_EXTRA_CA_CERTS === undefined ? floorUnset : floor;
      return `${f3(mean(c, (r) => r.wallS) - mean(f, (r) => r.wallS))} (${f3(mean(c, (r) => r.cpuS) - mean(f, (r) => r.cpuS))})`;
    };
    console.log(
      `\nfloor: ${f3(mean(floor, (r) => r.wallS))} s as given, ${f3(mean(floorUnset, (r) => r.wallS))} s with NODE_EXTRA_CA_CERTS unset`,
    );
    console.log(
      `over the floor of the same environment, wall (CPU) s: ${cases
        .slice(2)
        .map((c) => `${c.name} +${over(c)}`)
        .join('; ')}`,
    );
  }
  console.log(
    `\ntarget ≤ ${TARGET_S} s (mean wall time) for --help and admin entity list: ${allMet ? 'met' : 'NOT met'} in every round`,
  );
  rmSync(work, { recursive: true, force: true });
}
