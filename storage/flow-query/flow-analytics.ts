/**
 * Flow analytics over a flow source's capture files: top-N by one to three
 * dimensions, time series, and paged flows, each for a window and an
 * nfdump-syntax filter. The API's netsvc-extension routes and the CLI's
 * `top` and `dump --filter` use it; windows are on received time, [from, to).
 */
import { createHash } from 'node:crypto';
import type { Log } from '../../common/log.js';
import { LogThrottle } from '../../common/log-throttle.js';
import type { CaptureFileError } from '../capture/format.js';
import { listCaptureFiles, newReadStats, type CaptureFileInfo, type ReadStats } from '../capture/reader.js';
import type { GeoLookup } from '../geo/geo-lookup.js';
import type { KpiCache } from '../kpi/kpi-cache.js';
import { cachedSeries, cachedTopN } from './cached-answers.js';
import type { Dimension } from './dimensions.js';
import type { FilterExpr } from './filter-ast.js';
import { compileFilter } from './filter-compile.js';
import { parseFilter } from './filter-parse.js';
import {
  TUPLE_LENGTH,
  flowPage,
  newestOnDisk,
  snapshotEnd,
  type FlowCursor,
  type FlowOrder,
  type FlowPage,
} from './flow-pages.js';
import type { RowFilter } from './match-scan.js';
import { scanWorkers, type GeoSource, type ScanWorkers } from './scan-pool.js';
import { series, type SeriesAnswer, type StepName } from './series.js';
import { countMatching, topN, type Metric, type SplitOptions, type TopAnswer } from './top-n.js';

/** Too many analytics queries are running or waiting; the client should retry later. */
export class FlowAnalyticsBusyError extends Error {
  override readonly name = 'FlowAnalyticsBusyError';
}

/** A cursor that is not one this query handed out (altered, or from another query). */
export class FlowCursorError extends Error {
  override readonly name = 'FlowCursorError';
}

export interface FlowAnalyticsOptions {
  dataDir: string;
  timezone: string;
  /** Enrichment for AS and country; without it, countries are unknown and AS is the exporter's. */
  geo?: () => GeoLookup | undefined;
  /**
   * Where `geo` was opened from (openGeoLookup's arguments), for the scan worker to open its own;
   * without it, queries that read geo data scan in one thread.
   */
  geoSource?: GeoSource;
  /** The KPI cache: series and top-N without a filter come from its counters where it has them (cached-answers.ts). */
  cache?: KpiCache;
  log?: Log;
  now: () => number;
  /** Queries scanning files at once (default 2, the cores a small box has), and waiting beyond them (default 8); more are refused. */
  maxRunning?: number;
  maxWaiting?: number;
  /**
   * How long after its receipt a flow is surely on disk (the writer's flush interval and a margin):
   * a search's snapshot then includes the newest received millisecond (flow-pages.ts).
   */
  settledMs?: number;
  /**
   * Threads a top-N (and a series' ranking pass) scans with: 2 (the default) shares the blocks of
   * a large enough window with a worker thread (top-n.ts's groupMatches), 1 scans in the calling
   * thread alone. The answers are the same.
   */
  scanThreads?: 1 | 2;
  /** The worker pool for scanThreads 2; default the process's one (scan-pool.ts). */
  scanWorkers?: ScanWorkers;
}

/** What every analytics query names. */
export interface WindowQuery {
  source: string;
  from: number;
  to: number;
  /** nfdump filter syntax; empty or absent: every flow. */
  filter?: string;
}

/** Counters of the reading done for analytics, added up since start. */
export type AnalyticsCounters = Readonly<ReadStats>;

export class FlowAnalytics {
  private readonly stats = newReadStats();
  private readonly warn: LogThrottle;

  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly opts: FlowAnalyticsOptions) {
    this.warn = new LogThrottle(10_000, opts.now);
  }

  /**
   * Runs a query once a slot is free. A scan yields to the event loop between blocks, so the
   * API answers while it runs; the slots keep a burst of heavy queries from sharing the CPU
   * into minutes each, and refuse what would wait too long (FlowAnalyticsBusyError).
   */
  private async gated<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= (this.opts.maxRunning ?? 2)) {
      if (this.waiting.length >= (this.opts.maxWaiting ?? 8)) {
        throw new FlowAnalyticsBusyError('too many flow queries are running; try again shortly');
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await fn();
    } finally {
      // The slot passes to the next waiter, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  get counters(): AnalyticsCounters {
    return { ...this.stats };
  }

  /** Parses and compiles a filter; throws the parser's FilterSyntaxError. */
  compile(filter: string | undefined): RowFilter | undefined {
    if (filter === undefined || filter.trim() === '') return undefined;
    return compileFilter(parseFilter(filter), { geo: this.opts.geo?.() });
  }

  private readonly onError = (err: CaptureFileError): void => {
    if (!this.warn.allow('damaged')) return;
    this.opts.log?.warn(
      { err: err.message, code: err.code, path: err.path },
      'damaged capture data skipped by an analytics query',
    );
  };

  private scan(q: WindowQuery) {
    const files: CaptureFileInfo[] = listCaptureFiles(this.opts.dataDir, q.source, this.opts.timezone).filter(
      (f) => f.hourEnd > q.from && f.hourStart < q.to,
    );
    return { files, from: q.from, to: q.to, filter: this.compile(q.filter), stats: this.stats, onError: this.onError };
  }

  /**
   * How a grouping scan may be split with the worker thread: undefined for one thread (asked for,
   * or the query reads geo data the worker could not open).
   */
  private split(q: WindowQuery & { by: readonly Dimension[] }): SplitOptions | undefined {
    if ((this.opts.scanThreads ?? 2) < 2) return undefined;
    const filter = q.filter?.trim() ? q.filter : undefined;
    const withGeo = this.opts.geo?.() !== undefined;
    if (withGeo && !this.opts.geoSource && readsGeo(q.by, filter)) return undefined;
    return { workers: this.opts.scanWorkers ?? scanWorkers, filter, geo: withGeo ? this.opts.geoSource : undefined };
  }

  /** Top-N; `times` adds each group's first start and last end (read from the files, never the cache). */
  top(q: WindowQuery & { by: readonly Dimension[]; metric: Metric; limit: number; times?: boolean }): Promise<TopAnswer> {
    return this.gated(() => this.topNow(q));
  }

  private async topNow(
    q: WindowQuery & { by: readonly Dimension[]; metric: Metric; limit: number; times?: boolean },
  ): Promise<TopAnswer> {
    const scan = this.scan(q);
    if (this.opts.cache && !scan.filter && !q.times) {
      const cached = await cachedTopN(this.opts.cache, q.source, scan, { dims: q.by, metric: q.metric, n: q.limit });
      if (cached) return cached;
    }
    return topN(scan, q.by, q.metric, q.limit, { geo: this.opts.geo?.(), times: q.times, split: this.split(q) });
  }

  series(q: WindowQuery & { by: readonly Dimension[]; metric: Metric; limit: number; step: StepName }): Promise<SeriesAnswer> {
    return this.gated(async () => {
      const scan = this.scan(q);
      const query = { dims: q.by, metric: q.metric, n: q.limit, step: q.step };
      const cached = this.opts.cache && !scan.filter ? await cachedSeries(this.opts.cache, q.source, scan, query) : undefined;
      return cached ?? series(scan, { ...query, geo: this.opts.geo?.(), split: this.split(q) });
    });
  }

  /**
   * One page of matching flows; `cursor` is the previous page's `next` (opaque text).
   * `count: false` skips counting the matches on the first page (a scan of the filter's columns).
   */
  flows(
    q: WindowQuery & { order: FlowOrder; limit: number; cursor?: string; count?: boolean },
  ): Promise<FlowPage & { cursor: string | undefined }> {
    return this.gated(async () => {
      const fingerprint = this.fingerprint(q);
      // The files are listed and the filter compiled once; every step reads [from, asOf).
      const scan = this.scan(q);
      let cursor: FlowCursor | undefined;
      let asOf: number;
      let total: number | null;
      if (q.cursor) {
        cursor = decodeCursor(q.cursor, fingerprint, q.from, q.to);
        asOf = cursor.asOf;
        total = cursor.total;
      } else {
        asOf = snapshotEnd(scan, newestOnDisk, this.opts.now(), this.opts.settledMs);
        total = null;
      }
      // The first page's count (the filter's columns of the whole window) is taken while the page
      // is read, and shared with the worker thread as a top-N's grouping is.
      // When one fails, the other is stopped at its next block and waited for: nothing of this
      // query runs on once its slot is free.
      const stop = new AbortController();
      const guarded = <T>(p: Promise<T>): Promise<T> =>
        p.catch((err: unknown) => {
          stop.abort();
          throw err;
        });
      const both = { ...scan, to: asOf, signal: stop.signal };
      const [read, count] = await Promise.allSettled([
        guarded(flowPage(both, { order: q.order, limit: q.limit, cursor, total })),
        guarded(q.cursor || q.count === false ? Promise.resolve(total) : countMatching(both, this.split({ ...q, by: [] }))),
      ]);
      if (read.status === 'rejected') throw read.reason;
      if (count.status === 'rejected') throw count.reason;
      const answer = withTotal(read.value, count.value);
      return { ...answer, cursor: answer.next && encodeCursor(answer.next, fingerprint) };
    });
  }

  /** What a cursor is bound to: the same source, window, filter and order. */
  private fingerprint(q: WindowQuery & { order: FlowOrder }): string {
    return createHash('sha256')
      .update(JSON.stringify([q.source, q.from, q.to, q.filter?.trim() ?? '', q.order]))
      .digest('base64url')
      .slice(0, 16);
  }
}

/** The page with the count of matches: taken beside the first page, carried by the cursor after it. */
function withTotal(page: FlowPage, total: number | null): FlowPage {
  return { ...page, total, next: page.next && { ...page.next, total } };
}

/** Whether a query's dimensions or filter read geo data (AS numbers a flow left 0, countries). */
function readsGeo(dims: readonly Dimension[], filter: string | undefined): boolean {
  if (dims.some((d) => d.name.endsWith('_as') || d.name.endsWith('_country'))) return true;
  const walk = (e: FilterExpr): boolean => {
    switch (e.kind) {
      case 'and':
      case 'or':
        return e.operands.some(walk);
      case 'not':
        return walk(e.operand);
      default:
        return e.kind === 'as' || e.kind === 'country';
    }
  };
  return filter !== undefined && walk(parseFilter(filter));
}

function encodeCursor(c: FlowCursor, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ f: fingerprint, a: c.asOf, n: c.total, l: c.last, s: c.seen })).toString('base64url');
}

function decodeCursor(text: string, fingerprint: string, from: number, to: number): FlowCursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new FlowCursorError('is not a cursor this service handed out');
  }
  const r = raw as { f?: unknown; a?: unknown; n?: unknown; l?: unknown; s?: unknown };
  const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.length <= 64 && v.every((x) => Number.isFinite(x));
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.f !== 'string' ||
    !Number.isFinite(r.a) ||
    !(r.n === null || Number.isSafeInteger(r.n)) ||
    !numbers(r.l) ||
    !Number.isSafeInteger(r.s)
  ) {
    throw new FlowCursorError('is not a cursor this service handed out');
  }
  // The cursor is the client's to keep, not to trust: it may only narrow its own query's window.
  if ((r.a as number) < from || (r.a as number) > to || (r.s as number) < 0 || (r.l as number[]).length !== TUPLE_LENGTH) {
    throw new FlowCursorError('is not a cursor this service handed out');
  }
  if (r.f !== fingerprint)
    throw new FlowCursorError('belongs to another query (source, window, filter and order must stay the same)');
  return { asOf: r.a as number, total: r.n as number | null, last: r.l, seen: r.s as number };
}
