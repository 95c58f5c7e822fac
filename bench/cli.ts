/**
 * `npm run bench -- cli [--runs N] [--warmup N] [--rounds N] [--base DIR]`: how long `netsvc` takes to start
 * and finish a light command, measured as hyperfine does (warm-up runs, then N timed runs of
 * each command, one process each, output to /dev/null), with `node -e 0` as the floor. Commands
 * alternate within a round so that the machine's load falls on all of them alike. Besides wall
 * time it reports the CPU time (user + system) of each Node process, which the other processes on
 * a shared machine disturb less. Target (issue 19): `--help` and `admin entity list` ≤ 0.2 s.
 * `netsvc` is run as a user runs it: bin/netsvc (package.json's `bin`), which starts every command
 * but `serve` without loading the file NODE_EXTRA_CA_CERTS names (src/extra-ca.ts). The floor runs
 * with the environment as given and with NODE_EXTRA_CA_CERTS unset (Node reads that whole file
 * at every start); `node dist/src/cli.js`, the bin before, runs both ways too, for comparison.
 * Each round ends with what every command adds over the floor of the environment its Node process
 * started with. `--base DIR` adds the same commands of another build (a checkout with its dist/
 * built; its bin/netsvc when it has one), in the same rounds.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const TARGET_S = 0.2;

interface Case {
  name: string;
  /** The program (node, or a bin script) and its arguments. */
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Whether the Node process starts with NODE_EXTRA_CA_CERTS (the floor it is compared with). */
  caLoaded: boolean;
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
    const child = spawn(c.file, c.args, { stdio: ['ignore', 'ignore', 'pipe'], env: c.env });
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
  const bin = resolve('bin/netsvc');
  const cli = resolve('dist/src/cli.js');
  const work = mkdtempSync(join(tmpdir(), 'netsvc-bench-cli-'));
  // A preloaded module that reports the process's own CPU time at exit, as the last line of
  // stderr; given through NODE_OPTIONS, which reaches the Node process bin/netsvc starts.
  const probe = join(work, 'cpu-probe.mjs');
  writeFileSync(
    probe,
    "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write(`__cpu=${u.user + u.system}\\n`); });\n",
  );
  const cache = join(work, 'cache');
  const dataDir = join(work, 'data');
  const configFile = join(work, 'netsvc.config.json');
  writeFileSync(configFile, JSON.stringify({ timezone: 'UTC', http: { port: 18080 }, log: { level: 'warn' } }));
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim();
  const given: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cache, NODE_OPTIONS: nodeOptions };
  for (const k of Object.keys(given)) if (k.startsWith('NETSVC_') || k === '_NETSVC_EXTRA_CA_CERTS') delete given[k];
  // Node 20 reads and parses the whole file NODE_EXTRA_CA_CERTS names at the start of every
  // process (≈ 40–80 ms for the system bundle this machine's environment names): the floor and
  // the direct `node dist/src/cli.js` rows run both with the environment as given and with that
  // variable unset.
  const unset: NodeJS.ProcessEnv = { ...given };
  delete unset.NODE_EXTRA_CA_CERTS;
  const caVar = process.env.NODE_EXTRA_CA_CERTS;
  const baseIndex = args.indexOf('--base');
  const baseDir = baseIndex >= 0 ? resolve(args[baseIndex + 1] ?? '.') : undefined;
  const list = ['admin', 'entity', 'list', '--data-dir', dataDir];
  const listConfig = ['admin', 'entity', 'list', '--config', configFile, '--data-dir', dataDir];
  // bin/netsvc starts these commands without the CA file (src/extra-ca.ts): their floor is the unset one.
  const viaBin = (name: string, a: string[], target: boolean): Case => ({
    name,
    file: bin,
    args: a,
    env: given,
    caLoaded: false,
    target,
  });
  const direct = (name: string, a: string[], env: NodeJS.ProcessEnv): Case => ({
    name,
    file: process.execPath,
    args: a,
    env,
    caLoaded: Boolean(env.NODE_EXTRA_CA_CERTS),
    target: false,
  });
  const cases: Case[] = [
    direct('node -e 0 (floor)', ['-e', '0'], given),
    direct('node -e 0 (floor) [CA var unset]', ['-e', '0'], unset),
    viaBin('netsvc --help', ['--help'], true),
    viaBin('netsvc status --help', ['status', '--help'], false),
    viaBin('netsvc admin entity list', list, true),
    viaBin('netsvc admin entity list --config', listConfig, true),
    direct('node dist/src/cli.js --help', [cli, '--help'], given),
    direct('node dist/src/cli.js admin entity list', [cli, ...list], given),
    direct('node dist/src/cli.js --help [CA var unset]', [cli, '--help'], unset),
    direct('node dist/src/cli.js admin entity list [CA var unset]', [cli, ...list], unset),
  ];
  if (baseDir) {
    // The base build keeps its own validated-configuration cache, as a separate installation
    // would: two builds sharing one, with different entry formats, would replace each other's
    // entries and validate on every other run.
    const baseEnv: NodeJS.ProcessEnv = { ...given, XDG_CACHE_HOME: join(work, 'base-cache') };
    const baseBin = join(baseDir, 'bin/netsvc');
    const baseCli = join(baseDir, 'dist/src/cli.js');
    const base = (a: string[]): Case =>
      existsSync(baseBin)
        ? { ...viaBin(`base: netsvc ${a.slice(0, 3).join(' ')}`, a, false), file: baseBin, env: baseEnv }
        : direct(`base: node dist/src/cli.js ${a.slice(0, 3).join(' ')}`, [baseCli, ...a], baseEnv);
    cases.push(base(['--help']), base(list));
  }
  console.log(
    `# netsvc start-up: ${warmup} warm-up runs, then ${runs} runs per command, ${rounds} round(s); target ≤ ${TARGET_S} s`,
  );
  console.log(
    `# NODE_EXTRA_CA_CERTS ${caVar === undefined ? 'not set' : `= ${caVar}`}; "[CA var unset]": the same run without it; netsvc …: bin/netsvc`,
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
      const f = c.caLoaded ? floor : floorUnset;
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
