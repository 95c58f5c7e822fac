/**
 * KPI aggregates of open hours, read from their capture files a block at a
 * time, so the capture writer does no per-key work while it writes.
 *
 * The writer appends whole, checksummed blocks to `nfcapd.current.*`; this
 * adds each block it has not added yet to the hour's HourAggregate (the one
 * a file scan and the KPI cache build use, so all origins agree). It runs
 * where the caller puts it: in the KPI worker thread under `serve`
 * (kpi-worker.ts), so neither the writer nor the HTTP thread pays for it,
 * and it only costs CPU when a query asks or the machine has time left
 * (the background pass keeps hours a query asked for within WATCH_MS, a
 * dashboard's, fully up to date, and the others with at most a quarter of a
 * core: at peak rates the ingest keeps the CPU, and the first query of a
 * neglected hour reads what is left). Memory grows with the hour's
 * distinct keys, never with its rows; a restart with a large open hour
 * reads the file back the same way, in the background.
 *
 * A KPI query reads a snapshot (totals, protocols and the best 256 keys of
 * each dimension) and, rarely, deeper levels of the same ranking; the
 * snapshot's `version` names the state those levels must come from. The
 * background pass leaves an hour alone for `PIN_MS` after a snapshot, so
 * the levels a query asks for next are of that state; later ones are
 * answered `stale` and the query starts again.
 */
import { statSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CaptureFile } from '../capture/capture-file.js';
import type { CaptureFs } from '../capture/capture-fs.js';
import { AGGREGATE_COLUMNS, HourAggregate, keyTableSource, portSource } from './hour-aggregate.js';
import { BYTES, FLOWS, type RankedRows } from './key-table.js';
import type { Dimension, ProtocolRow } from './kpi-cache.js';
import type { RankedSource } from './top-merge.js';
import type { Log } from '../../common/log.js';

/** One level of an open hour's ranking of a dimension (as top-merge.ts reads it). */
export interface OpenHourLevel {
  rows: RankedRows;
  next: number;
}

/** What a KPI query needs of an open hour at one moment. */
export interface OpenHourSnapshot {
  path: string;
  /** Blocks added when it was taken; deeper levels are asked for with it. */
  version: number;
  flows: number;
  bytes: number;
  packets: number;
  rstFlows: number;
  protocols: ProtocolRow[];
  /** The best 256 keys of each dimension, and the bound after them; undefined when it has none. */
  level0: Record<Dimension, OpenHourLevel | undefined>;
}

/** Open-hour aggregates as a query reaches them (in this thread or in the KPI worker). */
export interface OpenHours {
  /** Adds what the file gained, then answers; undefined when the file cannot be read. */
  snapshot(path: string): Promise<OpenHourSnapshot | undefined>;
  /** Level `level` (≥ 1) of a dimension in the state `version` names; 'stale' once the hour moved on. */
  level(path: string, dim: Dimension, level: number, version: number): Promise<OpenHourLevel | undefined | 'stale'>;
  /** The open files to keep up to date in the background; others are forgotten. */
  track(paths: readonly string[]): void;
}

/** How long the background pass leaves an hour alone after a snapshot of it. */
export const PIN_MS = 5000;
/** How long after its last snapshot the background pass keeps an hour up to date. */
export const WATCH_MS = 15 * 60_000;

interface HourState {
  path: string;
  /** The file's inode: a different file under the same name (an hour reopened after its seal) starts over. */
  ino: number;
  agg: HourAggregate;
  blocks: number;
  ranked: Record<Dimension, RankedSource> | undefined;
  pinnedUntil: number;
  watchedUntil: number;
}

/** Counters of the aggregator. */
export interface OpenHourCounters {
  blocksAdded: number;
  rowsAdded: number;
  blocksDamaged: number;
}

/** Keeps the aggregates of open capture files; see the module comment. */
export class OpenHourAggregator {
  private readonly hours = new Map<string, HourState>();
  private tracked = new Set<string>();
  readonly counters: OpenHourCounters = { blocksAdded: 0, rowsAdded: 0, blocksDamaged: 0 };

  constructor(private readonly opts: { now: () => number; cfs?: CaptureFs; log?: Log }) {}

  /**
   * Adds blocks of `path` not added yet, for at most `budgetMs`; true when
   * none is left (or the file is gone).
   */
  catchUp(path: string, budgetMs = Infinity): boolean {
    let ino: number;
    try {
      ino = statSync(path).ino;
    } catch {
      this.hours.delete(path);
      return true;
    }
    let h = this.hours.get(path);
    if (!h || h.ino !== ino) {
      h = { path, ino, agg: new HourAggregate(), blocks: 0, ranked: undefined, pinnedUntil: 0, watchedUntil: 0 };
      this.hours.set(path, h);
    }
    let file: CaptureFile;
    try {
      file = CaptureFile.open(path, { cfs: this.opts.cfs });
    } catch {
      // Renamed by its seal or damaged at the head: nothing more to add from this name.
      return true;
    }
    const until = performance.now() + budgetMs;
    try {
      while (h.blocks < file.blocks.length) {
        const i = h.blocks++;
        h.ranked = undefined;
        try {
          const b = file.readBlock(i, AGGREGATE_COLUMNS);
          h.agg.add(b);
          this.counters.rowsAdded += b.length;
          this.counters.blocksAdded++;
        } catch (err) {
          this.counters.blocksDamaged++;
          this.opts.log?.warn(
            { err: (err as Error).message, path, block: i },
            'damaged block of an open hour left out of its KPIs',
          );
        }
        if (performance.now() >= until) break;
      }
      return h.blocks >= file.blocks.length;
    } finally {
      file.close();
    }
  }

  /** Catches the file up and answers its snapshot; the background pass then leaves it alone for PIN_MS. */
  snapshot(path: string): OpenHourSnapshot | undefined {
    this.catchUp(path);
    const h = this.hours.get(path);
    if (!h) return undefined;
    h.pinnedUntil = this.opts.now() + PIN_MS;
    h.watchedUntil = this.opts.now() + WATCH_MS;
    const ranked = this.rankedOf(h);
    const level0 = (dim: Dimension): OpenHourLevel | undefined => ranked[dim].level(0) as OpenHourLevel | undefined;
    const a = h.agg;
    return {
      path,
      version: h.blocks,
      flows: a.flows,
      bytes: a.bytes,
      packets: a.packets,
      rstFlows: a.rstFlows,
      protocols: a.protocols(),
      level0: { src: level0('src'), dst: level0('dst'), port: level0('port') },
    };
  }

  /** A deeper level of the ranking in the state `version` names, or 'stale'. */
  level(path: string, dim: Dimension, level: number, version: number): OpenHourLevel | undefined | 'stale' {
    const h = this.hours.get(path);
    if (!h || h.blocks !== version) return 'stale';
    return this.rankedOf(h)[dim].level(level) as OpenHourLevel | undefined;
  }

  /** Keeps `paths` up to date in the background from now on; forgets every other hour. */
  track(paths: readonly string[]): void {
    this.tracked = new Set(paths);
    for (const p of this.hours.keys()) if (!this.tracked.has(p)) this.hours.delete(p);
  }

  /**
   * One background slice over the tracked hours that a query watches (or,
   * with `watched` false, that none does), pinned ones left alone; true when
   * all of them are caught up.
   */
  backgroundStep(budgetMs: number, watched = true): boolean {
    const now = this.opts.now();
    let done = true;
    for (const path of this.tracked) {
      const h = this.hours.get(path);
      if (h && h.pinnedUntil > now) continue;
      const isWatched = h !== undefined && h.watchedUntil > now;
      if (isWatched !== watched) continue;
      done = this.catchUp(path, budgetMs) && done;
    }
    return done;
  }

  private rankedOf(h: HourState): Record<Dimension, RankedSource> {
    h.ranked ??= { src: keyTableSource(h.agg.src, BYTES), dst: keyTableSource(h.agg.dst, BYTES), port: portSource(h.agg, FLOWS) };
    return h.ranked;
  }
}

/**
 * Runs the background pass in slices, yielding between them: watched hours
 * until they are caught up, then the others for at most `unwatchedMs`.
 */
export async function catchUpTracked(agg: OpenHourAggregator, unwatchedMs: number, sliceMs = 20): Promise<void> {
  while (!agg.backgroundStep(sliceMs, true)) await yieldToLoop();
  const until = performance.now() + unwatchedMs;
  while (performance.now() < until && !agg.backgroundStep(Math.min(sliceMs, until - performance.now()), false))
    await yieldToLoop();
}

/** OpenHours over an aggregator in this thread (tests, and a build without the compiled worker). */
export function localOpenHours(agg: OpenHourAggregator): OpenHours {
  return {
    snapshot: async (path) => agg.snapshot(path),
    level: async (path, dim, level, version) => agg.level(path, dim, level, version),
    track: (paths) => agg.track(paths),
  };
}
