/**
 * The decode thread's handle on the flow socket thread (socket-thread.ts):
 * starts it, waits until its sockets are bound (or one cannot be), passes
 * its log lines on, and stops it.
 */
import { Worker } from 'node:worker_threads';
import type { DatagramRingMemory } from './datagram-ring.js';
import { workerScriptPath } from './thread-id.js';
import type { Log } from '../../common/log.js';

/** Source index of the warm-up's datagrams in a ring. */
export const WARM_UP_SOURCE = 0xffff;

/** One socket the thread binds. */
export interface SocketThreadSocket {
  listen: string;
  host: string;
  port: number;
  type: 'udp4' | 'udp6';
  requestedBuffer: number;
  /** Exporter address → source index. */
  claims: [string, number][];
  /** Source taking unclaimed exporters, or -1. */
  defaultSource: number;
  ring: DatagramRingMemory;
}

/** How a socket is read: recvmmsg batches (batch-receive.ts) or Node dgram's events. */
export type SocketReader = 'recvmmsg' | 'dgram';

/** A socket the thread bound. */
export interface SocketThreadBound {
  address: string;
  port: number;
  /** Receive buffer the kernel granted. */
  granted: number;
  reader: SocketReader;
}

/** What the thread is started with. */
export interface SocketThreadInput {
  sockets: SocketThreadSocket[];
  sourceNames: string[];
  counters: SharedArrayBuffer;
  warmUp: boolean;
  /** Longest the warm-up takes, ms. */
  warmUpBudgetMs: number;
  logEveryMs: number;
  /** Read the sockets with recvmmsg batches where the native addon is built (else, or when false, through dgram). */
  batchReceive: boolean;
  /** Test hook: `crash-after:N` makes the thread die of an uncaught error once it has taken N datagrams. */
  faultInjection?: string;
}

export type SocketThreadMessage =
  /** The warm-up is sent; the thread binds once told `bind` (the decode thread has decoded the warm-up by then). */
  | { t: 'warmed'; sent: number; received: number }
  | { t: 'bound'; tid: number | undefined; sockets: SocketThreadBound[] }
  | { t: 'failed'; message: string; listen: string }
  | { t: 'log'; level: 'info' | 'warn' | 'error'; obj: object; msg: string }
  | { t: 'closed' };

/**
 * The thread's counters in shared memory, Float64 slots written by the
 * socket thread only: per source received and queue drops, per socket
 * datagrams no source claims.
 */
export class SocketThreadCounters {
  readonly slots: Float64Array;
  constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly sources: number,
  ) {
    this.slots = new Float64Array(buffer);
  }
  static allocate(sources: number, sockets: number): SocketThreadCounters {
    // One more source slot: the warm-up's.
    return new SocketThreadCounters(new SharedArrayBuffer(8 * (2 * (sources + 1) + sockets)), sources);
  }
  /** Slot of a source's received counter (the warm-up's is the last). */
  receivedSlot(source: number): number {
    return 2 * Math.min(source, this.sources);
  }
  dropsSlot(source: number): number {
    return 2 * Math.min(source, this.sources) + 1;
  }
  unclaimedSlot(socket: number): number {
    return 2 * (this.sources + 1) + socket;
  }
  received(source: number): number {
    return this.slots[this.receivedSlot(source)]!;
  }
  queueDrops(source: number): number {
    return this.slots[this.dropsSlot(source)]!;
  }
  unclaimed(socket: number): number {
    return this.slots[this.unclaimedSlot(socket)]!;
  }
}

/** A socket the thread could not bind (the listener turns it into its bind error). */
export class SocketThreadBindError extends Error {
  override readonly name = 'SocketThreadBindError';
  constructor(
    message: string,
    readonly listen: string,
  ) {
    super(message);
  }
}

/** A running socket thread. */
export class SocketThreadHandle {
  private exited: Promise<void>;
  private closing: Promise<void> | undefined;
  private died: (() => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    /** Each socket as bound, in plan order. */
    readonly sockets: SocketThreadBound[],
    /** The thread's id (Linux), for the service to keep its priority. */
    readonly tid: number | undefined,
  ) {
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        // Not asked to close: it died (an uncaught error), and its sockets closed with it.
        if (!this.closing) this.died?.();
        resolve();
      }),
    );
  }

  /** Calls `fn` if the thread ends without close() (at most once). */
  onDeath(fn: () => void): void {
    this.died = fn;
  }

  /**
   * Starts the thread; resolves once every socket is bound, rejects with
   * SocketThreadBindError when one is not. With a warm-up, the sockets are
   * bound only after `warmed` (given what the warm-up sent and received)
   * has settled, so that real traffic never waits behind the warm-up.
   */
  static start(
    input: SocketThreadInput,
    logger?: Log,
    warmed: (w: { sent: number; received: number }) => Promise<void> = async () => {},
  ): Promise<SocketThreadHandle> {
    const worker = new Worker(workerScriptPath('socket-thread'), { workerData: input });
    return new Promise((resolve, reject) => {
      let settled = false;
      worker.on('message', (m: SocketThreadMessage) => {
        if (m.t === 'log') logger?.[m.level](m.obj, m.msg);
        else if (m.t === 'warmed') {
          void warmed({ sent: m.sent, received: m.received })
            .catch((err: unknown) => logger?.warn({ err }, 'flow warm-up check failed'))
            .then(() => worker.postMessage({ t: 'bind' }));
        } else if (m.t === 'bound') {
          settled = true;
          resolve(new SocketThreadHandle(worker, m.sockets, m.tid));
        } else if (m.t === 'failed') {
          settled = true;
          reject(new SocketThreadBindError(m.message, m.listen));
        }
      });
      worker.on('error', (err) => {
        logger?.error({ err }, 'flow socket thread failed');
        if (!settled) {
          settled = true;
          reject(err);
        }
      });
      worker.once('exit', () => {
        if (!settled) {
          settled = true;
          reject(new Error('flow socket thread exited before its sockets were bound'));
        }
      });
    });
  }

  /** Closes the sockets and ends the thread; resolves when it has exited. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.worker.postMessage({ t: 'close' });
      await this.exited;
    })();
    return this.closing;
  }
}
