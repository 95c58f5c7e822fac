/**
 * The second core for flow queries: one worker thread (scan-pool-worker.ts)
 * that groups some of a query's blocks while the calling thread groups the
 * others (top-n.ts's groupMatches), each taking the next block as it goes
 * (block-claims.ts). Jobs are plain data — the files, the window, the filter
 * as text, the dimensions, the shared claims — and answers come back as flat
 * typed arrays, transferred, not copied.
 *
 * The worker is started at the first job, kept for the next ones, replaced
 * when it dies, and stopped after a while without work. It holds the process
 * open only while it has a job (the caller waits for the answer). A job is
 * answered, refused with the error it threw there (JobError), or lost
 * (ScanWorkerLostError: the worker died, the pool closed, the job was
 * withdrawn); the caller then scans that part itself.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CaptureErrorCode } from '../capture/format.js';
import type { CaptureFileInfo, ReadStats } from '../capture/reader.js';
import type { GeoConfig } from '../geo/geo-config.js';
import type { Dimension } from './dimensions.js';

/** Where a worker opens the geo data the caller's GeoLookup comes from (openGeoLookup's arguments). */
export interface GeoSource {
  config: GeoConfig;
  dataDir: string;
}

/** A part of a top-N grouping, as a worker takes it. */
export interface GroupJob {
  files: CaptureFileInfo[];
  from: number;
  to: number;
  /** The filter's text, compiled again in the worker; absent: every flow. */
  filter?: string;
  dims: Dimension[];
  times: boolean;
  /** The blocks' claims (block-claims.ts), shared with the caller's scan: the worker takes blocks as taker 2. */
  claims: SharedArrayBuffer;
  /** blockLayout of the caller's blocks: a worker that finds other blocks (the files changed meanwhile) takes none. */
  layout: string;
  /** The worker takes no more blocks once it holds this many groups. */
  stopAt: number;
  /** For queries that read geo data. */
  geo?: GeoSource;
  /** Only the matching rows are counted (in `total.flows`): no groups, no column besides the filter's. */
  countOnly?: boolean;
}

/** Groups as flat arrays: `size` keys of `width` words, and per key bytes, packets, flows (and first, last with `times`). */
export interface FlatGroups {
  size: number;
  width: number;
  times: boolean;
  keys: Uint32Array<ArrayBuffer>;
  values: Float64Array<ArrayBuffer>;
  /**
   * Groups of an address table (width 4) whose address is IPv4, apart: one word each (the
   * mapped address's last), as the table keeps them. The arrays above then hold the others.
   */
  v4?: { size: number; keys: Uint32Array<ArrayBuffer>; values: Float64Array<ArrayBuffer> };
}

/** A damaged file or block a worker skipped (a CaptureFileError's fields; `message` without the path). */
export interface SkippedDamage {
  code: CaptureErrorCode;
  message: string;
  path?: string;
  offset?: number;
}

export interface GroupJobResult {
  groups: FlatGroups;
  total: { flows: number; packets: number; bytes: number };
  stats: ReadStats;
  errors: SkippedDamage[];
}

/** An error a job threw in the worker, as sent back (the caller throws it again as its own class). */
export interface JobError {
  name: string;
  message: string;
  code?: string;
  path?: string;
}

/** Messages to the worker. */
export type ToWorker = { t: 'job'; id: number; job: GroupJob } | { t: 'cancel'; id: number };
/** Messages from the worker. */
export type FromWorker = { id: number; ok: true; result: GroupJobResult } | { id: number; ok: false; error: JobError };

/** A job did not run to its end in a worker: it died, the pool was closed, or the job was withdrawn. */
export class ScanWorkerLostError extends Error {
  override readonly name = 'ScanWorkerLostError';
}

/** A job threw in the worker; `error` is what it threw. */
export class ScanJobError extends Error {
  override readonly name = 'ScanJobError';
  constructor(readonly error: JobError) {
    super(error.message);
  }
}

/** A job handed to the pool. */
export interface ScanTask {
  /** The answer; rejects with ScanJobError or ScanWorkerLostError. */
  readonly result: Promise<GroupJobResult>;
  /** True once the worker has taken the job. */
  readonly started: boolean;
  /** Withdraws the job: dropped while queued, stopped at its next block while running (its result then rejects). */
  cancel(): void;
}

interface Task {
  id: number;
  job: GroupJob;
  started: boolean;
  cancelled: boolean;
  resolve(r: GroupJobResult): void;
  reject(e: Error): void;
}

/** Workers that died in a row (or never started) before the pool gives up and callers scan alone. */
const MAX_LOSSES = 3;

export interface ScanPoolOptions {
  /** The compiled worker script; default the one beside this module (absent when running the TypeScript sources). */
  script?: URL;
  /** A worker without work is stopped after this long (default 5 minutes). */
  idleMs?: number;
}

/** Where groupMatches hands jobs (a ScanWorkerPool; tests put their own in between). */
export interface ScanWorkers {
  /** Whether a job can go to a worker now; when not, the caller scans alone. */
  readonly available: boolean;
  submit(job: GroupJob): ScanTask;
}

/** A pool of one scan worker; jobs wait their turn. */
export class ScanWorkerPool implements ScanWorkers {
  private readonly script: URL;
  private readonly idleMs: number;
  private worker: Worker | undefined;
  private readonly queue: Task[] = [];
  private running: Task | undefined;
  private losses = 0;
  private lastLoss = '';
  private idleTimer: NodeJS.Timeout | undefined;
  private scriptExists: boolean | undefined;
  private nextId = 1;
  /** Whether an idle worker is replaced instead of stopped (keepWarm). */
  private warm = false;
  private answered = 0;
  private blocksRead = 0;

  constructor(opts: ScanPoolOptions = {}) {
    this.script = opts.script ?? new URL('./scan-pool-worker.js', import.meta.url);
    this.idleMs = opts.idleMs ?? 5 * 60_000;
  }

  /** Whether a job can go to a worker: the script is built, and workers have not kept dying. */
  get available(): boolean {
    this.scriptExists ??= existsSync(fileURLToPath(this.script));
    return this.scriptExists && this.losses < MAX_LOSSES;
  }

  /** Worker threads running now (0 or 1). */
  get threads(): number {
    return this.worker ? 1 : 0;
  }

  /** The running worker's thread id (a replaced worker has another), or undefined. */
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  /** Jobs queued or running. */
  get pending(): number {
    return this.queue.length + (this.running ? 1 : 0);
  }

  /** Jobs the worker answered, and the blocks it read for them, since the pool was made. */
  get counters(): { jobs: number; blocksRead: number } {
    return { jobs: this.answered, blocksRead: this.blocksRead };
  }

  /** Queues a job. */
  submit(job: GroupJob): ScanTask {
    let resolve!: (r: GroupJobResult) => void;
    let reject!: (e: Error) => void;
    const result = new Promise<GroupJobResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const task: Task = { id: this.nextId++, job, started: false, cancelled: false, resolve, reject };
    this.queue.push(task);
    this.pump();
    return {
      result,
      get started() {
        return task.started;
      },
      cancel: () => this.cancel(task),
    };
  }

  /**
   * Keeps a worker ready for the next job (serve does): one is started now, ahead of any query,
   * and a worker stopped after `idleMs` without work is replaced by a fresh one, which gives back
   * the memory of the last jobs and keeps the next query from waiting for a thread to start
   * (100–150 ms of a query here). Until close().
   */
  keepWarm(): void {
    this.warm = true;
    if (!this.worker) this.start();
  }

  /** Stops the worker; jobs queued or running are lost (ScanWorkerLostError). A later job starts a new worker. */
  async close(): Promise<void> {
    this.warm = false;
    const w = this.worker;
    this.worker = undefined;
    this.stopIdleTimer();
    const lost = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.running = undefined;
    // Once it has stopped, it takes no more blocks: its callers scan again those it took.
    if (w) await w.terminate();
    for (const t of lost) t.reject(new ScanWorkerLostError('the scan worker pool was closed'));
  }

  private cancel(task: Task): void {
    if (task.cancelled) return;
    task.cancelled = true;
    const queued = this.queue.indexOf(task);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      task.reject(new ScanWorkerLostError('the scan job was withdrawn'));
    } else if (this.running === task) {
      this.worker?.postMessage({ t: 'cancel', id: task.id } satisfies ToWorker);
    }
  }

  /** Hands the next queued job to the worker, starting one if needed. */
  private pump(): void {
    if (this.running || this.queue.length === 0) return;
    const w = this.worker ?? this.start();
    if (!w) {
      const err = new ScanWorkerLostError(`the scan worker cannot start: ${this.lastLoss}`);
      for (const t of this.queue.splice(0)) t.reject(err);
      return;
    }
    const task = this.queue.shift()!;
    this.stopIdleTimer();
    this.running = task;
    task.started = true;
    // While it has a job the worker keeps the process open: the caller is waiting for it.
    w.ref();
    try {
      w.postMessage({ t: 'job', id: task.id, job: task.job } satisfies ToWorker);
    } catch (err) {
      // Not sendable (not plain data): the caller scans alone.
      this.running = undefined;
      task.reject(new ScanWorkerLostError(`the scan job cannot be sent: ${(err as Error).message}`));
      if (this.queue.length > 0) this.pump();
      else this.idle(w);
    }
  }

  private start(): Worker | undefined {
    if (!this.available) return undefined;
    let w: Worker;
    try {
      w = new Worker(this.script);
    } catch (err) {
      this.losses++;
      this.lastLoss = (err as Error).message;
      return undefined;
    }
    w.unref();
    w.on('message', (m: FromWorker) => {
      const task = this.running;
      if (this.worker !== w || !task || task.id !== m.id) return;
      this.running = undefined;
      if (m.ok) {
        this.losses = 0;
        this.answered++;
        this.blocksRead += m.result.stats.blocksRead;
        task.resolve(m.result);
      } else if (m.error.name === 'AbortError') {
        task.reject(new ScanWorkerLostError('the scan job was withdrawn'));
      } else {
        this.losses = 0;
        task.reject(new ScanJobError(m.error));
      }
      if (this.queue.length > 0) this.pump();
      else this.idle(w);
    });
    w.on('error', (err) => {
      this.lastLoss = err.message;
    });
    w.on('exit', (code) => {
      if (this.worker !== w) return; // stopped on purpose
      this.worker = undefined;
      this.stopIdleTimer();
      this.losses++;
      const task = this.running;
      this.running = undefined;
      task?.reject(new ScanWorkerLostError(`the scan worker exited (code ${code}${this.lastLoss && `: ${this.lastLoss}`})`));
      this.pump();
    });
    this.worker = w;
    return w;
  }

  /** No job: the worker stops holding the process open, and is stopped after `idleMs`. */
  private idle(w: Worker): void {
    w.unref();
    this.stopIdleTimer();
    this.idleTimer = setTimeout(() => {
      if (this.worker !== w || this.running) return;
      this.worker = undefined;
      void w.terminate();
      // A fresh thread holds none of the last jobs' memory; it waits for a job without a timer.
      if (this.warm) this.start();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

/** The process's scan worker pool (one worker: the small boxes this runs on have two cores). */
export const scanWorkers = new ScanWorkerPool();
