/**
 * The drain loop of one socket: the socket handler (or, with a socket
 * thread, the ring) queues datagrams, and a drain turn decodes them in
 * chunks bounded in count and time, so socket reads interleave with
 * decoding, and hands full (or long-waiting) batches to the sink. A pending
 * sink write pauses the drain; the queue then fills and drops, counted.
 */
import type { RemoteInfo, Socket } from 'node:dgram';
import { createDatagramRing, DatagramRingReader } from './datagram-ring.js';
import { DatagramQueue, type QueuedDatagrams } from './datagram-queue.js';
import type { FlowListenerOptions } from './listener-options.js';
import { WARM_UP_SOURCE, type SocketReader } from './socket-thread-handle.js';
import type { SourceState } from './source-state.js';

/** What a drain loop needs of the listeners it belongs to. */
export interface DrainOwner {
  readonly sources: readonly SourceState[];
  /** With a socket thread and warm-up: decodes the warm-up's datagrams and throws them away. */
  readonly warmState: SourceState | undefined;
  readonly opts: FlowListenerOptions;
  now(): number;
  /** Logs at most once per `logEveryMs` for the same `key`. */
  rateLog(level: 'warn' | 'error', key: string, obj: object, msg: string): void;
  /** Runs template expiry and the periodic save when due. */
  maybeExpire(): void;
  /** Schedules a save of the sources whose templates changed. */
  saveChangedSoon(): void;
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

/** One socket (or, with a socket thread, its ring) and the drain loop that decodes what it queued. */
export class SocketGroup {
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
    private readonly owner: DrainOwner,
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
