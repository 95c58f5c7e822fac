/**
 * Decode thread of the threaded flow listeners (see threaded-listener.ts).
 *
 *   socket thread (socket-worker.ts)      this thread                     main thread
 *   recv → claim → copy ──shared ring──▶  decode → batch ──postMessage──▶ sink (capture writer)
 *                                                        ◀── ack ───────
 *
 * The socket thread only copies datagrams into a shared ring, so the kernel
 * buffer is drained even while this thread decodes or the main thread
 * writes. Batches go to the main thread as transferred column buffers; each
 * is acknowledged once the sink took it. While more than `maxInFlightRows`
 * rows are unacknowledged this thread stops decoding, the ring fills, and
 * the socket thread counts queue drops: memory stays bounded and every loss
 * is counted.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { exporterRef, type ExporterRef } from './decoder.js';
import { ADDRESS_COLUMNS, NUMERIC_COLUMNS, type FlowBatch } from './flow-batch.js';
import type { FlowSink } from './flow-sink.js';
import { SourceIngest } from './ingest.js';
import { formatIp } from './pcap.js';
import { createRingBuffer, RingConsumer, ringCapacityFor, type RingLayout } from './shared-ring.js';
import type { SocketWorkerInput, SocketWorkerMessage } from './socket-worker.js';
import type { MainToWorker, WorkerToMain } from './threaded-listener.js';
import {
  DEFAULT_LISTENER_OPTIONS,
  openSourceDecoder,
  planSockets,
  type FlowListenerOptions,
  type FlowSourceConfig,
  type ListenerLogger,
  type SocketStats,
  type SourceStats,
} from './udp-listener.js';

interface WorkerInput {
  sources: Record<string, FlowSourceConfig>;
  options: Partial<FlowListenerOptions>;
  maxInFlightRows: number;
  statsEveryMs: number;
  faultInjection?: string;
}

/**
 * Test hook: `expire:N` or `flush:N` makes the first N expiry runs or batch
 * flushes of this thread throw, to prove the decode loop outlives them.
 */
const fault = /^(expire|flush):(\d+)$/.exec((workerData as WorkerInput).faultInjection ?? '');
let faultsLeft = fault ? Number(fault[2]) : 0;
function injectFault(step: 'expire' | 'flush'): void {
  if (fault?.[1] === step && faultsLeft > 0) {
    faultsLeft--;
    throw new Error(`injected ${step} failure`);
  }
}

/** Exporter ids the socket thread can hand out (16 bytes of shared memory each). */
const MAX_EXPORTERS = 65_536;

const port = parentPort!;
const input = workerData as WorkerInput;
const opts: FlowListenerOptions = { ...DEFAULT_LISTENER_OPTIONS, ...input.options };
const post = (m: WorkerToMain, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer);

function plain(obj: object): object {
  // Errors are flattened so they survive postMessage.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  return out;
}

const logger: ListenerLogger = {
  info: (obj, msg) => post({ t: 'log', level: 'info', obj: plain(obj), msg: msg ?? '' }),
  warn: (obj, msg) => post({ t: 'log', level: 'warn', obj: plain(obj), msg: msg ?? '' }),
  error: (obj, msg) => post({ t: 'log', level: 'error', obj: plain(obj), msg: msg ?? '' }),
};
const lastLog = new Map<string, number>();
function rateLog(key: string, obj: object, msg: string, level: 'warn' | 'error' = 'warn'): void {
  const t = Date.now();
  const last = lastLog.get(key);
  if (last !== undefined && t - last < opts.logEveryMs) return;
  if (lastLog.size > 10_000) lastLog.clear();
  lastLog.set(key, t);
  logger[level](obj, msg);
}

// ------------------------------------------------------- batches to main

let inFlightRows = 0;
let release: (() => void) | undefined;
const forward: FlowSink = {
  write(source: string, batch: FlowBatch) {
    injectFault('flush');
    const n = batch.length;
    // A batch at least half full goes over as it is (its buffers transferred, the ingest
    // refills fresh ones): at high rates these are whole capture blocks that the writer
    // adopts without a copy. A few rows of a timed flush are copied out instead.
    const { numeric, addrs } =
      n * 2 >= batch.capacity
        ? batch.handOff()
        : {
            numeric: NUMERIC_COLUMNS.map((c) => batch.cols[c].slice(0, n).buffer as ArrayBuffer),
            addrs: ADDRESS_COLUMNS.map((c) => batch[c].slice(0, n * 16).buffer as ArrayBuffer),
          };
    inFlightRows += n;
    post({ t: 'batch', source, length: n, numeric, addrs }, [...numeric, ...addrs]);
    if (inFlightRows <= input.maxInFlightRows) return;
    return new Promise<void>((resolve) => (release = resolve));
  },
};

// ------------------------------------------------------------------ setup

interface Source {
  name: string;
  ingest: SourceIngest;
  save: () => void;
  changed: () => boolean;
}

let plan: ReturnType<typeof planSockets>;
try {
  plan = planSockets(input.sources);
} catch (err) {
  const e = err as Error & { listen?: string };
  post({ t: 'failed', name: e.name, message: e.message, listen: e.listen ?? '' });
  port.close();
  throw err; // ends this thread; main already has the answer
}

const layout: RingLayout = {
  capacity: ringCapacityFor(opts.queueBytes),
  sources: plan.names.length,
  sockets: plan.sockets.length,
  maxExporters: MAX_EXPORTERS,
};
const sab = createRingBuffer(layout);
const ring = new RingConsumer(sab, layout);
const sources: Source[] = plan.names.map((name) => {
  const { decoder, save, changed } = openSourceDecoder(name, input.sources[name]!, opts, Date.now, logger);
  return { name, save, changed, ingest: new SourceIngest({ source: name, sink: forward, decoder, batchRows: opts.batchRows }) };
});
/** Per source: failures of the decode thread's own steps (flush, expiry, template save), each survived. */
const ingestErrors: number[] = plan.names.map(() => 0);
const refs = new Map<number, { gen: number; ref: ExporterRef }>();
let bound: { address: string; port: number; granted: number }[] = [];

/** The address an id names; ids are recycled, so a cached one is used only for the same generation. */
function exporter(id: number, gen: number): ExporterRef {
  let e = refs.get(id);
  if (e === undefined || e.gen !== gen) {
    e = { gen, ref: exporterRef(formatIp(ring.exporterAddress(id))) };
    refs.set(id, e);
  }
  return e.ref;
}

function sourceStats(): SourceStats[] {
  return sources.map((s, i) => {
    const snap = s.ingest.decoder.counters.snapshot();
    const sock = plan.sockets.findIndex((p) => p.sourceIdx.includes(i));
    const b = bound[sock];
    return {
      source: s.name,
      listen: b ? hostPort(b.address, b.port) : input.sources[s.name]!.listen,
      received: ring.stats[ring.sourceStat(i, 'received')]!,
      queueDrops: ring.stats[ring.sourceStat(i, 'queueDrops')]!,
      sinkErrors: 0,
      sinkLostFlows: 0,
      decoderErrors: s.ingest.decoderErrors,
      ingestErrors: ingestErrors[i]!,
      total: snap.total,
      exporters: snap.exporters,
    };
  });
}

function socketStats(): SocketStats[] {
  return plan.sockets.map((p, g) => {
    const b = bound[g];
    return {
      listen: b ? hostPort(b.address, b.port) : p.listen,
      sources: p.sourceIdx.map((i) => plan.names[i]!),
      receiveBufferRequested: p.requestedBuffer,
      receiveBufferGranted: b?.granted ?? 0,
      unclaimed: ring.stats[ring.socketStat(g, 'unclaimed')]!,
      queueDepth: ring.stats[ring.socketStat(g, 'produced')]! - ring.stats[ring.socketStat(g, 'consumed')]!,
      queueHighWater: ring.stats[ring.socketStat(g, 'highWater')]!,
    };
  });
}

const stats = (): { sourceStats: SourceStats[]; socketStats: SocketStats[] } => ({ sourceStats: sourceStats(), socketStats: socketStats() });

function hostPort(address: string, p: number): string {
  return address.includes(':') ? `[${address}]:${p}` : `${address}:${p}`;
}

/** The compiled socket thread script, next to this one. */
function socketWorkerPath(): string {
  const here = fileURLToPath(import.meta.url);
  const sibling = join(dirname(here), 'socket-worker.js');
  if (existsSync(sibling)) return sibling;
  return fileURLToPath(new URL('../dist/collector/socket-worker.js', import.meta.url));
}

// ------------------------------------------------------------ decode loop

let closing = false;
let readerClosed = false;
const idleWaiters: number[] = [];
let oldestRowAt = 0;
let lastExpire = Date.now();
let lastSave = Date.now();
/** When templates were first seen changed since the last save (0 = none pending). */
let changedSince = 0;

function hasRows(): boolean {
  return sources.some((s) => s.ingest.batch.length > 0);
}

/** Counts and logs (rate-limited) a failed step of source `i` (every source when undefined); the loop goes on. */
function stepFailed(step: string, err: unknown, i?: number): void {
  const hit = i === undefined ? sources.map((_, k) => k) : [i];
  for (const k of hit) ingestErrors[k]!++;
  const name = i === undefined ? '*' : sources[i]!.name;
  rateLog(`step:${step}:${name}`, { source: name, step, err, ingestErrors: i === undefined ? undefined : ingestErrors[i] }, 'flow decode thread step failed; counted, ingest goes on', 'error');
}

/** Flushes one source's batch; a failure loses that batch (the ingest clears it), is counted, and is not thrown. */
async function flushOne(i: number): Promise<void> {
  try {
    const r = sources[i]!.ingest.flush();
    if (r) await r;
  } catch (err) {
    stepFailed('flush', err, i);
  }
}

async function flushAll(): Promise<void> {
  for (let i = 0; i < sources.length; i++) await flushOne(i);
}

function saveTemplates(onlyChanged = false): void {
  sources.forEach((s, i) => {
    try {
      if (onlyChanged && !s.changed()) return;
      s.save();
    } catch (err) {
      ingestErrors[i]!++;
      rateLog(`save:${s.name}`, { source: s.name, err }, 'flow templates could not be saved');
    }
  });
}

function maintain(now: number): void {
  if (now - lastSave >= opts.templateSaveEveryMs) {
    lastSave = now;
    changedSince = 0;
    saveTemplates();
  }
  // A template change is saved within templateSaveDelayMs, one save for all changes in that time.
  if (changedSince === 0 && sources.some((s) => s.changed())) changedSince = now;
  if (changedSince > 0 && now - changedSince >= opts.templateSaveDelayMs) {
    changedSince = 0;
    saveTemplates(true);
  }
  if (now - lastExpire >= opts.expireEveryMs) {
    lastExpire = now;
    sources.forEach((s, i) => {
      try {
        injectFault('expire');
        s.ingest.decoder.expire(now);
      } catch (err) {
        stepFailed('expire', err, i);
      }
    });
  }
}

async function decodeLoop(): Promise<void> {
  for (;;) {
    try {
      if (await loopOnce()) return;
    } catch (err) {
      // Anything the steps did not catch themselves: counted on every source, the loop goes on.
      ring.release(); // a record taken but not released would otherwise come back forever
      stepFailed('loop', err);
      oldestRowAt = hasRows() ? Date.now() : 0;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const consumedStats = plan.sockets.map((_, g) => ring.socketStat(g, 'consumed'));

/** One pass of the decode loop: drain a chunk, maintain, flush, wait; true when closing is complete. */
async function loopOnce(): Promise<boolean> {
  const consumed = consumedStats;
  {
    let n = 0;
    for (; n < opts.drainChunk; n++) {
      const rec = ring.next();
      if (!rec) break;
      const s = sources[rec.source];
      if (s) {
        const outcome = s.ingest.decode(rec.payload, exporter(rec.exporterId, rec.exporterGen), rec.receivedMs);
        if (outcome.status === 'decoder-error') {
          rateLog(`decoder-error:${s.name}`, { source: s.name, exporter: exporter(rec.exporterId, rec.exporterGen).address, version: outcome.version, err: outcome.error, decoderErrors: s.ingest.decoderErrors }, 'flow decoder failed on a datagram; dropped, ingest goes on', 'error');
        } else if (outcome.status !== 'ok') {
          rateLog(`${outcome.status}:${s.name}:${rec.exporterId}`, { source: s.name, exporter: exporter(rec.exporterId, rec.exporterGen).address, status: outcome.status, version: outcome.version }, 'datagram dropped by the decoder');
        }
      }
      const g = rec.socket;
      ring.release();
      ring.stats[consumed[g]!]!++;
      if (s && oldestRowAt === 0 && s.ingest.batch.length > 0) oldestRowAt = Date.now();
      if (s?.ingest.full) {
        await flushOne(rec.source);
        if (!hasRows()) oldestRowAt = 0;
      }
    }
    const now = Date.now();
    maintain(now);
    const rows = hasRows();
    if (rows && (now - oldestRowAt >= opts.flushDelayMs || idleWaiters.length > 0 || closing)) {
      await flushAll();
      oldestRowAt = 0;
    }
    if (n === opts.drainChunk) {
      // More is likely waiting; let acks and requests in between chunks.
      await yieldToLoop();
      return false;
    }
    // The ring was empty.
    if (closing && readerClosed && ring.usedBytes() === 0) {
      await flushAll();
      return true;
    }
    if (!hasRows() && idleWaiters.length > 0) {
      const s = stats();
      for (const id of idleWaiters.splice(0)) post({ t: 'idle', id, ...s });
    }
    let wait = hasRows() ? Math.max(1, opts.flushDelayMs - (Date.now() - oldestRowAt)) : 1000;
    if (changedSince > 0) wait = Math.min(wait, Math.max(1, opts.templateSaveDelayMs - (Date.now() - changedSince)));
    await ring.waitForData(wait);
    return false;
  }
}

port.on('message', (m: MainToWorker) => {
  if (m.t === 'ack') {
    inFlightRows -= m.rows;
    if (release && inFlightRows <= input.maxInFlightRows) {
      const r = release;
      release = undefined;
      r();
    }
  } else if (m.t === 'idle') {
    idleWaiters.push(m.id);
    ring.wake();
  } else if (m.t === 'close') {
    closing = true;
    socketWorker.postMessage({ t: 'close' });
  }
});

const socketWorker = new Worker(socketWorkerPath(), {
  workerData: {
    sab,
    layout,
    sourceNames: plan.names,
    sockets: plan.sockets.map((p) => ({ listen: p.listen, requestedBuffer: p.requestedBuffer, claims: [...p.claims], defaultSource: p.defaultSource })),
    logEveryMs: opts.logEveryMs,
    queueDatagrams: opts.queueDatagrams,
  } satisfies SocketWorkerInput,
});

let timer: NodeJS.Timeout | undefined;
socketWorker.on('message', (m: SocketWorkerMessage) => {
  switch (m.t) {
    case 'bound': {
      bound = m.sockets;
      const addresses: Record<string, { address: string; port: number }> = {};
      plan.sockets.forEach((p, g) => {
        for (const i of p.sourceIdx) addresses[plan.names[i]!] = { address: bound[g]!.address, port: bound[g]!.port };
      });
      plan.sockets.forEach((p, g) => {
        const granted = bound[g]!.granted;
        if (granted < p.requestedBuffer) {
          logger.warn({ listen: p.listen, requested: p.requestedBuffer, granted }, 'kernel granted a smaller UDP receive buffer than configured (raise net.core.rmem_max)');
        }
        logger.info({ sources: p.sourceIdx.map((i) => plan.names[i]), address: bound[g]!.address, port: bound[g]!.port, receiveBuffer: granted }, 'flow listener started');
      });
      post({ t: 'started', addresses, ...stats() });
      timer = setInterval(() => post({ t: 'stats', ...stats() }), input.statsEveryMs);
      timer.unref();
      decodeLoop().then(
        () => {
          if (timer) clearInterval(timer);
          saveTemplates();
          post({ t: 'closed', ...stats() });
          port.close();
        },
        (err: unknown) => {
          logger.error({ err }, 'flow decode loop failed');
          port.close();
        },
      );
      break;
    }
    case 'failed':
      post({ t: 'failed', name: m.name, message: m.message, listen: m.listen });
      port.close();
      break;
    case 'log':
      post({ t: 'log', level: m.level, obj: m.obj, msg: m.msg });
      break;
    case 'closed':
      readerClosed = true;
      ring.wake();
      break;
  }
});
socketWorker.on('error', (err) => {
  logger.error({ err }, 'flow socket thread failed');
  readerClosed = true;
  ring.wake();
});
