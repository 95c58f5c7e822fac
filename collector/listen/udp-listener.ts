/**
 * UDP listeners for the flow sources of the configuration.
 *
 * One socket per distinct `listen` address: sources on the same address and
 * port share it, and each datagram goes to the source that claims its
 * exporter address (`exporters`), else to the one source on that port that
 * claims none. Between socket and decoder sits a bounded queue: the socket
 * handler only timestamps and enqueues, and a drain loop decodes in chunks
 * and hands batches to the sink. When the sink is slow (a pending write) or
 * decoding falls behind, the queue fills and further datagrams are dropped
 * and counted; the socket itself is never blocked.
 *
 * Two ways to read the sockets: on this thread, between decode turns (the
 * queue is an array ring); or, with `socketThread` (how `serve` runs, via
 * threaded-listener.ts), on a thread of their own that copies each datagram
 * into a ring in shared memory (socket-thread.ts, datagram-ring.ts), so that
 * no decode stall keeps a socket from being read.
 *
 * Factories build; `start()` binds, `close()` stops receiving, drains what
 * was queued and flushes the last batches.
 */
import type { RemoteInfo, Socket } from 'node:dgram';
import { getPriority, setPriority } from 'node:os';
import ipaddr from 'ipaddr.js';
import { createFlowDecoder, DEFAULT_VALUE_LIMITS, type FlowDecoder } from '../decode/decoder.js';
import type { TemplateCache, TemplateLimits } from '../decode/template-cache.js';
import type { FlowSink } from '../../common/flow-sink.js';
import { join } from 'node:path';
import { FailureSignal } from './failure-signal.js';
import { SourceIngest } from '../decode/ingest.js';
import type { ExporterCounters } from '../decode/collector-counters.js';
import { TemplatePersistence } from '../decode/template-persistence.js';
import { warmUpDecoding } from '../decode/warm-up.js';
import { sendSyntheticOverLoopback, WARM_UP_BUDGET_MS, WARM_UP_ROUNDS } from './loopback-warm-up.js';
import { bindFailureMessage, ListenerBindError, ListenerConfigError } from './listener-errors.js';
import { LogThrottle } from '../../common/log-throttle.js';
import { bindFlowSocket } from './udp-socket.js';
import { createDatagramRing, DatagramRingReader } from './datagram-ring.js';
import {
  SocketThreadBindError,
  SocketThreadCounters,
  SocketThreadHandle,
  WARM_UP_SOURCE,
  type SocketReader,
  type SocketThreadInput,
} from './socket-thread-handle.js';
import { currentThreadId } from './thread-id.js';
import { dropsOf, readUdpDrops } from './kernel-drops.js';
import type { Log } from '../../common/log.js';

/** A flow source's settings, as `flowSources.<name>` in the configuration holds them. */
export interface FlowSourceConfig {
  /** HOST:PORT or [V6]:PORT; port 0 picks an ephemeral port (tests). */
  listen: string;
  /** Exporter addresses this source claims on a shared port. */
  exporters?: readonly string[];
  /** SO_RCVBUF to ask for, bytes (default 8 MiB). */
  receiveBuffer?: number;
  /** Exporter address → sampling interval override. */
  sampling?: Readonly<Record<string, number>>;
  /** A template not re-announced for this long is forgotten (0 = never); default the listener's `templateTtlMs`. */
  templateTtlSec?: number;
  /** Data sets that came before their template are held this long at most (default 60). */
  pendingMaxAgeSec?: number;
  /** Data sets held at most while waiting for their template (default 1024). */
  pendingMaxSets?: number;
  /** Bytes of held data sets at most (default 8 MiB). */
  pendingMaxBytes?: number;
  /** Held data sets at most per exporter address (default 256). */
  pendingMaxSetsPerExporter?: number;
  /** Bounds of the template store (unset ones take DEFAULT_TEMPLATE_LIMITS). */
  templateLimits?: Partial<TemplateLimits>;
  /** Flow times before this ISO 8601 instant are implausible (default DEFAULT_VALUE_LIMITS). */
  minFlowTime?: string;
  /** Flow times more than this many seconds after receipt are implausible. */
  maxFutureSec?: number;
  /** Sampling intervals from the wire above this are refused. */
  maxSamplingInterval?: number;
}

/** Tuning with defaults; the flow-source settings themselves come from the config. */
export interface FlowListenerOptions {
  /** Datagrams the queue holds at most (per socket). */
  queueDatagrams: number;
  /** Payload bytes the queue holds at most (per socket). */
  queueBytes: number;
  /** Rows per batch handed to the sink. */
  batchRows: number;
  /** Datagrams decoded before the drain yields to socket reads. */
  drainChunk: number;
  /**
   * Longest a drain turn decodes before it yields to socket reads, ms. The
   * event loop takes at most 32 datagrams off a socket per turn: while
   * decoding is slow (code not yet optimised after start, a burst of new
   * templates) a turn that decoded more than that would leave the backlog in
   * the kernel buffer, which drops when full; bounded by time, the backlog
   * moves into the queue (64 Ki datagrams) and is decoded once decoding is fast.
   */
  drainSliceMs: number;
  /**
   * Datagrams waiting in the queue beyond which decoding is behind: a drain
   * turn then lasts about `backlogSliceMs` (until the queue is half full), so that while decoding is slow
   * (the first few hundred ms after a start, before V8 has optimised the
   * code for real traffic) the thread reads the socket first and the backlog
   * waits in the queue, not in the kernel buffer. Above one event-loop turn
   * of reads (32), so at a steady rate turns stay `drainSliceMs` long.
   */
  backlogDatagrams: number;
  /**
   * Drain turn while the queue holds more than `backlogDatagrams`, ms: the
   * turn ends at the first clock check (every 8 datagrams) past it.
   */
  backlogSliceMs: number;
  /**
   * At start, decode synthetic datagrams (warm-up.ts), then receive them over loopback on a
   * throwaway listener (warmUpOverLoopback), so the receive and decode path is optimised
   * before the first real datagram.
   */
  warmUp: boolean;
  /**
   * Read the sockets on a thread of their own (socket-thread.ts) that only
   * copies each datagram into a shared ring (datagram-ring.ts, `queueBytes`
   * and `queueDatagrams` large), and decode here: a decode stall then never
   * keeps a socket from being read. Without it the sockets are read on this
   * thread, between decode turns (`drainSliceMs`, `backlogSliceMs`). With it,
   * received times are that thread's wall clock, not the injected `now`.
   */
  socketThread: boolean;
  /**
   * With `socketThread`: read the sockets in recvmmsg batches through the
   * native addon (batch-receive.ts) where it is built, which costs a
   * fraction of Node dgram's CPU per datagram; false, or no addon, reads
   * them through dgram.
   */
  batchReceive: boolean;
  /** First pause before a dead socket thread is started again, ms; it doubles with each restart in a row, up to 128 times. */
  restartDelayMs: number;
  /** How often template and held-data expiry runs. */
  expireEveryMs: number;
  /** Least time between two log lines about the same problem. */
  logEveryMs: number;
  /** A partial batch waits at most this long for more rows before it goes to the sink. */
  flushDelayMs: number;
  /** Where each source's templates are kept across restarts (`<dir>/<source>.msgpack`); none when absent. */
  templateDir?: string;
  /** How often the templates are saved (and always at close). */
  templateSaveEveryMs: number;
  /**
   * A template added, changed or withdrawn is saved at most this long after
   * the change (one save covers every change within it), so a crash soon
   * after an exporter's announcement does not lose it.
   */
  templateSaveDelayMs: number;
  /** Templates not re-announced for this long are forgotten. */
  templateTtlMs: number;
  /**
   * Test hook: `expire:N` or `flush:N` makes the first N template-expiry runs
   * or batch hand-overs to the sink throw, to prove ingest outlives them;
   * `crash` makes the threaded listeners' worker die right after it started;
   * `socket-crash:N` makes the first socket thread die once it has taken N datagrams.
   */
  faultInjection?: string;
}

/** Defaults: 128 Ki datagrams / 128 MiB queued (≈ 1 s of 1.4 KB datagrams at 90 000/s), 8192-row batches (or 100 ms), 256 datagrams or 0.3 ms per drain turn (0.05 ms behind 96 queued). */
export const DEFAULT_LISTENER_OPTIONS: Readonly<FlowListenerOptions> = Object.freeze({
  queueDatagrams: 131_072,
  queueBytes: 128 * 1024 * 1024,
  batchRows: 8192,
  drainChunk: 256,
  drainSliceMs: 0.3,
  backlogDatagrams: 96,
  backlogSliceMs: 0.05,
  warmUp: false,
  socketThread: false,
  batchReceive: true,
  restartDelayMs: 250,
  expireEveryMs: 10_000,
  logEveryMs: 60_000,
  flushDelayMs: 100,
  templateSaveEveryMs: 60_000,
  templateSaveDelayMs: 500,
  templateTtlMs: 3_600_000,
});

/** What the listeners need from outside. */
export interface FlowListenerDeps {
  /** Where batches go (the capture writer). */
  sink: FlowSink;
  logger?: Log;
  now?: () => number;
  /**
   * Builds a source's decoder; default `createFlowDecoder` with the source's
   * sampling overrides and, with `templateDir`, the templates saved there.
   */
  createDecoder?: (source: string, config: FlowSourceConfig) => FlowDecoder;
}

/** Counters of one flow source. */
export interface SourceStats {
  source: string;
  /** Address and port the source's socket is bound to (after start). */
  listen: string;
  /** Datagrams taken from the socket for this source. */
  received: number;
  /** Datagrams dropped because the queue was full. */
  queueDrops: number;
  /** Batches the sink failed to take, and their rows. */
  sinkErrors: number;
  sinkLostFlows: number;
  /** Datagrams the decoder threw on (a bug): dropped, ingest goes on. */
  decoderErrors: number;
  /** Failures of the ingest's own steps (flush, template expiry or save) that were counted and survived. */
  ingestErrors: number;
  /** Decoder counters: the sum and per exporter address. */
  total: ExporterCounters;
  exporters: Record<string, ExporterCounters>;
}

/** Counters of one socket. */
export interface SocketStats {
  listen: string;
  sources: string[];
  /** Receive buffer asked for, and the one the kernel set (at most net.core.rmem_max on Linux). */
  receiveBufferRequested: number;
  receiveBufferGranted: number;
  /** Datagrams the kernel dropped on this socket because its receive buffer was full (Linux; undefined elsewhere). */
  kernelDrops: number | undefined;
  /** Datagrams from an exporter that no source on this socket claims. */
  unclaimed: number;
  /** Datagrams waiting to be decoded now. */
  queueDepth: number;
  queueHighWater: number;
  /** How the socket is read: recvmmsg batches on the socket thread, or Node dgram events ('dgram' also before it is bound); 'none' while a dead socket thread waits for its restart. */
  reader: SocketReader | 'none';
  /** Times the socket thread died and was started again (its sockets unread in between). */
  readerRestarts: number;
}

/** The running (or ready) listeners of all flow sources. */
export interface FlowListeners {
  /** Binds every socket; rejects (with nothing left bound) when one cannot be bound. */
  start(): Promise<void>;
  /** Stops receiving, decodes what is queued, flushes the last batches. */
  close(): Promise<void>;
  /** Bound address of each source, e.g. `{ netflow: { address: '127.0.0.1', port: 40123 } }`. */
  addresses(): Record<string, { address: string; port: number }>;
  /** Counters of every source. */
  sourceStats(): SourceStats[];
  /** Counters of every socket. */
  socketStats(): SocketStats[];
  /** Resolves when every queue is empty and no sink write is pending (tests, import). */
  idle(): Promise<void>;
  /** Id of the thread that reads the sockets (Linux, once started), else undefined. */
  threadId(): number | undefined;
  /**
   * Calls `fn` (once, also if it happened before the call) when receiving
   * stops for good while running: a socket thread that died and could not
   * be started again.
   */
  onFailure(fn: (err: Error) => void): void;
}

interface SourceState {
  name: string;
  config: FlowSourceConfig;
  ingest: SourceIngest;
  /** Saves the source's templates (no-op without a template dir). */
  save: (all?: boolean) => void;
  /** True when templates changed since the last save (always false without a template dir). */
  changed: () => boolean;
  received: number;
  queueDrops: number;
  sinkErrors: number;
  sinkLostFlows: number;
  /** Failed template expiry runs and saves, each counted and survived. */
  ingestErrors: number;
  /** When (performance.now(), like the flush timer) the batch being filled got its first row; 0 when empty. */
  firstRowAt: number;
}

/** Restart attempts of a dead socket thread that may fail in a row before the listeners give up (onFailure). */
const MAX_FAILED_RESTARTS = 5;

/** A thread's nice value, or undefined when it cannot be read. */
function niceOf(tid: number): number | undefined {
  try {
    return getPriority(tid);
  } catch {
    return undefined;
  }
}

/** Parses `HOST:PORT` / `[V6]:PORT` into host, port and socket type. */
export function parseListen(listen: string): { host: string; port: number; type: 'udp4' | 'udp6' } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(listen) ?? /^([^:]+):(\d+)$/.exec(listen);
  if (!m) throw new ListenerConfigError(`listen address must be HOST:PORT or [V6]:PORT, got '${listen}'`, listen);
  const port = Number(m[2]);
  if (port > 65535) throw new ListenerConfigError(`port out of range in '${listen}'`, listen);
  const host = m[1]!;
  return { host, port, type: host.includes(':') ? 'udp6' : 'udp4' };
}

function normaliseAddress(text: string, listen: string): string {
  if (!ipaddr.isValid(text)) throw new ListenerConfigError(`exporter '${text}' is not an IP address`, listen);
  return ipaddr.process(text).toString();
}

/** One socket of a listener setup: which sources share it and who claims which exporter. */
export interface SocketPlan {
  listen: string;
  /** Indexes into the source list. */
  sourceIdx: number[];
  requestedBuffer: number;
  /** Exporter address (normalised; IPv4 also as IPv4-mapped) → source index. */
  claims: Map<string, number>;
  /** Source taking unclaimed exporters, or -1. */
  defaultSource: number;
}

/**
 * Groups flow sources by listen address (port 0 is never shared) and checks
 * the exporter claims; throws ListenerConfigError for a setup that cannot
 * be served. Pure: binds nothing.
 */
export function planSockets(configs: Readonly<Record<string, FlowSourceConfig>>): { names: string[]; sockets: SocketPlan[] } {
  const names = Object.keys(configs);
  if (names.length > 0xffff) throw new ListenerConfigError('too many flow sources', '');
  const byListen = new Map<string, number[]>();
  names.forEach((name, idx) => {
    const cfg = configs[name]!;
    const { host, port } = parseListen(cfg.listen);
    // Port 0 asks for an ephemeral port of its own: never shared.
    const key = port === 0 ? `${name}\u0000${cfg.listen}` : `${host.toLowerCase()}:${port}`;
    const list = byListen.get(key) ?? [];
    list.push(idx);
    byListen.set(key, list);
  });
  const sockets: SocketPlan[] = [];
  for (const idx of byListen.values()) {
    const first = configs[names[idx[0]!]!]!;
    const plan: SocketPlan = {
      listen: first.listen,
      sourceIdx: idx,
      requestedBuffer: Math.max(...idx.map((i) => configs[names[i]!]!.receiveBuffer ?? 8 * 1024 * 1024)),
      claims: new Map(),
      defaultSource: -1,
    };
    for (const i of idx) {
      const name = names[i]!;
      const cfg = configs[name]!;
      const exporters = cfg.exporters ?? [];
      if (exporters.length === 0) {
        if (plan.defaultSource >= 0) {
          throw new ListenerConfigError(
            `flow sources '${names[plan.defaultSource]}' and '${name}' share ${cfg.listen} and neither claims exporters: give one of them an exporters list`,
            cfg.listen,
          );
        }
        plan.defaultSource = i;
      }
      for (const e of exporters) {
        const addr = normaliseAddress(e, cfg.listen);
        const owner = plan.claims.get(addr);
        if (owner !== undefined && owner !== i) {
          throw new ListenerConfigError(`exporter ${addr} is claimed by both '${names[owner]}' and '${name}'`, cfg.listen);
        }
        plan.claims.set(addr, i);
        // A dual-stack socket reports IPv4 senders as IPv4-mapped IPv6.
        if (!addr.includes(':')) plan.claims.set(`::ffff:${addr}`, i);
      }
    }
    sockets.push(plan);
  }
  return { names, sockets };
}

/** A source's decoder with, when `templateDir` is set, its templates loaded from and saved to disk. */
export interface SourceDecoder {
  decoder: FlowDecoder;
  /** Saves the templates of exporters that changed, or with `all` of every one (no-op without a template dir); errors are thrown to the caller. */
  save(all?: boolean): void;
  /** True when a template was added, changed or removed since the last save (false without a template dir). */
  changed(): boolean;
}

/** Builds a source's decoder as the listeners do (sampling overrides, saved templates). */
export function openSourceDecoder(
  name: string,
  cfg: FlowSourceConfig,
  opts: Pick<FlowListenerOptions, 'templateDir' | 'templateTtlMs'>,
  now: () => number,
  logger?: Log,
): SourceDecoder {
  const ttlMs = cfg.templateTtlSec !== undefined ? cfg.templateTtlSec * 1000 : opts.templateTtlMs;
  const limits = cfg.templateLimits ?? {};
  const persistence = opts.templateDir
    ? new TemplatePersistence({
        dir: join(opts.templateDir, name),
        legacyPath: join(opts.templateDir, `${name}.msgpack`),
        now,
        ttlMs,
        limits,
      })
    : undefined;
  let templates: TemplateCache | undefined;
  if (persistence) {
    templates = persistence.load();
    if (templates.size > 0)
      logger?.info(
        { source: name, templates: templates.size, exporters: [...templates.allExporters()].length },
        'flow templates restored',
      );
    // A damaged file costs its exporter's templates until it resends them, never the start.
    for (const err of persistence.unreadable)
      logger?.warn({ source: name, err }, 'saved flow templates unreadable; that exporter starts without them');
  }
  const decoder = createFlowDecoder(
    {
      samplingOverride: { ...cfg.sampling },
      templateTtlMs: ttlMs,
      templateLimits: limits,
      ...(cfg.pendingMaxAgeSec !== undefined && { pendingMaxAgeMs: cfg.pendingMaxAgeSec * 1000 }),
      ...(cfg.pendingMaxSets !== undefined && { pendingMaxSets: cfg.pendingMaxSets }),
      ...(cfg.pendingMaxBytes !== undefined && { pendingMaxBytes: cfg.pendingMaxBytes }),
      ...(cfg.pendingMaxSetsPerExporter !== undefined && { pendingMaxSetsPerExporter: cfg.pendingMaxSetsPerExporter }),
      limits: {
        minTimeMs: cfg.minFlowTime !== undefined ? Date.parse(cfg.minFlowTime) : DEFAULT_VALUE_LIMITS.minTimeMs,
        maxFutureMs: cfg.maxFutureSec !== undefined ? cfg.maxFutureSec * 1000 : DEFAULT_VALUE_LIMITS.maxFutureMs,
        maxSamplingInterval: cfg.maxSamplingInterval ?? DEFAULT_VALUE_LIMITS.maxSamplingInterval,
      },
    },
    templates,
  );
  let savedRevision = decoder.templates.revision;
  return {
    decoder,
    save(all = false) {
      if (!persistence) return;
      const revision = decoder.templates.revision;
      persistence.save(decoder.templates, all);
      savedRevision = revision;
    },
    changed() {
      return persistence !== undefined && decoder.templates.revision !== savedRevision;
    },
  };
}

/** The `faultInjection` test hook: `fail(step)` throws for the first N calls of the named step. */
class FaultHook {
  private left: number;
  private readonly step: string | undefined;
  constructor(spec: string | undefined) {
    const m = /^(expire|flush):(\d+)$/.exec(spec ?? '');
    this.step = m?.[1];
    this.left = m ? Number(m[2]) : 0;
  }
  fail(step: 'expire' | 'flush'): void {
    if (this.step === step && this.left > 0) {
      this.left--;
      throw new Error(`injected ${step} failure`);
    }
  }
  /** `sink`, failing its first N writes when the hook says `flush:N`. */
  wrapSink(sink: FlowSink): FlowSink {
    if (this.step !== 'flush') return sink;
    return {
      write: (source, batch) => {
        this.fail('flush');
        return sink.write(source, batch);
      },
    };
  }
}

/** Datagrams waiting to be decoded: `peek()` the oldest, read its fields, then `drop()` it. */
interface QueuedDatagrams {
  readonly count: number;
  readonly highWater: number;
  peek(): number;
  payload(i: number): Buffer;
  addr(i: number): string;
  time(i: number): number;
  source(i: number): number;
  drop(): void;
}

/** Ring buffer of datagrams waiting to be decoded, filled by a socket on this thread; bounded in count and bytes. */
class DatagramQueue implements QueuedDatagrams {
  private readonly payloads: (Buffer | undefined)[];
  private readonly addrs: string[];
  private readonly times: Float64Array;
  private readonly sources: Uint16Array;
  private head = 0;
  count = 0;
  bytes = 0;
  highWater = 0;

  constructor(
    readonly capacity: number,
    readonly maxBytes: number,
  ) {
    this.payloads = new Array<Buffer | undefined>(capacity);
    this.addrs = new Array<string>(capacity).fill('');
    this.times = new Float64Array(capacity);
    this.sources = new Uint16Array(capacity);
  }

  push(payload: Buffer, addr: string, time: number, source: number): boolean {
    if (this.count >= this.capacity || this.bytes + payload.length > this.maxBytes) return false;
    const i = (this.head + this.count) % this.capacity;
    this.payloads[i] = payload;
    this.addrs[i] = addr;
    this.times[i] = time;
    this.sources[i] = source;
    this.count++;
    this.bytes += payload.length;
    if (this.count > this.highWater) this.highWater = this.count;
    return true;
  }

  /** Index of the oldest entry; read its fields, then `drop()`. */
  peek(): number {
    return this.head;
  }

  payload(i: number): Buffer {
    return this.payloads[i]!;
  }

  addr(i: number): string {
    return this.addrs[i]!;
  }

  time(i: number): number {
    return this.times[i]!;
  }

  source(i: number): number {
    return this.sources[i]!;
  }

  drop(): void {
    const i = this.head;
    this.bytes -= this.payloads[i]!.length;
    // Let the datagram and its sender's address string be collected now: held until the
    // slot came round again (64 Ki datagrams later) they outlived two scavenges, were
    // promoted, and kept the old generation busy with mark-compacts.
    this.payloads[i] = undefined;
    this.addrs[i] = '';
    this.head = (i + 1) % this.capacity;
    this.count--;
  }
}

/**
 * With a socket thread: a drain turn decodes at most this long (ms) or this
 * many datagrams before other work of the thread (sink hand-overs, messages)
 * gets a turn; no socket waits for it.
 */
const RING_TURN_MS = 2;
const RING_TURN_DATAGRAMS = 4096;
/** With a socket thread, an empty ring is polled every ms while records came within this long (ms); after that the thread sleeps until the socket thread wakes it. */
const RING_POLL_FOR_MS = 1000;

class SocketGroup {
  socket: Socket | undefined;
  readonly queue: QueuedDatagrams;
  /** The queue a socket on this thread fills (no socket thread). */
  private readonly local: DatagramQueue | undefined;
  /** The ring the socket thread fills. */
  readonly ring: DatagramRingReader | undefined;
  private polling = false;
  /** Bumped by stopTimer(), so that a wait begun before it cannot schedule a drain after it. */
  private generation = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRecordAt = -Infinity;
  claims = new Map<string, number>();
  defaultSource = -1;
  unclaimed = 0;
  granted = 0;
  reader: SocketReader | 'none' = 'dgram';
  bound: { address: string; port: number } | undefined;
  private scheduled = false;
  private waiting = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly listen: string,
    readonly sourceIdx: number[],
    readonly requestedBuffer: number,
    private readonly owner: Listeners,
    opts: FlowListenerOptions,
  ) {
    if (opts.socketThread) {
      this.ring = new DatagramRingReader(createDatagramRing(opts.queueBytes, opts.queueDatagrams));
      this.queue = this.ring;
    } else {
      this.local = new DatagramQueue(opts.queueDatagrams, opts.queueBytes);
      this.queue = this.local;
    }
  }

  onMessage(msg: Buffer, rinfo: RemoteInfo): void {
    const time = this.owner.now();
    let src = this.claims.get(rinfo.address);
    if (src === undefined) {
      if (this.defaultSource < 0) {
        this.unclaimed++;
        this.owner.rateLog(
          'warn',
          `unclaimed:${this.listen}:${rinfo.address}`,
          { listen: this.listen, exporter: rinfo.address },
          'datagram from an exporter no flow source claims; dropped',
        );
        return;
      }
      src = this.defaultSource;
    }
    const state = this.owner.sources[src]!;
    state.received++;
    if (!this.local!.push(msg, rinfo.address, time, src)) {
      state.queueDrops++;
      this.owner.rateLog(
        'warn',
        `drop:${state.name}`,
        { source: state.name, queueDrops: state.queueDrops },
        'flow queue full: datagrams dropped',
      );
      return;
    }
    this.schedule();
  }

  schedule(): void {
    if (this.scheduled || this.waiting) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase, so socket reads interleave with decoding.
    setImmediate(() => this.drain());
  }

  /**
   * With a socket thread: the drain runs again when records are in the ring,
   * polling every ms while traffic flows (a notify per datagram would cost
   * the socket thread a system call each), else woken by the socket thread.
   */
  awaitRecords(): void {
    const ring = this.ring;
    if (!ring || this.polling || this.stopped) return;
    this.polling = true;
    const generation = this.generation;
    const go = (): void => {
      if (generation !== this.generation) return;
      this.polling = false;
      this.pollTimer = undefined;
      if (!this.stopped) this.schedule();
    };
    if (performance.now() - this.lastRecordAt < RING_POLL_FOR_MS) this.pollTimer = setTimeout(go, 1);
    else void ring.waitForRecords(RING_POLL_FOR_MS).then(go);
  }

  /** Starts watching the ring (again, after a failed start). */
  watch(): void {
    this.stopped = false;
    this.awaitRecords();
  }

  private drain(): void {
    this.scheduled = false;
    const q = this.queue;
    const ring = this.ring !== undefined;
    const chunk = ring ? RING_TURN_DATAGRAMS : this.owner.opts.drainChunk;
    // Behind (a backlog in the queue), decode in short turns: the socket is read first, as
    // its kernel buffer overflows and the queue holds 64 Ki datagrams, and decoding gets the rest.
    // Not once the queue is half full: reading datagrams only to drop them at the queue would
    // take the CPU decoding needs (receive livelock); past that the kernel drops, at no cost.
    const o = this.owner.opts;
    const behind = !ring && q.count > o.backlogDatagrams && q.count * 2 < o.queueDatagrams;
    const slice = ring ? RING_TURN_MS : behind ? o.backlogSliceMs : o.drainSliceMs;
    const started = performance.now();
    if (ring && q.count > 0) this.lastRecordAt = started;
    for (let n = 0; n < chunk && q.count > 0; n++) {
      // The clock is read every 8 datagrams: a turn ends soon after its time is up.
      if ((n & 7) === 7 && performance.now() - started > slice) break;
      const i = q.peek();
      const src = q.source(i);
      const state = src === WARM_UP_SOURCE ? this.owner.warmState! : this.owner.sources[src]!;
      const ingest = state.ingest;
      const empty = ingest.batch.length === 0;
      const outcome = ingest.decode(q.payload(i), ingest.exporter(q.addr(i)), q.time(i));
      if (empty && ingest.batch.length > 0) state.firstRowAt = performance.now();
      if (outcome.status === 'decoder-error') {
        this.owner.rateLog(
          'error',
          `decoder-error:${state.name}`,
          {
            source: state.name,
            exporter: q.addr(i),
            version: outcome.version,
            err: outcome.error,
            decoderErrors: ingest.decoderErrors,
          },
          'flow decoder failed on a datagram; dropped, ingest goes on',
        );
      } else if (outcome.readPastEnd) {
        this.owner.rateLog(
          'error',
          `read-past-end:${state.name}`,
          { source: state.name, exporter: q.addr(i), version: outcome.version },
          'flow decoder read past the end of a datagram (a decoder bug); dropped as malformed',
        );
      } else if (outcome.status !== 'ok') {
        this.owner.rateLog(
          'warn',
          `${outcome.status}:${state.name}:${q.addr(i)}`,
          { source: state.name, exporter: q.addr(i), status: outcome.status, version: outcome.version },
          'datagram dropped by the decoder',
        );
      }
      q.drop();
      if (ingest.full && this.flush([state])) return;
    }
    this.owner.maybeExpire();
    this.owner.saveChangedSoon();
    const states = this.sourceIdx.map((s) => this.owner.sources[s]!);
    // A partial batch goes out once its first row has waited the flush delay, or when someone
    // waits for idle. Its age is per source, so at high rates only full batches go (each a
    // capture block the writer takes as it is), and a busy source never holds back a quiet
    // one's rows; handing over every few datagrams would make the sink (or the thread
    // boundary) pay per-batch costs thousands of times a second.
    const delay = this.owner.opts.flushDelayMs;
    const now = performance.now();
    const forced = this.idleWaiters.length > 0 || delay <= 0;
    const due = states.filter((s) => s.ingest.batch.length > 0 && (forced || now - s.firstRowAt >= delay));
    if (due.length > 0 && this.flush(due)) return;
    let oldest = Infinity;
    for (const s of states) if (s.ingest.batch.length > 0 && s.firstRowAt < oldest) oldest = s.firstRowAt;
    const hasRows = oldest < Infinity;
    if (hasRows && !this.flushTimer) {
      this.flushTimer = setTimeout(
        () => {
          this.flushTimer = undefined;
          this.schedule();
        },
        Math.max(1, oldest + delay - now),
      );
    }
    if (q.count > 0) {
      this.schedule();
      return;
    }
    this.awaitRecords();
    if (!hasRows || !this.flushTimer) this.notifyIdle();
  }

  /** Flushes the given sources; true when a sink write is pending (the drain resumes after it). */
  private flush(states: SourceState[]): boolean {
    let pending: Promise<void> | undefined;
    for (const state of states) {
      const rows = state.ingest.batch.length;
      state.firstRowAt = 0;
      const fail = (err: unknown): void => {
        state.sinkErrors++;
        state.sinkLostFlows += rows;
        this.owner.rateLog(
          'error',
          `sink:${state.name}`,
          { source: state.name, err, lostFlows: rows },
          'flow sink failed; batch lost',
        );
      };
      const run = (): void | Promise<void> => {
        try {
          const r = state.ingest.flush();
          return r?.catch(fail);
        } catch (err) {
          fail(err);
        }
      };
      if (pending) pending = pending.then(run);
      else {
        const r = run();
        if (r) pending = r;
      }
    }
    if (!pending) return false;
    this.waiting = true;
    void pending.then(() => {
      this.waiting = false;
      if (this.queue.count > 0) this.schedule();
      else this.drain();
    });
    return true;
  }

  private notifyIdle(): void {
    if (this.queue.count > 0 || this.waiting || this.scheduled) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  idle(): Promise<void> {
    const states = this.sourceIdx.map((s) => this.owner.sources[s]!);
    if (this.queue.count === 0 && !this.waiting && !this.scheduled && !states.some((s) => s.ingest.batch.length > 0)) {
      return Promise.resolve();
    }
    const p = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    // A drain run sees the waiter and flushes what is held back.
    if (!this.waiting) this.schedule();
    return p;
  }

  /** Stops the delayed-flush timer (close). */
  stopTimer(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    // The ring is no longer watched.
    this.stopped = true;
    this.generation++;
    this.polling = false;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.ring?.wake();
  }
}

class Listeners implements FlowListeners {
  readonly sources: SourceState[] = [];
  readonly groups: SocketGroup[] = [];
  /** With a socket thread and warm-up: decodes the warm-up's datagrams and throws them away. */
  readonly warmState: SourceState | undefined;
  /** The socket thread's counters (received, queue drops, unclaimed), when there is one. */
  private readonly counters: SocketThreadCounters | undefined;
  private socketThread: SocketThreadHandle | undefined;
  /** What the socket thread was first started with (a restart binds the same addresses, without warm-up). */
  private socketThreadInput: SocketThreadInput | undefined;
  /** Socket threads that died and were started again; restarts since the last one that lived a minute. */
  private socketThreadRestarts = 0;
  private recentRestarts = 0;
  private socketThreadSince = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private restarting: Promise<void> | undefined;
  /** Nice value of the first socket thread (the service lowers every other thread): a restarted one inherits this thread's. */
  private socketThreadNice: number | undefined;
  /** Restart attempts that failed in a row (bind refused, thread failed to start). */
  private failedRestarts = 0;
  private readonly failure = new FailureSignal();
  readonly now: () => number;
  private readonly logger: Log | undefined;
  private readonly logThrottle: LogThrottle;
  private lastExpire: number;
  private lastSave: number;
  private timer: NodeJS.Timeout | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  private started = false;
  /** The running or finished start, for a start() or close() that comes meanwhile. */
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly fault: FaultHook;

  constructor(
    configs: Readonly<Record<string, FlowSourceConfig>>,
    deps: FlowListenerDeps,
    readonly opts: FlowListenerOptions,
  ) {
    this.now = deps.now ?? Date.now;
    this.logger = deps.logger;
    this.lastExpire = this.now();
    this.lastSave = this.now();
    this.fault = new FaultHook(opts.faultInjection);
    this.logThrottle = new LogThrottle(opts.logEveryMs, this.now);
    const sink = this.fault.wrapSink(deps.sink);
    const plan = planSockets(configs);
    const state = (
      name: string,
      config: FlowSourceConfig,
      ingest: SourceIngest,
      save = (_all?: boolean): void => {},
      changed = (): boolean => false,
    ): SourceState => ({
      name,
      config,
      save,
      changed,
      ingest,
      received: 0,
      queueDrops: 0,
      sinkErrors: 0,
      sinkLostFlows: 0,
      ingestErrors: 0,
      firstRowAt: 0,
    });
    plan.names.forEach((name) => {
      const cfg = configs[name]!;
      let decoder: FlowDecoder;
      let save: (all?: boolean) => void = () => {};
      let changed: () => boolean = () => false;
      if (deps.createDecoder) decoder = deps.createDecoder(name, cfg);
      else ({ decoder, save, changed } = openSourceDecoder(name, cfg, opts, this.now, this.logger));
      this.sources.push(
        state(name, cfg, new SourceIngest({ source: name, sink, decoder, batchRows: opts.batchRows }), save, changed),
      );
    });
    if (opts.socketThread) {
      this.counters = SocketThreadCounters.allocate(this.sources.length, plan.sockets.length);
      if (opts.warmUp)
        this.warmState = state(
          'warm-up',
          { listen: '127.0.0.1:0' },
          new SourceIngest({ source: 'warm-up', sink: { write() {} }, batchRows: opts.batchRows }),
        );
    }
    for (const p of plan.sockets) {
      const group = new SocketGroup(p.listen, p.sourceIdx, p.requestedBuffer, this, opts);
      group.claims = p.claims;
      group.defaultSource = p.defaultSource;
      this.groups.push(group);
    }
  }

  rateLog(level: 'warn' | 'error', key: string, obj: object, msg: string): void {
    if (!this.logger || !this.logThrottle.allow(key)) return;
    this.logger[level](obj, msg);
  }

  maybeExpire(): void {
    const t = this.now();
    if (t - this.lastSave >= this.opts.templateSaveEveryMs) {
      this.lastSave = t;
      this.saveTemplates();
    }
    if (t - this.lastExpire < this.opts.expireEveryMs) return;
    this.lastExpire = t;
    for (const s of this.sources) {
      try {
        this.fault.fail('expire');
        s.ingest.decoder.expire(t);
      } catch (err) {
        s.ingestErrors++;
        this.rateLog(
          'error',
          `expire:${s.name}`,
          { source: s.name, step: 'expire', err, ingestErrors: s.ingestErrors },
          'flow template expiry failed; counted, ingest goes on',
        );
      }
    }
  }

  /** Schedules a save of the sources whose templates changed, unless one is already due. */
  saveChangedSoon(): void {
    if (this.saveTimer || !this.started) return;
    if (!this.sources.some((s) => s.changed())) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.saveTemplates(true);
    }, this.opts.templateSaveDelayMs);
  }

  /** Saves every source's templates, or with `onlyChanged` those that changed (errors are logged; the next save retries). */
  saveTemplates(onlyChanged = false): void {
    for (const s of this.sources) {
      if (onlyChanged && !s.changed()) continue;
      try {
        // The periodic and the final save write every exporter, so re-announcement times are kept too.
        s.save(!onlyChanged);
      } catch (err) {
        s.ingestErrors++;
        this.rateLog(
          'error',
          `save:${s.name}`,
          { source: s.name, step: 'save', err, ingestErrors: s.ingestErrors },
          'flow templates could not be saved',
        );
      }
    }
  }

  start(): Promise<void> {
    if (this.started) return this.starting ?? Promise.resolve();
    this.started = true;
    this.starting = this.bindAll();
    return this.starting;
  }

  private async bindAll(): Promise<void> {
    try {
      // The socket thread is started first: it loads its modules (a few hundred ms) on the other
      // core while this thread warms its decoders up, and warms up the receive path itself
      // through the rings, which this thread reads once its own warm-up is done.
      const socketThread = this.opts.socketThread ? this.startSocketThread() : undefined;
      if (this.opts.warmUp) {
        const t0 = performance.now();
        warmUpDecoding(this.now());
        const w = socketThread ? undefined : await warmUpOverLoopback(this.opts, this.now);
        this.logger?.info({ ...w, ms: Math.round(performance.now() - t0) }, 'flow decode path warmed up');
      }
      if (socketThread) await socketThread;
      else for (const g of this.groups) await this.bind(g);
    } catch (err) {
      await this.closeSockets();
      // Nothing more comes to decode: the rings are no longer watched.
      for (const g of this.groups) g.stopTimer();
      this.started = false;
      this.starting = undefined;
      throw err;
    }
    this.timer = setInterval(() => {
      this.maybeExpire();
      // Templates expired here are saved as removed soon, as a withdrawal is.
      this.saveChangedSoon();
    }, this.opts.expireEveryMs);
    this.timer.unref();
  }

  /** Starts the socket thread on the rings (it warms up, then binds every socket) and decodes from them. */
  private async startSocketThread(): Promise<void> {
    const t0 = performance.now();
    // Decoding starts first: the warm-up's datagrams come through the first ring.
    for (const g of this.groups) g.watch();
    // The socket thread binds once the warm-up it sent through the first ring is decoded.
    const warmed = async (w: { sent: number; received: number }): Promise<void> => {
      await this.idle();
      this.warmState?.ingest.batch.clear();
      // The warm-up is no backlog of real traffic.
      for (const g of this.groups) g.ring!.resetHighWater();
      const flows = this.warmState?.ingest.decoder.counters.snapshot().total.flows ?? 0;
      this.logger?.info({ ...w, flows, ms: Math.round(performance.now() - t0) }, 'flow socket thread warmed up');
    };
    const input: SocketThreadInput = {
      sockets: this.groups.map((g) => ({
        listen: g.listen,
        ...parseListen(g.listen),
        requestedBuffer: g.requestedBuffer,
        claims: [...g.claims],
        defaultSource: g.defaultSource,
        ring: g.ring!.memory,
      })),
      sourceNames: this.sources.map((s) => s.name),
      counters: this.counters!.buffer,
      warmUp: this.opts.warmUp,
      warmUpBudgetMs: WARM_UP_BUDGET_MS,
      logEveryMs: this.opts.logEveryMs,
      batchReceive: this.opts.batchReceive,
      faultInjection: this.opts.faultInjection?.startsWith('socket-crash:')
        ? `crash-after:${this.opts.faultInjection.slice('socket-crash:'.length)}`
        : undefined,
    };
    let handle: SocketThreadHandle;
    try {
      handle = await SocketThreadHandle.start(input, this.logger, warmed);
    } catch (err) {
      if (err instanceof SocketThreadBindError) throw new ListenerBindError(err.message, err.listen, { cause: err });
      throw err;
    }
    this.adoptSocketThread(handle);
    this.socketThreadNice = handle.tid === undefined ? undefined : niceOf(handle.tid);
    // A restart binds the addresses this start got (a port 0 became a real one), once, without warm-up or fault.
    this.socketThreadInput = {
      ...input,
      sockets: input.sockets.map((s, i) => {
        const b = handle.sockets[i]!;
        return { ...s, listen: formatHostPort(b.address, b.port), host: b.address, port: b.port };
      }),
      warmUp: false,
      faultInjection: undefined,
    };
    handle.sockets.forEach((_b, i) => this.boundLog(this.groups[i]!));
  }

  private adoptSocketThread(handle: SocketThreadHandle): void {
    this.socketThread = handle;
    this.socketThreadSince = performance.now();
    handle.sockets.forEach((b, i) => {
      const g = this.groups[i]!;
      g.bound = { address: b.address, port: b.port };
      g.granted = setBufferSize(b.granted);
      g.reader = b.reader;
    });
    handle.onDeath(() => this.socketThreadDied(handle));
  }

  /**
   * The socket thread died (a bug: an uncaught error). Its sockets closed with
   * it; the rings and counters live on here. It is started again on the same
   * addresses after a pause that doubles with each restart (`restartDelayMs`,
   * 250 ms, up to 128 times that, 32 s; back to the first once a thread has
   * lived a minute), so a thread that dies at once does not spin. After
   * MAX_FAILED_RESTARTS failed attempts in a row it gives up: onFailure.
   */
  private socketThreadDied(handle: SocketThreadHandle): void {
    if (this.closing || this.socketThread !== handle) return;
    this.socketThread = undefined;
    for (const g of this.groups) g.reader = 'none';
    if (performance.now() - this.socketThreadSince > 60_000) this.recentRestarts = 0;
    this.logger?.error(
      { restarts: this.socketThreadRestarts },
      'flow socket thread died; its sockets are read again once it is restarted',
    );
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = this.opts.restartDelayMs * 2 ** Math.min(this.recentRestarts, 7);
    this.recentRestarts++;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restarting = this.restartSocketThread().finally(() => (this.restarting = undefined));
    }, delay);
  }

  private async restartSocketThread(): Promise<void> {
    this.logger?.info({ attempt: this.failedRestarts + 1 }, 'flow socket thread restarting');
    let handle: SocketThreadHandle;
    try {
      handle = await SocketThreadHandle.start(this.socketThreadInput!, this.logger);
    } catch (err) {
      if (this.closing) return;
      this.failedRestarts++;
      if (this.failedRestarts >= MAX_FAILED_RESTARTS) {
        // Port taken meanwhile, or a thread that cannot start: no flows come in until someone acts.
        this.logger?.error(
          { err, attempts: this.failedRestarts },
          'flow socket thread could not be restarted; its sockets stay unread',
        );
        this.failure.fail(
          new Error(`flow socket thread could not be restarted (${this.failedRestarts} attempts): ${(err as Error).message}`, {
            cause: err,
          }),
        );
        return;
      }
      this.logger?.error({ err, attempt: this.failedRestarts }, 'flow socket thread could not be restarted; trying again');
      this.scheduleRestart();
      return;
    }
    if (this.closing) {
      await handle.close();
      return;
    }
    this.failedRestarts = 0;
    this.socketThreadRestarts++;
    this.adoptSocketThread(handle);
    let nice = handle.tid === undefined ? undefined : niceOf(handle.tid);
    if (handle.tid !== undefined && this.socketThreadNice !== undefined && nice !== this.socketThreadNice) {
      try {
        setPriority(handle.tid, this.socketThreadNice);
        nice = this.socketThreadNice;
      } catch (err) {
        // A thread started by this one inherits its nice value; raising it back takes CAP_SYS_NICE (or root).
        this.logger?.warn(
          { err, nice, wanted: this.socketThreadNice },
          'restarted flow socket thread keeps the nice value of the thread that started it',
        );
      }
    }
    this.logger?.info(
      { restarts: this.socketThreadRestarts, nice, sockets: handle.sockets.map((b) => formatHostPort(b.address, b.port)) },
      'flow socket thread restarted',
    );
  }

  onFailure(fn: (err: Error) => void): void {
    this.failure.subscribe(fn);
  }

  private boundLog(g: SocketGroup): void {
    const names = g.sourceIdx.map((i) => this.sources[i]!.name);
    const granted = g.granted;
    if (granted < g.requestedBuffer) {
      this.logger?.warn(
        { listen: g.listen, requested: g.requestedBuffer, granted, fix: `sysctl -w net.core.rmem_max=${g.requestedBuffer}` },
        `kernel granted a smaller UDP receive buffer than configured (${granted} of ${g.requestedBuffer} bytes): raise net.core.rmem_max to ${g.requestedBuffer}`,
      );
    }
    this.logger?.info(
      { sources: names, address: g.bound!.address, port: g.bound!.port, receiveBuffer: g.granted, reader: g.reader },
      'flow listener started',
    );
  }

  private bind(g: SocketGroup): Promise<void> {
    const { host, port, type } = parseListen(g.listen);
    return bindFlowSocket(
      { type, host, port, recvBufferSize: g.requestedBuffer },
      (msg, rinfo) => g.onMessage(msg, rinfo),
      (err) => this.logger?.error({ err, listen: g.listen }, 'flow socket error'),
    ).then(
      (socket) => {
        g.socket = socket;
        g.bound = socket.address();
        g.granted = setBufferSize(socket.getRecvBufferSize());
        this.boundLog(g);
      },
      (err: Error) => {
        const names = [...new Set([g.defaultSource, ...g.claims.values()])]
          .filter((n) => n >= 0)
          .map((n) => this.sources[n]!.name);
        throw new ListenerBindError(bindFailureMessage(g.listen, names, err), g.listen, { cause: err });
      },
    );
  }

  private async closeSockets(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.restarting;
    const thread = this.socketThread;
    this.socketThread = undefined;
    await thread?.close();
    await Promise.all(
      this.groups.map(
        (g) =>
          new Promise<void>((resolve) => {
            const s = g.socket;
            g.socket = undefined;
            if (!s) return resolve();
            s.close(() => resolve());
          }),
      ),
    );
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      // A close during start (the warm-up takes up to a second) waits for the sockets it binds.
      await this.starting?.catch(() => undefined);
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      await this.closeSockets();
      if (this.saveTimer) clearTimeout(this.saveTimer);
      this.saveTimer = undefined;
      await this.idle();
      for (const g of this.groups) g.stopTimer();
      this.saveTemplates();
      this.started = false;
    })();
    return this.closing;
  }

  async idle(): Promise<void> {
    await Promise.all(this.groups.map((g) => g.idle()));
  }

  addresses(): Record<string, { address: string; port: number }> {
    const out: Record<string, { address: string; port: number }> = {};
    for (const g of this.groups) {
      if (!g.bound) continue;
      for (const i of g.sourceIdx) out[this.sources[i]!.name] = { address: g.bound.address, port: g.bound.port };
    }
    return out;
  }

  threadId(): number | undefined {
    return this.opts.socketThread ? this.socketThread?.tid : currentThreadId();
  }

  sourceStats(): SourceStats[] {
    const bound = this.addresses();
    const c = this.counters;
    return this.sources.map((s, i) => {
      const snap = s.ingest.decoder.counters.snapshot();
      const b = bound[s.name];
      return {
        source: s.name,
        listen: b ? formatHostPort(b.address, b.port) : s.config.listen,
        received: c ? c.received(i) : s.received,
        queueDrops: c ? c.queueDrops(i) : s.queueDrops,
        sinkErrors: s.sinkErrors,
        sinkLostFlows: s.sinkLostFlows,
        decoderErrors: s.ingest.decoderErrors,
        ingestErrors: s.ingestErrors,
        total: snap.total,
        exporters: snap.exporters,
      };
    });
  }

  socketStats(): SocketStats[] {
    const drops = readUdpDrops();
    return this.groups.map((g, i) => ({
      listen: g.bound ? formatHostPort(g.bound.address, g.bound.port) : g.listen,
      sources: g.sourceIdx.map((i) => this.sources[i]!.name),
      receiveBufferRequested: g.requestedBuffer,
      receiveBufferGranted: g.granted,
      kernelDrops: g.bound ? dropsOf(drops, g.bound.address, g.bound.port) : undefined,
      unclaimed: this.counters ? this.counters.unclaimed(i) : g.unclaimed,
      queueDepth: g.queue.count,
      queueHighWater: g.queue.highWater,
      reader: g.reader,
      readerRestarts: this.socketThreadRestarts,
    }));
  }
}

/**
 * The receive buffer the kernel set, from what SO_RCVBUF reads back: Linux
 * reports twice the size it set (the other half is for its bookkeeping).
 */
function setBufferSize(reported: number): number {
  return process.platform === 'linux' ? reported / 2 : reported;
}

function formatHostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Warm-up through the whole receive path: a throwaway listener of the same
 * classes, on 127.0.0.1 and an ephemeral port, receives the synthetic v5, v9
 * and IPFIX datagrams (synthetic.ts) sent over loopback, into a sink that
 * keeps nothing. Decoding alone (warmUpDecoding) left Node's socket
 * callbacks, the queue and the drain loop cold, and V8 threw away part of
 * the optimised decode code at the first datagrams from a socket (buffers
 * of another shape than the warm-up's): in a profile of the first 200 ms at
 * 90 000 datagrams/s the drain loop alone took 30 ms, against 1 ms later.
 * Best effort: bounded by `budgetMs`; a loopback that drops or refuses only
 * makes it shorter. Returns what the throwaway listener saw.
 */
export async function warmUpOverLoopback(
  opts: FlowListenerOptions,
  now: () => number,
  budgetMs = WARM_UP_BUDGET_MS,
  rounds = WARM_UP_ROUNDS,
): Promise<{ port: number; sent: number; received: number; flows: number }> {
  const warm = new Listeners(
    { 'warm-up': { listen: '127.0.0.1:0' } },
    { sink: { write() {} }, now },
    { ...opts, warmUp: false, templateDir: undefined, faultInjection: undefined },
  );
  const deadline = performance.now() + budgetMs;
  let sent = 0;
  let port = 0;
  try {
    await warm.start();
    port = warm.addresses()['warm-up']!.port;
    sent = await sendSyntheticOverLoopback(port, () => warm.sources[0]!.received, now(), rounds, deadline);
    await warm.idle();
  } catch {
    // A warm-up that cannot run (no loopback) is skipped.
  } finally {
    await warm.close();
  }
  const st = warm.sourceStats()[0]!;
  return { port, sent, received: st.received, flows: st.total.flows };
}

/** Builds (without binding) the listeners of every flow source; throws ListenerConfigError on a conflicting setup. */
export function createFlowListeners(
  sources: Readonly<Record<string, FlowSourceConfig>>,
  deps: FlowListenerDeps,
  options: Partial<FlowListenerOptions> = {},
): FlowListeners {
  return new Listeners(sources, deps, { ...DEFAULT_LISTENER_OPTIONS, ...options });
}
