/**
 * `npm run bench -- serve [--only restart,api] [--rows 30000000] [--rounds 3]
 *                         [--rates 60000,90000] [--ingest-seconds 10] [--diverse FLOWS:SOURCES]`
 *
 * `netsvc serve` itself, as an operator runs it.
 *
 * restart: how long serve takes to come back, and how much memory it takes,
 * when the open hour is large. For each round it:
 *   1. writes an open hour of `rows` flows (bench/capture-flows.ts, real
 *      softflowd output expanded) through CaptureWriter into a fresh data
 *      directory, left open as a stopped serve leaves it (`SIGTERM`), or
 *      with a torn block at its end as a killed one can (`kill -9`);
 *   2. starts `netsvc serve` on it and times the log lines `netsvc
 *      listening` (flow sockets and HTTP open) and `open hour read back`
 *      (the background recovery done), samples the process's RSS every
 *      50 ms, and asks `/metrics` every 100 ms meanwhile (its latency shows
 *      whether recovery holds the main thread);
 *   3. stops it with SIGTERM.
 * The hour is the current UTC hour, so a round that crosses the hour's end
 * also seals it.
 *
 * api: HTTP latency while serve ingests. For each rate and round it starts
 * serve on a fresh data directory, replays the export (the 459-flow fixture,
 * or with --diverse softflowd's export of that many distinct flows) to its
 * flow port from a separate sender, and meanwhile asks
 * `GET /svc/api/netflow/latest` (with a token) and `GET /metrics` every
 * 20 ms each; a request waits behind anything that holds serve's main
 * thread, so the slowest answer bounds its longest stall. Loss is read from
 * serve's own counters (received datagrams, kernel drops).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CaptureWriter } from '../storage/capture/writer.js';
import { expandHour, loadSeedFlows, SEED_FIXTURE } from './capture-flows.js';
import { freeUdpPort, send } from './collector-ingest.js';
import { diverseExport } from './diverse-traffic.js';
import { fmt, percentile } from './lib.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../fixtures/flow-oracle/1/softflowd-v9/export.pcap', import.meta.url));

interface RestartResult {
  round: number;
  stop: 'SIGTERM' | 'kill -9';
  rows: number;
  fileMiB: number;
  listeningMs: number;
  recoveredMs: number;
  maxRssMiB: number;
  rssAfterMiB: number;
  metricsP99Ms: number;
  metricsMaxMs: number;
}

/** Writes `rows` flows into the current hour's open file and leaves it open. */
async function writeOpenHour(dataDir: string, rows: number): Promise<string> {
  const now = Date.now();
  const hourStart = now - (now % 3_600_000);
  const w = new CaptureWriter({
    dataDir,
    timezone: 'UTC',
    now: () => now,
    timer: false,
    flushIntervalMs: 3_600_000,
    blockRows: 65_536,
    aggregates: false,
  });
  await w.start();
  const seed = loadSeedFlows(SEED_FIXTURE);
  for (const batch of expandHour(seed, { count: rows, hourStart }, 65_536)) {
    // Received now: every row lands in the open hour, whatever the seed's spread.
    batch.cols.received.fill(now, 0, batch.length);
    w.write('netflow', batch);
  }
  await w.close();
  const dir = join(dataDir, 'flows', 'netflow');
  return join(
    dir,
    readdirSync(dir).find((n) => n.startsWith('nfcapd.current.'))!,
  );
}

/** Appends the first half of the file's first block: a block cut mid-write, as a kill -9 can leave. */
function tearTail(path: string): void {
  const fd = openSync(path, 'r');
  const head = Buffer.alloc(65_536);
  readSync(fd, head, 0, head.length, 0);
  closeSync(fd);
  const headerSize = head.readUInt16LE(6); // format.ts: u32 magic, u16 version, u16 headerSize
  appendFileSync(path, head.subarray(headerSize, headerSize + 4096));
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A config for serve on `dataDir`, every listener on loopback, flows on `flowPort` (0: any). */
function writeServeConfig(dataDir: string, flowPort: number): string {
  const config = join(dataDir, 'netsvc.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      dataDir,
      timezone: 'UTC',
      log: { level: 'info' },
      http: { host: '127.0.0.1', port: 0 },
      flowSources: { netflow: { listen: `127.0.0.1:${flowPort}` }, lentor: { listen: '127.0.0.1:0' } },
      syslogReceiver: { host: '127.0.0.1', port: 0 },
      entities: { default: { flowSources: ['netflow', 'lentor'] } },
    }),
  );
  return config;
}

async function restartOnce(
  dataDir: string,
  round: number,
  stop: RestartResult['stop'],
  rows: number,
  fileBytes: number,
): Promise<RestartResult> {
  const config = writeServeConfig(dataDir, 0);
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let listeningMs = Number.NaN;
  let recoveredMs = Number.NaN;
  let url = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
    if (m && !url) {
      url = m[1]!;
      listeningMs = performance.now() - started;
    }
    if (Number.isNaN(recoveredMs) && out.includes('open hour read back')) recoveredMs = performance.now() - started;
  });
  let maxRss = 0;
  const latencies: number[] = [];
  const deadline = started + 600_000;
  while (Number.isNaN(recoveredMs) && performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${err}`);
    maxRss = Math.max(maxRss, rssMiB(child.pid!));
    if (url) {
      const a = performance.now();
      await fetch(`${url}/metrics`).then((r) => r.text());
      latencies.push(performance.now() - a);
    }
    await new Promise((r) => setTimeout(r, url ? 100 : 50));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const rssAfter = rssMiB(child.pid!);
  maxRss = Math.max(maxRss, rssAfter);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
  latencies.sort((a, b) => a - b);
  return {
    round,
    stop,
    rows,
    fileMiB: fileBytes / 2 ** 20,
    listeningMs,
    recoveredMs,
    maxRssMiB: maxRss,
    rssAfterMiB: rssAfter,
    metricsP99Ms: latencies.length ? percentile(latencies, 99) : Number.NaN,
    metricsMaxMs: latencies.length ? latencies[latencies.length - 1]! : Number.NaN,
  };
}

function printTable(title: string, head: string[], lines: string[][]): void {
  console.log(`\n${title}`);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  console.log(head.map((h, i) => h.padStart(widths[i]!)).join('  '));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(l.map((c, i) => c.padStart(widths[i]!)).join('  '));
}

async function restartSection(rows: number, rounds: number): Promise<void> {
  const results: RestartResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const stop of ['SIGTERM', 'kill -9'] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-bench-restart-'));
      try {
        const path = await writeOpenHour(resolve(dataDir), rows);
        if (stop === 'kill -9') tearTail(path);
        results.push(await restartOnce(dataDir, round, stop, rows, statSync(path).size));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
      const r = results[results.length - 1]!;
      console.error(
        `round ${round} ${stop}: listening ${fmt(r.listeningMs, 0)} ms, read back ${fmt(r.recoveredMs, 0)} ms, max RSS ${fmt(r.maxRssMiB, 0)} MiB`,
      );
    }
  }
  printTable(
    'Restart with a large open hour (netsvc serve, this machine)',
    [
      'round',
      'stopped by',
      'rows',
      'file MiB',
      'listening ms',
      'read back ms',
      'max RSS MiB',
      'RSS after MiB',
      '/metrics p99 ms',
      '/metrics max ms',
    ],
    results.map((r) => [
      String(r.round),
      r.stop,
      r.rows.toLocaleString('en-US'),
      fmt(r.fileMiB, 0),
      fmt(r.listeningMs, 0),
      fmt(r.recoveredMs, 0),
      fmt(r.maxRssMiB, 0),
      fmt(r.rssAfterMiB, 0),
      fmt(r.metricsP99Ms, 1),
      fmt(r.metricsMaxMs, 1),
    ]),
  );
}

// ---------------------------------------------------------------- api under ingest

interface ApiResult {
  rate: number;
  round: number;
  sentPerSecond: number;
  lossPercent: number;
  kernelDrops: number;
  latest: { p50: number; p99: number; max: number; n: number };
  metrics: { p50: number; p99: number; max: number; n: number };
}

/** Sums the samples of a metric in Prometheus text (all label sets). */
function metricSum(text: string, name: string): number {
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) n += Number(line.split(' ').pop());
  return n;
}

function latencyStats(xs: number[]): ApiResult['latest'] {
  const s = [...xs].sort((a, b) => a - b);
  return {
    p50: s.length ? percentile(s, 50) : Number.NaN,
    p99: s.length ? percentile(s, 99) : Number.NaN,
    max: s.length ? s[s.length - 1]! : Number.NaN,
    n: s.length,
  };
}

async function apiOnce(pcap: string, perLoop: number, rate: number, seconds: number, round: number): Promise<ApiResult> {
  const dataDir = resolve(mkdtempSync(join(tmpdir(), 'netsvc-bench-api-')));
  const port = freeUdpPort();
  const config = writeServeConfig(dataDir, port);
  const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8' });
  cli(['admin', 'entity', 'add', 'default', '--areas', 'netflow']);
  cli(['admin', 'user', 'add', 'default', 'bench', '--areas', 'netflow']);
  const cred = JSON.parse(cli(['admin', 'credentials', 'issue', 'default', 'bench', '--json']).stdout) as {
    api_id: string;
    secret: string;
  };
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const url = await new Promise<string>((ok, fail) => {
      const timer = setInterval(() => {
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
        if (m) {
          clearInterval(timer);
          ok(m[1]!);
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          fail(new Error(`serve exited: ${out}`));
        }
      }, 20);
    });
    const auth = (await (
      await fetch(`${url}/svc/api/netflow/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(cred),
      })
    ).json()) as { result: { access_token: string } };
    const token = auth.result.access_token;
    const before = await (await fetch(`${url}/metrics`)).text();
    const latest: number[] = [];
    const metrics: number[] = [];
    let sending = true;
    const poll = async (target: string, into: number[], headers: Record<string, string>): Promise<void> => {
      while (sending) {
        const a = performance.now();
        const res = await fetch(target, { headers });
        await res.text();
        into.push(performance.now() - a);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const pollers = [
      poll(`${url}/svc/api/netflow/latest`, latest, { authorization: `Bearer ${token}` }),
      poll(`${url}/metrics`, metrics, {}),
    ];
    const loops = Math.max(1, Math.round((rate * seconds) / perLoop));
    const sent = await send(pcap, port, rate, loops);
    sending = false;
    await Promise.all(pollers);
    await new Promise((r) => setTimeout(r, 1500));
    const after = await (await fetch(`${url}/metrics`)).text();
    const received =
      metricSum(after, 'netsvc_flow_received_datagrams_total') - metricSum(before, 'netsvc_flow_received_datagrams_total');
    const kernelDrops = metricSum(after, 'netsvc_flow_kernel_drops_total') - metricSum(before, 'netsvc_flow_kernel_drops_total');
    return {
      rate,
      round,
      sentPerSecond: Math.round((sent.sent / sent.elapsedMs) * 1000),
      lossPercent: Math.round(((sent.sent - received) / sent.sent) * 10000) / 100,
      kernelDrops,
      latest: latencyStats(latest),
      metrics: latencyStats(metrics),
    };
  } finally {
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function apiSection(pcap: string, rates: number[], seconds: number, rounds: number): Promise<void> {
  const { readCapture } = await import('../collector/pcap/pcap.js');
  const perLoop = readCapture(readFileSync(pcap)).datagrams.length;
  const results: ApiResult[] = [];
  for (const rate of rates) {
    for (let round = 1; round <= rounds; round++) {
      const r = await apiOnce(pcap, perLoop, rate, seconds, round);
      results.push(r);
      console.error(
        `${rate}/s round ${round}: loss ${r.lossPercent} %, latest p99 ${fmt(r.latest.p99, 1)} ms, metrics p99 ${fmt(r.metrics.p99, 1)} ms`,
      );
    }
  }
  printTable(
    `HTTP while netsvc serve ingests (${pcap.split('/').pop()}, ${seconds} s per run, one request per endpoint every 20 ms)`,
    [
      'datagrams/s',
      'round',
      'sent/s',
      'loss %',
      'kernel drops',
      'latest p50 ms',
      'latest p99 ms',
      'latest max ms',
      'metrics p50 ms',
      'metrics p99 ms',
      'metrics max ms',
    ],
    results.map((r) => [
      r.rate.toLocaleString('en-US'),
      String(r.round),
      r.sentPerSecond.toLocaleString('en-US'),
      fmt(r.lossPercent, 2),
      String(r.kernelDrops),
      fmt(r.latest.p50, 1),
      fmt(r.latest.p99, 1),
      fmt(r.latest.max, 1),
      fmt(r.metrics.p50, 1),
      fmt(r.metrics.p99, 1),
      fmt(r.metrics.max, 1),
    ]),
  );
}

/** Entry point of the suite. */
export async function run(args: string[]): Promise<void> {
  let rows = 30_000_000;
  let rounds = 3;
  let only = ['restart', 'api'];
  let rates = [60_000, 90_000];
  let seconds = 10;
  let diverse: { flows: number; sources: number } | undefined;
  for (let i = 0; i < args.length; i++) {
    const v = args[i + 1];
    if (args[i] === '--rows' && v) rows = Number(args[++i]);
    else if (args[i] === '--rounds' && v) rounds = Number(args[++i]);
    else if (args[i] === '--only' && v) only = args[++i]!.split(',');
    else if (args[i] === '--rates' && v) rates = args[++i]!.split(',').map(Number);
    else if (args[i] === '--ingest-seconds' && v) seconds = Number(args[++i]);
    else if (args[i] === '--diverse' && v) {
      const [flows, sources] = args[++i]!.split(':').map(Number);
      diverse = { flows: flows!, sources: sources ?? Math.ceil(flows! / 4) };
    }
  }
  if (only.includes('api')) {
    const pcap = diverse ? (await diverseExport({ ...diverse, dir: join(tmpdir(), 'netsvc-bench-diverse') })).pcap : FIXTURE;
    await apiSection(pcap, rates, seconds, rounds);
  }
  if (only.includes('restart')) await restartSection(rows, rounds);
}
