/**
 * Keeps the socket thread of the in-thread listeners running: starts it,
 * and when it dies (a bug: an uncaught error) starts it again on the
 * addresses its first start bound, after a pause that doubles with each
 * restart in a row; after MAX_FAILED_RESTARTS failed attempts in a row it
 * gives up and says so (onFailure).
 */
import { getPriority, setPriority } from 'node:os';
import { FailureSignal } from './failure-signal.js';
import { ListenerBindError } from './listener-errors.js';
import { formatHostPort } from './udp-socket.js';
import { SocketThreadBindError, SocketThreadHandle, type SocketThreadInput } from './socket-thread-handle.js';
import type { Log } from '../../common/log.js';

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

/** What the supervisor tells the listeners, and asks them. */
export interface SupervisedListeners {
  /** A socket thread started (first or again): its sockets are bound, and read by it. */
  adopt(handle: SocketThreadHandle): void;
  /** The socket thread died: its sockets stay unread until it is restarted. */
  lost(): void;
  /** True once the listeners are closing: a death or a restart then changes nothing. */
  closing(): boolean;
}

export class SocketThreadSupervisor {
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

  constructor(
    /** First pause before a restart, ms (`restartDelayMs`). */
    private readonly restartDelayMs: number,
    private readonly logger: Log | undefined,
    private readonly listeners: SupervisedListeners,
  ) {}

  /** The running socket thread, if any. */
  get thread(): SocketThreadHandle | undefined {
    return this.socketThread;
  }

  /** Times the socket thread died and was started again. */
  get restarts(): number {
    return this.socketThreadRestarts;
  }

  /** Starts the socket thread; rejects with ListenerBindError when it cannot bind a socket. */
  async start(
    input: SocketThreadInput,
    warmed: (w: { sent: number; received: number }) => Promise<void>,
  ): Promise<SocketThreadHandle> {
    let handle: SocketThreadHandle;
    try {
      handle = await SocketThreadHandle.start(input, this.logger, warmed);
    } catch (err) {
      if (err instanceof SocketThreadBindError) throw new ListenerBindError(err.message, err.listen, { cause: err });
      throw err;
    }
    this.adopt(handle);
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
    return handle;
  }

  private adopt(handle: SocketThreadHandle): void {
    this.socketThread = handle;
    this.socketThreadSince = performance.now();
    this.listeners.adopt(handle);
    handle.onDeath(() => this.socketThreadDied(handle));
  }

  /**
   * The socket thread died (a bug: an uncaught error). Its sockets closed with
   * it; the rings and counters live on in the listeners. It is started again on the same
   * addresses after a pause that doubles with each restart (`restartDelayMs`,
   * 250 ms, up to 128 times that, 32 s; back to the first once a thread has
   * lived a minute), so a thread that dies at once does not spin. After
   * MAX_FAILED_RESTARTS failed attempts in a row it gives up: onFailure.
   */
  private socketThreadDied(handle: SocketThreadHandle): void {
    if (this.listeners.closing() || this.socketThread !== handle) return;
    this.socketThread = undefined;
    this.listeners.lost();
    if (performance.now() - this.socketThreadSince > 60_000) this.recentRestarts = 0;
    this.logger?.error(
      { restarts: this.socketThreadRestarts },
      'flow socket thread died; its sockets are read again once it is restarted',
    );
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = this.restartDelayMs * 2 ** Math.min(this.recentRestarts, 7);
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
      if (this.listeners.closing()) return;
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
    if (this.listeners.closing()) {
      await handle.close();
      return;
    }
    this.failedRestarts = 0;
    this.socketThreadRestarts++;
    this.adopt(handle);
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

  /** Calls `fn` (once, also if it happened before) when the socket thread could not be restarted. */
  onFailure(fn: (err: Error) => void): void {
    this.failure.subscribe(fn);
  }

  /** Stops a pending restart and the socket thread (close, or a failed start). */
  async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.restarting;
    const thread = this.socketThread;
    this.socketThread = undefined;
    await thread?.close();
  }
}
