/**
 * End-to-end UDP ingest, netsvc side by side with nfcapd on the same replay.
 *
 * For each rate, the same real softflowd NetFlow v9 export datagrams
 * (fixtures/flow-oracle/1/softflowd-v9, looped) are sent over loopback by a
 * separate sender process (bench/collector-ingest-sender.ts: the send logic
 * of `netsvc replay --rate`) to:
 *   - netsvc, capture: the service's listener writing hourly capture files
 *     (bench/collector-ingest-receiver.ts in its own process);
 *   - netsvc, decode: the same listener into a summary sink (no storage);
 *   - nfcapd 1.7 (`-B 8388608`), counted afterwards with `nfdump -I`;
 *     `nfcapd-lz4` adds `-y` (LZ4-compressed blocks, the nearest to what
 *     netsvc stores).
 * `--diverse FLOWS[:SOURCES]` replays instead softflowd's export of traffic
 * with that many distinct flows and sources (bench/diverse-traffic.ts).
 * Every receiver asks for an 8 MiB receive buffer. The table shows flows
 * sent vs received, loss, and where the loss happened (kernel receive-buffer
 * overflows from /proc/net/snmp, which are machine-wide, and netsvc's own
 * queue drops).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SummarySink } from '../common/flow-sink.js';
import { importCaptures } from '../collector/pcap/pcap-import.js';
import { readCapture } from '../collector/pcap/pcap.js';
import { diverseExport } from './diverse-traffic.js';

/**
 * Receivers the benchmark can measure: netsvc with the capture writer or a
 * summary sink, its sockets and decoders in a worker thread (`-worker`; for
 * `netsvc-capture-worker` the writer too, how `netsvc serve` runs, and
 * `netsvc-capture-worker-lz4` the same with `capture.codec: lz4`;
 * `-worker-dgram` with its socket thread reading through Node dgram instead
 * of recvmmsg batches and the writer on the main thread) or on the main
 * thread (`-1thread`); nfcapd, and nfcapd with LZ4 blocks (`nfcapd-lz4`).
 */
export const INGEST_COLLECTORS = [
  'netsvc-capture-worker',
  'netsvc-capture-worker-lz4',
  'netsvc-capture-worker-dgram',
  'netsvc-capture-1thread',
  'netsvc-decode-worker',
  'netsvc-decode-1thread',
  'nfcapd',
  'nfcapd-lz4',
] as const;
export type IngestCollector = (typeof INGEST_COLLECTORS)[number];

/** Settings of one benchmark run. */
export interface IngestBenchOptions {
  /** Datagrams per second to send, one measurement each. */
  rates: number[];
  /** Sending time per measurement. */
  seconds: number;
  collectors: IngestCollector[];
  /** Export capture to replay (default: softflowd v9 of seed 1). */
  pcap?: string;
  /** Measurements per rate and collector, taken in rounds over the collectors (a shared machine varies from minute to minute). */
  repeat: number;
  /** Replay softflowd's export of this many distinct flows and sources instead (made once, kept in the temp dir). */
  diverse?: { flows: number; sources: number };
}

/** One measurement. */
export interface IngestResult {
  rate: number;
  /** Which of the `repeat` rounds (1-based). */
  round: number;
  collector: IngestCollector;
  datagramsSent: number;
  /** Rate the sender achieved. */
  sentPerSecond: number;
  flowsSent: number;
  flowsReceived: number;
  lossPercent: number;
  /** UDP RcvbufErrors during the run (whole machine). */
  kernelDrops: number;
  /** netsvc queue drops (null for nfcapd). */
  queueDrops: number | null;
  /** Longest stall of the receiver's main-thread event loop, ms (null for nfcapd). */
  maxStallMs: number | null;
  /** CPU time of the whole receiver process (all threads) while the replay ran, per datagram it received, µs. */
  cpuUsPerDatagram: number | null;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SENDER = fileURLToPath(new URL('./collector-ingest-sender.js', import.meta.url));
const RECEIVER = fileURLToPath(new URL('./collector-ingest-receiver.js', import.meta.url));
const DEFAULT_PCAP = join(ROOT, 'fixtures/flow-oracle/1/softflowd-v9/export.pcap');

/** Udp RcvbufErrors of /proc/net/snmp (0 where that file does not exist). */
function rcvbufErrors(): number {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('Udp:'));
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/);
    return Number(values[names.indexOf('RcvbufErrors')]);
  } catch {
    return 0;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs the sender process to completion; returns its JSON result. */
/** Replays `loops` × the capture to 127.0.0.1:`port` at `rate` datagrams/s from a separate sender process. */
export async function send(
  pcap: string,
  port: number,
  rate: number,
  loops: number,
): Promise<{ sent: number; elapsedMs: number }> {
  const child = spawn(process.execPath, [SENDER, pcap, String(port), String(rate), String(loops)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`sender exited with ${code}`);
  return JSON.parse(out) as { sent: number; elapsedMs: number };
}

/** A netsvc receiver process with a line protocol on stdin/stdout. */
class NetsvcReceiver {
  private readonly lines: string[] = [];
  private waiters: Array<(l: string) => void> = [];
  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const w = this.waiters.shift();
      if (w) w(l);
      else this.lines.push(l);
    });
  }

  static async start(collector: IngestCollector, dataDir: string): Promise<{ r: NetsvcReceiver; port: number }> {
    const sink = collector.includes('capture') ? 'capture' : 'summary';
    const args = [RECEIVER, '--sink', sink, '--data-dir', dataDir];
    if (collector.includes('-worker')) args.push('--threaded');
    // As serve runs it: the capture writer in the decode thread.
    if (collector === 'netsvc-capture-worker') args.push('--worker-sink');
    // The same with LZ4 blocks (capture.codec: lz4), the like of nfcapd -y.
    if (collector === 'netsvc-capture-worker-lz4') args.push('--worker-sink', '--codec', 'lz4');
    if (collector.endsWith('-dgram')) args.push('--dgram');
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const r = new NetsvcReceiver(child);
    const ready = await r.line();
    const m = /^READY (\d+)$/.exec(ready);
    if (!m) throw new Error(`receiver said: ${ready}`);
    return { r, port: Number(m[1]) };
  }

  line(): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async stats(): Promise<{ received: number; queueDrops: number; flows: number; maxStallMs: number; cpuUs: number }> {
    this.child.stdin!.write('stats\n');
    return JSON.parse(await this.line()) as {
      received: number;
      queueDrops: number;
      flows: number;
      maxStallMs: number;
      cpuUs: number;
    };
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin!.end('quit\n');
    await Promise.race([exited, sleep(10_000)]);
    if (this.child.exitCode === null && this.child.pid) process.kill(this.child.pid, 'SIGKILL');
  }
}

async function measureNetsvc(
  collector: IngestCollector,
  pcap: string,
  rate: number,
  loops: number,
): Promise<{
  sent: { sent: number; elapsedMs: number };
  flows: number;
  queueDrops: number;
  maxStallMs: number;
  cpuUsPerDatagram: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-bench-'));
  const { r, port } = await NetsvcReceiver.start(collector, dir);
  try {
    const before = await r.stats();
    const sent = await send(pcap, port, rate, loops);
    // Settled when the received count stops moving and the queue is drained.
    let last = -1;
    let s = await r.stats();
    while (s.received !== last) {
      last = s.received;
      await sleep(300);
      s = await r.stats();
    }
    const cpuUsPerDatagram = (s.cpuUs - before.cpuUs) / Math.max(1, s.received - before.received);
    return { sent, flows: s.flows, queueDrops: s.queueDrops, maxStallMs: s.maxStallMs, cpuUsPerDatagram };
  } finally {
    await r.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU time (user + system, every thread) of a process so far, µs; NaN where /proc is missing. */
function processCpuUs(pid: number): number {
  try {
    // Fields after the command name: state is the 1st, utime the 12th, stime the 13th (clock ticks, 100 per second on Linux).
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}

/** A UDP port on 127.0.0.1 that was free a moment ago (for receivers that take no port 0). */
export function freeUdpPort(): number {
  const probe = spawnSync(
    process.execPath,
    ['-e', "const s=require('dgram').createSocket('udp4');s.bind(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"],
    {
      encoding: 'utf8',
    },
  );
  return Number(probe.stdout.trim());
}

async function measureNfcapd(
  pcap: string,
  rate: number,
  loops: number,
  lz4: boolean,
): Promise<{ sent: { sent: number; elapsedMs: number }; flows: number; cpuUsPerDatagram: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-bench-nfcapd-'));
  // nfcapd takes a port, not port 0: ask the kernel for a free one first.
  const port = freeUdpPort();
  const args = ['-w', dir, '-b', '127.0.0.1', '-p', String(port), '-t', '3600', '-B', '8388608', ...(lz4 ? ['-y'] : [])];
  const child = spawn('nfcapd', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (b: Buffer): void => {
        log += b.toString();
        if (log.includes('Startup')) resolve();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (c) => reject(new Error(`nfcapd exited ${c}: ${log}`)));
    });
    const cpuBefore = processCpuUs(child.pid!);
    const dropsBefore = rcvbufErrors();
    const sent = await send(pcap, port, rate, loops);
    await sleep(1000);
    const cpu = processCpuUs(child.pid!) - cpuBefore;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    process.kill(child.pid!, 'SIGTERM');
    await exited;
    const info = spawnSync('nfdump', ['-R', dir, '-I'], { encoding: 'utf8' });
    const m = /^Flows:\s*(\d+)/m.exec(info.stdout);
    // nfcapd does not say how many datagrams it took; without kernel drops it took all that were sent.
    const taken = sent.sent - Math.max(0, rcvbufErrors() - dropsBefore);
    return { sent, flows: m ? Number(m[1]) : 0, cpuUsPerDatagram: cpu / Math.max(1, taken) };
  } finally {
    if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs every collector at every rate. */
export async function benchIngest(opts: IngestBenchOptions): Promise<IngestResult[]> {
  const pcap = opts.diverse
    ? (await diverseExport({ ...opts.diverse, dir: join(tmpdir(), 'netsvc-bench-diverse') })).pcap
    : (opts.pcap ?? DEFAULT_PCAP);
  const perLoop = readCapture(readFileSync(pcap)).datagrams.length;
  const summary = new SummarySink();
  await importCaptures([pcap], { source: 'bench', sink: summary });
  const flowsPerLoop = summary.summary().flows;
  const haveNfcapd = spawnSync('nfcapd', ['-V'], { stdio: 'ignore' }).error === undefined;
  const results: IngestResult[] = [];
  for (const rate of opts.rates) {
    const loops = Math.max(1, Math.round((rate * opts.seconds) / perLoop));
    for (let round = 1; round <= opts.repeat; round++) {
      for (const collector of opts.collectors) {
        const nfcapd = collector === 'nfcapd' || collector === 'nfcapd-lz4';
        if (nfcapd && !haveNfcapd) continue;
        const before = rcvbufErrors();
        let m: {
          sent: { sent: number; elapsedMs: number };
          flows: number;
          queueDrops?: number;
          maxStallMs?: number;
          cpuUsPerDatagram: number;
        };
        if (nfcapd) m = await measureNfcapd(pcap, rate, loops, collector === 'nfcapd-lz4');
        else m = await measureNetsvc(collector, pcap, rate, loops);
        const flowsSent = loops * flowsPerLoop;
        results.push({
          rate,
          round,
          collector,
          datagramsSent: m.sent.sent,
          sentPerSecond: Math.round((m.sent.sent / m.sent.elapsedMs) * 1000),
          flowsSent,
          flowsReceived: m.flows,
          lossPercent: Math.round(((flowsSent - m.flows) / flowsSent) * 10000) / 100,
          kernelDrops: rcvbufErrors() - before,
          queueDrops: m.queueDrops ?? null,
          maxStallMs: m.maxStallMs ?? null,
          cpuUsPerDatagram: Number.isFinite(m.cpuUsPerDatagram) ? Math.round(m.cpuUsPerDatagram * 10) / 10 : null,
        });
        // Every round as it ends (the table of a repeated run shows medians): where a loss happened.
        const r = results[results.length - 1]!;
        console.error(
          `${rate}/s round ${round} ${collector}: sent ${r.sentPerSecond}/s, loss ${r.lossPercent} %, kernel drops ${r.kernelDrops}, queue drops ${r.queueDrops ?? '-'}, stall ${r.maxStallMs ?? '-'} ms, ${r.cpuUsPerDatagram ?? '-'} µs/datagram`,
        );
      }
    }
  }
  return results;
}

/** `--rates a,b,c`, `--ingest-seconds N`, `--collectors x,y`, `--repeat N` from the collector suite's extra arguments. */
export function parseIngestArgs(rest: string[]): IngestBenchOptions {
  const opts: IngestBenchOptions = {
    rates: [10_000, 30_000, 60_000, 90_000, 120_000],
    seconds: 3,
    collectors: ['netsvc-capture-worker', 'netsvc-decode-1thread', 'nfcapd'],
    repeat: 1,
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const v = rest[i + 1];
    if (a === '--rates' && v) {
      opts.rates = v
        .split(',')
        .map(Number)
        .filter((n) => n > 0);
      i++;
    } else if (a === '--ingest-seconds' && v) {
      opts.seconds = Number(v);
      i++;
    } else if (a === '--collectors' && v) {
      const names = v.split(',');
      for (const n of names)
        if (!(INGEST_COLLECTORS as readonly string[]).includes(n))
          throw new Error(`unknown collector ${n}; one of ${INGEST_COLLECTORS.join(', ')}`);
      opts.collectors = names as IngestCollector[];
      i++;
    } else if (a === '--repeat' && v) {
      opts.repeat = Math.max(1, Math.floor(Number(v)) || 1);
      i++;
    } else if (a === '--pcap' && v) {
      opts.pcap = v;
      i++;
    } else if (a === '--diverse' && v) {
      const [flows, sources] = v.split(':').map(Number);
      if (!(flows! > 0)) throw new Error(`--diverse takes FLOWS[:SOURCES], got ${v}`);
      opts.diverse = { flows: flows!, sources: sources && sources > 0 ? sources : Math.ceil(flows! / 4) };
      i++;
    }
  }
  return opts;
}

/** Middle value (the mean of the two middle ones for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One line per rate and collector over its rounds: median loss and every round's loss, median drops, longest stall. */
export interface IngestSummary {
  rate: number;
  collector: IngestCollector;
  rounds: number;
  flowsSent: number;
  medianLossPercent: number;
  lossPercents: number[];
  medianKernelDrops: number;
  medianQueueDrops: number | null;
  maxStallMs: number | null;
  medianCpuUsPerDatagram: number | null;
}

/** Groups repeated measurements (in the order they were first seen). */
export function summarizeIngest(results: IngestResult[]): IngestSummary[] {
  const groups = new Map<string, IngestResult[]>();
  for (const r of results) {
    const k = `${r.rate}|${r.collector}`;
    const g = groups.get(k) ?? [];
    g.push(r);
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => {
    const q = g.map((r) => r.queueDrops).filter((x): x is number => x !== null);
    const st = g.map((r) => r.maxStallMs).filter((x): x is number => x !== null);
    const cpu = g.map((r) => r.cpuUsPerDatagram).filter((x): x is number => x !== null);
    return {
      rate: g[0]!.rate,
      collector: g[0]!.collector,
      rounds: g.length,
      flowsSent: g[0]!.flowsSent,
      medianLossPercent: median(g.map((r) => r.lossPercent)),
      lossPercents: g.map((r) => r.lossPercent),
      medianKernelDrops: median(g.map((r) => r.kernelDrops)),
      medianQueueDrops: q.length ? median(q) : null,
      maxStallMs: st.length ? Math.max(...st) : null,
      medianCpuUsPerDatagram: cpu.length ? median(cpu) : null,
    };
  });
}
