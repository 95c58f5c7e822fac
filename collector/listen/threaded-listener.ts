/**
 * Flow listeners that receive and decode off the main thread, so nothing
 * the main thread does (the capture writer encoding a block, the API
 * answering a query, a GC pause) keeps the sockets from being read:
 *
 *   socket thread (socket-thread.ts): recv, claim, copy into a shared ring
 *   decode thread (ingest-worker.ts): the in-thread listeners of
 *     udp-listener.ts in their socket-thread mode: ring → decode → batches
 *   main thread (this module): hand batches to the sink, acknowledge them
 *
 * Same interface as the in-thread listeners (udp-listener.ts). Decoded
 * batches arrive as transferred column buffers and go to the sink in order;
 * each is acknowledged when the sink has taken it, which bounds the memory
 * between the threads. Counters are pushed every `statsEveryMs` and with
 * every `idle()`/`close()` answer, so `sourceStats()` is at most that old.
 * Received times are the wall clock of the socket thread (no injected clock).
 */
import { Worker } from 'node:worker_threads';
import { FailureSignal } from './failure-signal.js';
import { FlowBatch } from '../../common/flow-batch.js';
import type { FlowSink } from '../../common/flow-sink.js';
import { workerScriptPath } from './thread-id.js';
import type { WorkerSinkSpec } from './worker-sink.js';
import { ListenerBindError, ListenerConfigError } from './listener-errors.js';
import { planSockets } from './socket-plan.js';
import type { FlowListeners, SocketStats, SourceStats } from './flow-listeners.js';
import type { FlowSourceSettings } from './flow-source-config.js';
import { flowSourcesWithDefaults } from './flow-source-defaults.js';
import type { FlowListenerOptions } from './listener-options.js';
import type { Log } from '../../common/log.js';

/** Messages from the worker. */
export type WorkerToMain =
  | {
      t: 'started';
      addresses: Record<string, { address: string; port: number }>;
      /** The socket thread's id (Linux), for the service to keep its priority. */
      tid: number | undefined;
      /** The decode thread's (this worker's) id (Linux). */
      decodeTid: number | undefined;
      sourceStats: SourceStats[];
      socketStats: SocketStats[];
    }
  | { t: 'failed'; name: string; message: string; listen: string }
  | { t: 'batch'; source: string; length: number; numeric: ArrayBuffer[]; addrs: ArrayBuffer[]; whole: boolean }
  | { t: 'stats'; sourceStats: SourceStats[]; socketStats: SocketStats[]; tid: number | undefined; sink?: unknown }
  | { t: 'idle'; id: number; sourceStats: SourceStats[]; socketStats: SocketStats[]; tid: number | undefined; sink?: unknown }
  | { t: 'closed'; sourceStats: SourceStats[]; socketStats: SocketStats[]; tid: number | undefined; sink?: unknown }
  /** A message of the worker's own sink (WorkerSinkContext.post). */
  | { t: 'sink'; message: unknown }
  | { t: 'log'; level: 'info' | 'warn' | 'error'; obj: object; msg: string }
  /** The worker's listeners stopped receiving for good (their onFailure). */
  | { t: 'fatal'; message: string };

/** Messages to the worker. */
export type MainToWorker =
  | { t: 'ack'; rows: number }
  | { t: 'idle'; id: number }
  /** idle(), then the worker sink writes what it holds. */
  | { t: 'flush'; id: number }
  | { t: 'close' }
  /** Column buffers of a whole batch the sink is done with, to be filled again. */
  | { t: 'recycle'; numeric: ArrayBuffer[]; addrs: ArrayBuffer[] };

/** Settings of the threaded listeners on top of the in-thread ones. */
export interface ThreadedListenerOptions extends FlowListenerOptions {
  /** Rows decoded but not yet taken by the sink, at most; beyond it the worker queues (and then drops) datagrams. */
  maxInFlightRows: number;
  /** How often the worker reports its counters. */
  statsEveryMs: number;
}

/**
 * Defaults: the decode path warmed up before the sockets are bound (warm-up.ts), 512 Ki rows (about 70 MB, up to twice that when batches go
 * over half full in their whole buffers) between the threads, counters every
 * second, and batches of 62 Ki rows: with the one datagram that overshoots
 * (< 2 Ki rows) a batch stays within the capture writer's 64 Ki-row block,
 * so at high rates each batch crosses to the main thread as whole buffers and
 * becomes a capture block without a copy (CaptureWriter.take);
 * `flushDelayMs` still sends smaller batches on time when traffic is light.
 */
export const DEFAULT_THREADED_OPTIONS = Object.freeze({
  maxInFlightRows: 524_288,
  statsEveryMs: 1000,
  batchRows: 63_488,
  warmUp: true,
  socketThread: true,
});

/** Batch rows that fit a capture block of `blockRows` with a datagram's overshoot. */
export function batchRowsFor(blockRows: number): number {
  return Math.max(1024, blockRows - 2048);
}

/** What the threaded listeners need from the main thread (no decoder factory: decoders live in the worker). */
export interface ThreadedListenerDeps {
  /** Where batches go on this thread; unused (and may be absent) with a worker sink. */
  sink?: FlowSink;
  /** A sink built in the worker itself: batches then never reach this thread. */
  workerSink?: WorkerSinkSpec;
  logger?: Log;
}

/** The threaded listeners: the in-thread interface, and which thread reads the sockets. */
export interface ThreadedFlowListeners extends FlowListeners {
  /** idle(), then the worker sink (if any) writes what it holds. */
  flush(): Promise<void>;
  /** Messages of the worker sink, in the order it sent them. */
  onSinkMessage(fn: (message: unknown) => void): void;
  /** The worker sink's stats as last reported (undefined without one). */
  sinkStats(): unknown;
  /** Id of the thread that reads the sockets (Linux, once started), else undefined. */
  threadId(): number | undefined;
  /** Id of the thread that decodes (and, with a worker sink, writes) the flows (Linux, once started). */
  decodeThreadId(): number | undefined;
  /** As FlowListeners.onFailure, and also when the ingest worker dies after it started. */
  onFailure(fn: (err: Error) => void): void;
}

class ThreadedListeners implements ThreadedFlowListeners {
  private worker: Worker | undefined;
  private addrs: Record<string, { address: string; port: number }> = {};
  private tid: number | undefined;
  private decodeTid: number | undefined;
  private sources: SourceStats[] = [];
  private sockets: SocketStats[] = [];
  private readonly mainCounters = new Map<string, { sinkErrors: number; sinkLostFlows: number }>();
  private chain: Promise<void> = Promise.resolve();
  private nextId = 1;
  private readonly waiting = new Map<number, () => void>();
  private closed: Promise<void> | undefined;
  /** Resolves when the worker thread has exited, however it ended. */
  private exited: Promise<void> = Promise.resolve();
  private readonly failure = new FailureSignal();
  private readonly sinkListeners: Array<(message: unknown) => void> = [];
  private lastSinkStats: unknown;

  constructor(
    private readonly config: Readonly<Record<string, FlowSourceSettings>>,
    private readonly deps: ThreadedListenerDeps,
    private readonly opts: Partial<ThreadedListenerOptions>,
  ) {}

  start(): Promise<void> {
    if (this.worker) return Promise.resolve();
    // A setup that cannot be served is refused here, before any thread starts.
    try {
      planSockets(flowSourcesWithDefaults(this.config));
    } catch (err) {
      return Promise.reject(err);
    }
    const { maxInFlightRows, statsEveryMs, ...options } = { ...DEFAULT_THREADED_OPTIONS, ...this.opts };
    const worker = new Worker(workerScriptPath('ingest-worker'), {
      workerData: { sources: this.config, options, maxInFlightRows, statsEveryMs, sink: this.deps.workerSink },
      // The decode path allocates almost nothing per datagram, but a flood that makes state (a new
      // domain per datagram) grew the young generation to its default ceiling: +20–25 MB of RSS for
      // garbage. 8 MB keeps scavenges cheap and that growth to a few MB (test/e2e/flow-hostile).
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (m: WorkerToMain) => {
        switch (m.t) {
          case 'started':
            started = true;
            this.addrs = m.addresses;
            this.tid = m.tid;
            this.decodeTid = m.decodeTid;
            this.update(m);
            resolve();
            break;
          case 'failed': {
            this.worker = undefined;
            const err =
              m.name === 'ListenerConfigError'
                ? new ListenerConfigError(m.message, m.listen)
                : m.name === 'ListenerBindError'
                  ? new ListenerBindError(m.message, m.listen)
                  : new Error(m.message);
            reject(err);
            break;
          }
          case 'batch':
            this.onBatch(m);
            break;
          case 'stats':
            this.update(m);
            break;
          case 'idle':
            this.update(m);
            this.waiting.get(m.id)?.();
            this.waiting.delete(m.id);
            break;
          case 'closed':
            this.update(m);
            break;
          case 'log':
            this.deps.logger?.[m.level](m.obj, m.msg);
            break;
          case 'sink':
            for (const fn of this.sinkListeners) fn(m.message);
            break;
          case 'fatal':
            if (!this.closed) this.failure.fail(new Error(m.message));
            break;
        }
      });
      worker.on('error', (err) => {
        this.deps.logger?.error({ err }, 'flow ingest worker failed; flow listeners stopped');
        if (!started) reject(err);
        else if (!this.closed) this.failure.fail(err);
      });
      // However the thread ends (closed, failed, crashed), nobody waits for it any longer:
      // idle() callers are answered and close() resolves instead of hanging.
      this.exited = new Promise<void>((resolve) =>
        worker.once('exit', () => {
          if (this.worker === worker) this.worker = undefined;
          this.tid = undefined;
          for (const done of this.waiting.values()) done();
          this.waiting.clear();
          resolve();
        }),
      );
    });
  }

  onFailure(fn: (err: Error) => void): void {
    this.failure.subscribe(fn);
  }

  private update(m: { sourceStats: SourceStats[]; socketStats: SocketStats[]; tid?: number | undefined; sink?: unknown }): void {
    this.sources = m.sourceStats;
    this.sockets = m.socketStats;
    if (m.sink !== undefined) this.lastSinkStats = m.sink;
    if (m.tid !== undefined) this.tid = m.tid;
  }

  private onBatch(m: Extract<WorkerToMain, { t: 'batch' }>): void {
    // The transferred buffers become the batch's columns as they are: allocating a batch and
    // copying into it cost about a tenth of this thread at 120 000 datagrams/s.
    const batch = m.length > 0 ? FlowBatch.fromBuffers(m.length, m) : new FlowBatch(1);
    // A whole batch's arrays go back to the decode thread once the sink is done with them,
    // instead of that thread allocating (and page-faulting in) 8 MB of fresh arrays per batch.
    if (m.whole) batch.release = () => this.recycle(batch);
    // One batch at a time, in arrival order, so the sink sees rows as the worker decoded them.
    this.chain = this.chain.then(async () => {
      try {
        // The batch was built here from transferred buffers: nobody else holds it.
        const sink = this.deps.sink;
        if (!sink) throw new Error('no flow sink on this thread');
        if (sink.take) await sink.take(m.source, batch);
        else {
          await sink.write(m.source, batch);
          batch.release?.();
        }
      } catch (err) {
        const c = this.mainCounters.get(m.source) ?? { sinkErrors: 0, sinkLostFlows: 0 };
        c.sinkErrors++;
        c.sinkLostFlows += m.length;
        this.mainCounters.set(m.source, c);
        this.deps.logger?.error({ source: m.source, err, lostFlows: m.length }, 'flow sink failed; batch lost');
      }
      this.worker?.postMessage({ t: 'ack', rows: m.length } satisfies MainToWorker);
    });
  }

  private recycle(batch: FlowBatch): void {
    batch.release = undefined;
    const w = this.worker;
    if (!w) return;
    const { numeric, addrs } = batch.buffers();
    w.postMessage({ t: 'recycle', numeric, addrs } satisfies MainToWorker, [...numeric, ...addrs]);
  }

  async idle(): Promise<void> {
    await this.ask('idle');
  }

  async flush(): Promise<void> {
    await this.ask('flush');
  }

  private async ask(t: 'idle' | 'flush'): Promise<void> {
    const w = this.worker;
    if (w) {
      const id = this.nextId++;
      const done = new Promise<void>((resolve) => this.waiting.set(id, resolve));
      w.postMessage({ t, id } satisfies MainToWorker);
      await done;
    }
    await this.chain;
  }

  onSinkMessage(fn: (message: unknown) => void): void {
    this.sinkListeners.push(fn);
  }

  sinkStats(): unknown {
    return this.lastSinkStats;
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      const w = this.worker;
      if (w) w.postMessage({ t: 'close' } satisfies MainToWorker);
      await this.exited;
      await this.chain;
      this.worker = undefined;
    })();
    return this.closed;
  }

  addresses(): Record<string, { address: string; port: number }> {
    return { ...this.addrs };
  }

  threadId(): number | undefined {
    return this.tid;
  }

  decodeThreadId(): number | undefined {
    return this.decodeTid;
  }

  sourceStats(): SourceStats[] {
    return this.sources.map((s) => {
      const c = this.mainCounters.get(s.source);
      return c ? { ...s, sinkErrors: s.sinkErrors + c.sinkErrors, sinkLostFlows: s.sinkLostFlows + c.sinkLostFlows } : s;
    });
  }

  socketStats(): SocketStats[] {
    return this.sockets;
  }
}

/**
 * Builds flow listeners that receive and decode in a worker thread and hand
 * batches to `sink` on the calling thread. `start()` rejects with
 * ListenerConfigError or ListenerBindError like the in-thread listeners.
 */
export function createThreadedFlowListeners(
  sources: Readonly<Record<string, FlowSourceSettings>>,
  deps: ThreadedListenerDeps,
  options: Partial<ThreadedListenerOptions> = {},
): ThreadedFlowListeners {
  return new ThreadedListeners(sources, deps, options);
}
