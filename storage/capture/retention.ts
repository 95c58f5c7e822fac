/**
 * Expiry of capture files, like nfexpire: per source, sealed hours older than
 * `maxAgeHours` go, then the oldest sealed hours until the source's files fit
 * in `maxBytes`. The open hour is never deleted. Listeners hear about every
 * expired hour after its file is gone, so the KPI cache drops the same hours.
 */
import { join } from 'node:path';
import { nodeFs, type CaptureFs } from './capture-fs.js';
import { listCaptureFiles, type CaptureFileInfo } from './reader.js';
import type { Log } from '../../common/log.js';
import { CAPTURE_DEFAULTS } from './capture-defaults.js';

/** An hour whose file retention removed. */
export interface ExpiredHour {
  source: string;
  hourStart: number;
  hourEnd: number;
  path: string;
  bytes: number;
  reason: 'age' | 'size';
}

/** Options of capture retention. */
export interface RetentionOptions {
  dataDir: string;
  timezone: string;
  maxAgeHours?: number;
  maxBytes?: number;
  /** Seconds between runs of the periodic expiry. */
  checkIntervalSec?: number;
  /** Sources to expire; default every directory under `<dataDir>/flows`. */
  sources?: readonly string[];
  now?: () => number;
  cfs?: CaptureFs;
  log?: Log;
}

/** Periodic expiry of capture files. */
export class CaptureRetention {
  private readonly listeners: Array<(e: ExpiredHour) => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly cfs: CaptureFs;
  private readonly now: () => number;
  /** Files removed and bytes freed since start; errors met. */
  readonly counters = { filesRemoved: 0, bytesFreed: 0, errors: 0 };

  constructor(private readonly opts: RetentionOptions) {
    this.cfs = opts.cfs ?? nodeFs;
    this.now = opts.now ?? Date.now;
  }

  /** Registers a listener for expired hours; returns an unsubscribe function. */
  onExpired(fn: (e: ExpiredHour) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Runs once now, then every `checkIntervalSec`. A no-op without any limit. */
  start(): void {
    if (this.opts.maxAgeHours === undefined && this.opts.maxBytes === undefined) return;
    this.runOnce();
    this.timer = setInterval(
      () => this.runOnce(),
      (this.opts.checkIntervalSec ?? CAPTURE_DEFAULTS.retentionCheckIntervalSec) * 1000,
    );
    this.timer.unref();
  }

  /** Stops the periodic run. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private sources(): readonly string[] {
    if (this.opts.sources) return this.opts.sources;
    try {
      return this.cfs.readdirSync(join(this.opts.dataDir, 'flows'));
    } catch {
      return [];
    }
  }

  /** Expires what the limits say, now; returns the hours removed. */
  runOnce(): ExpiredHour[] {
    const removed: ExpiredHour[] = [];
    const now = this.now();
    for (const source of this.sources()) {
      const files = listCaptureFiles(this.opts.dataDir, source, this.opts.timezone, this.cfs);
      let total = files.reduce((s, f) => s + f.size, 0);
      const remove = (f: CaptureFileInfo, reason: ExpiredHour['reason']): boolean => {
        try {
          this.cfs.unlinkSync(f.path);
        } catch (err) {
          this.counters.errors++;
          this.opts.log?.warn({ err, path: f.path }, 'expired capture file could not be removed');
          return false;
        }
        total -= f.size;
        this.counters.filesRemoved++;
        this.counters.bytesFreed += f.size;
        const e: ExpiredHour = { source, hourStart: f.hourStart, hourEnd: f.hourEnd, path: f.path, bytes: f.size, reason };
        removed.push(e);
        for (const fn of this.listeners) {
          try {
            fn(e);
          } catch (err) {
            this.opts.log?.error({ err, path: f.path }, 'retention listener failed');
          }
        }
        return true;
      };
      const sealed = files.filter((f) => f.kind === 'sealed');
      const gone = new Set<CaptureFileInfo>();
      if (this.opts.maxAgeHours !== undefined) {
        const cutoff = now - this.opts.maxAgeHours * 3_600_000;
        for (const f of sealed) if (f.hourEnd <= cutoff && remove(f, 'age')) gone.add(f);
      }
      if (this.opts.maxBytes !== undefined) {
        for (const f of sealed) {
          if (total <= this.opts.maxBytes) break;
          if (!gone.has(f)) remove(f, 'size');
        }
      }
    }
    if (removed.length > 0) this.opts.log?.info({ files: removed.length }, 'capture retention removed expired hours');
    return removed;
  }
}
