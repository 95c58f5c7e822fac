/**
 * Fills the KPI cache from capture files: one hour when the writer seals it,
 * every missing or stale hour at start (the cache is derived data and is
 * rebuilt when lost), a chosen range for `netsvc kpi rebuild`, and drops the
 * hours retention expired. Scans yield to the event loop between blocks so a
 * listener sharing the process keeps receiving.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { CaptureFileError } from '../capture/format.js';
import { listCaptureFiles, newReadStats, scanFlows, type CaptureFileInfo, type ReadStats } from '../capture/reader.js';
import { AGGREGATE_COLUMNS, HourAggregate } from './hour-aggregate.js';
import { MINUTE_COLUMNS } from './minute-counters.js';
import { BYTES, FLOWS } from './key-table.js';
import type { HourEntry, KpiCache } from './kpi-cache.js';
import { cutLevels } from './levels.js';
import type { Log } from '../../common/log.js';

/** Where the builder finds files and puts results. */
export interface KpiBuilderOptions {
  cache: KpiCache;
  dataDir: string;
  timezone: string;
  log?: Log;
  /** Blocks scanned between yields to the event loop (0 = never yield, for the CLI). */
  yieldEvery?: number;
  /**
   * Builds and stores one hour somewhere else (a worker thread, see
   * worker-hour-builder.ts), so a sealed hour's scan, ranking and compression
   * never hold the event loop the UDP listeners run on. Default: in this thread.
   */
  buildElsewhere?: (file: CaptureFileInfo) => Promise<{ stored: boolean; corruptFiles: number; corruptBlocks: number }>;
}

/** What a sync did. */
export interface SyncResult {
  built: number;
  upToDate: number;
  dropped: number;
  /** Hours whose file could not be read (not cached; queries skip them too). */
  failed: number;
}

/** Aggregates the flows of files received in [from, to) (whole files when omitted), with minute counters unless `minutes` is false. */
export async function aggregateFiles(
  files: readonly CaptureFileInfo[],
  opts: {
    from?: number;
    to?: number;
    stats?: ReadStats;
    onError?: (err: CaptureFileError) => void;
    yieldEvery?: number;
    minutes?: boolean;
  } = {},
): Promise<HourAggregate> {
  const minutes = opts.minutes !== false;
  const agg = new HourAggregate(0, { minutes });
  let blocks = 0;
  const every = opts.yieldEvery ?? 0;
  for (const batch of scanFlows(files, {
    from: opts.from,
    to: opts.to,
    columns: minutes ? [...new Set([...AGGREGATE_COLUMNS, ...MINUTE_COLUMNS])] : AGGREGATE_COLUMNS,
    stats: opts.stats,
    onError: opts.onError,
  })) {
    agg.add(batch);
    if (every > 0 && ++blocks % every === 0) await yieldToLoop();
  }
  return agg;
}

/** The cache entry of an hour from its aggregate. */
export function hourEntry(file: CaptureFileInfo, agg: HourAggregate): HourEntry {
  return {
    source: file.source,
    hourStart: file.hourStart,
    file: file.name,
    fileSize: file.size,
    flows: agg.flows,
    bytes: agg.bytes,
    packets: agg.packets,
    rstFlows: agg.rstFlows,
    protocols: agg.protocols(),
    levels: {
      src: cutLevels(agg.src.rows(), BYTES),
      dst: cutLevels(agg.dst.rows(), BYTES),
      port: cutLevels(agg.portRows(), FLOWS),
    },
    minutes: agg.minutes?.rows(),
  };
}

/** Keeps the KPI cache in step with the sealed capture files. */
export class KpiBuilder {
  /** Files and blocks found damaged while building. */
  readonly stats: ReadStats = newReadStats();
  private readonly cache: KpiCache;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: KpiBuilderOptions) {
    this.cache = opts.cache;
  }

  /** Runs builds one at a time, in call order, so two never scan at once. */
  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job, job);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Builds and stores the entry of one sealed file; false when the file could not be read. */
  buildHour(file: CaptureFileInfo): Promise<boolean> {
    return this.serial(() => this.build(file));
  }

  /** Builds the hour the capture writer just sealed (its `hourSealed` event). */
  onSealed(e: { source: string; hourStart: number; hourEnd: number; path: string }): Promise<boolean> {
    let size: number;
    try {
      size = statSync(e.path).size;
    } catch {
      return Promise.resolve(false); // gone already (retention, or reopened for late rows)
    }
    return this.buildHour({
      path: e.path,
      name: basename(e.path),
      source: e.source,
      hourStart: e.hourStart,
      hourEnd: e.hourEnd,
      kind: 'sealed',
      size,
    });
  }

  private async build(file: CaptureFileInfo): Promise<boolean> {
    if (this.opts.buildElsewhere) {
      const r = await this.opts.buildElsewhere(file);
      this.stats.corruptFiles += r.corruptFiles;
      this.stats.corruptBlocks += r.corruptBlocks;
      return r.stored;
    }
    const before = this.stats.corruptFiles;
    const agg = await aggregateFiles([file], {
      stats: this.stats,
      yieldEvery: this.opts.yieldEvery ?? 1,
      onError: (err) =>
        this.opts.log?.warn({ err: err.message, path: file.path }, 'damaged capture data skipped while building the KPI cache'),
    });
    if (this.stats.corruptFiles > before) return false;
    this.cache.put(hourEntry(file, agg));
    return true;
  }

  /** The sealed files of a source whose hour starts in [from, to). */
  sealedFiles(source: string, from = -Infinity, to = Infinity): CaptureFileInfo[] {
    return listCaptureFiles(this.opts.dataDir, source, this.opts.timezone).filter(
      (f) => f.kind === 'sealed' && f.hourStart >= from && f.hourStart < to,
    );
  }

  /**
   * Makes the cache match the files of `source` in [from, to): builds hours
   * that are missing or whose file changed (all of them with `force`), and
   * drops cached hours whose file is gone.
   */
  sync(
    source: string,
    opts: {
      from?: number;
      to?: number;
      force?: boolean;
      onProgress?: (done: number, total: number, file: CaptureFileInfo) => void;
    } = {},
  ): Promise<SyncResult> {
    return this.serial(async () => {
      const from = opts.from ?? -Infinity;
      const to = opts.to ?? Infinity;
      const files = this.sealedFiles(source, from, to);
      const cached = new Map(this.cache.hours(source, from, to).map((h) => [h.hourStart, h]));
      const result: SyncResult = { built: 0, upToDate: 0, dropped: 0, failed: 0 };
      const work = files.filter((f) => {
        const c = cached.get(f.hourStart);
        const fresh = c !== undefined && c.file === f.name && c.fileSize === f.size;
        if (fresh && !opts.force) result.upToDate++;
        return opts.force || !fresh;
      });
      const present = new Set(files.map((f) => f.hourStart));
      for (const hour of cached.keys()) {
        if (!present.has(hour)) {
          this.cache.drop(source, hour);
          result.dropped++;
        }
      }
      let done = 0;
      for (const file of work) {
        if (await this.build(file)) result.built++;
        else result.failed++;
        opts.onProgress?.(++done, work.length, file);
      }
      return result;
    });
  }

  /** Forgets an hour whose file retention removed. */
  expire(source: string, hourStart: number): void {
    this.cache.drop(source, hourStart);
  }

  /** Resolves when no build is running or queued. */
  async idle(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.chain;
      await seen;
    } while (seen !== this.chain);
  }
}
