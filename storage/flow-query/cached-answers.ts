/**
 * Series and top-N answered from the KPI cache instead of the capture files,
 * with the same shape and numbers as series.ts and top-n.ts give from the
 * files (same groups, same tie order: metric descending, then key words
 * ascending; same `other`).
 *
 * What the cache holds per sealed hour (storage/kpi/): counters per received
 * minute for the total and for proto, tos, exporter, input_if, output_if
 * (minute-counters.ts), and the complete rankings of source address,
 * destination address (every key) and TCP/UDP destination port, plus the
 * minute counters of the other protocols' destination ports. So:
 *
 *   - a series of the total, or by one minute dimension, at any step, over
 *     any window cut on whole minutes;
 *   - a top-N by one minute dimension over any window cut on whole minutes;
 *   - a top-N by src_ip or dst_ip (whole addresses) or dst_port when every
 *     cached hour of the window lies wholly inside it.
 *
 * Files of the window that the cache cannot stand for (open, not cached
 * yet, or changed since they were cached: name and size, as the KPI query
 * checks) are scanned into the same minute counters, so a window that ends
 * in the open hour still reads only that hour's file; the rankings of whole
 * hours are not mixed with scans, so a top-N by address or port needs every
 * file of the window cached. Anything else answers `undefined` and the
 * caller scans the files itself: a filter, another dimension or several, an
 * address prefix, a window not cut on whole minutes, no cached hour at all.
 * The files looked at are those a scan of the window reads (the ones
 * overlapping it), and a minute counts when it lies in the window, which is
 * exactly the rows such a scan counts.
 */
import { newReadStats, type CaptureFileInfo } from '../capture/reader.js';
import { KeyTable, type RankedRows } from '../kpi/key-table.js';
import type { CachedHour, KpiCache } from '../kpi/kpi-cache.js';
import { MINUTE_COLUMNS, MinuteCounters, type MinuteDim, type MinuteRows } from '../kpi/minute-counters.js';
import { mergeTop } from '../kpi/top-merge.js';
import { dimensionReader, type Dimension, type DimensionName, type DimensionValue } from './dimensions.js';
import { BYTES, compareKeyWords, FLOWS, PACKETS, type MetricIndex } from './group-table.js';
import { scanMatches, type MatchScanOptions } from './match-scan.js';
import { STEPS, stepPoints, type SeriesAnswer, type StepName } from './series.js';
import { METRIC_INDEX, type Counts, type Metric, type TopAnswer, type TopRow } from './top-n.js';

/** The window as the engine scans it (the scan options of `series`/`topN` fit); `stats` and `onError` serve the files scanned. */
export type CacheWindow = Pick<MatchScanOptions, 'files' | 'from' | 'to' | 'filter'> &
  Partial<Pick<MatchScanOptions, 'stats' | 'onError'>>;

/** A series as `series()` takes it. */
export interface CachedSeriesQuery {
  dims: readonly Dimension[];
  metric: Metric;
  n: number;
  step: StepName;
}

/** A top-N as `topN()` takes it. */
export interface CachedTopQuery {
  dims: readonly Dimension[];
  metric: Metric;
  n: number;
}

const MINUTE_MS = 60_000;

/** Flow query dimensions counted per minute in the cache. */
const MINUTE_DIM_OF: Partial<Record<DimensionName, MinuteDim>> = {
  proto: 'proto',
  tos: 'tos',
  exporter: 'exporter',
  input_if: 'input_if',
  output_if: 'output_if',
};

function minuteDimOf(dim: Dimension): MinuteDim | undefined {
  if (dim.name === 'exporter' && !wholeAddress(dim)) return undefined;
  return MINUTE_DIM_OF[dim.name];
}

function wholeAddress(dim: Dimension): boolean {
  return dim.v4Prefix === 32 && dim.v6Prefix === 128;
}

/** The files a scan of the window reads: those the cache stands for, and the rest. */
interface Coverage {
  hours: CachedHour[];
  rest: CaptureFileInfo[];
}

/** Splits the window's files into cached hours and the rest; undefined when the cache cannot be used at all. */
function coverage(cache: KpiCache, source: string, w: CacheWindow): Coverage | undefined {
  if (w.filter) return undefined;
  if (!Number.isInteger(w.from / MINUTE_MS) || !Number.isInteger(w.to / MINUTE_MS) || w.to <= w.from) return undefined;
  const files = w.files.filter((f) => f.hourEnd > w.from && f.hourStart < w.to);
  const out: Coverage = { hours: [], rest: [] };
  if (files.length === 0) return out;
  let lo = Infinity;
  let hi = -Infinity;
  for (const f of files) {
    lo = Math.min(lo, f.hourStart);
    hi = Math.max(hi, f.hourStart);
  }
  const byHour = new Map(cache.hours(source, lo, hi + 1).map((h) => [h.hourStart, h]));
  for (const f of files) {
    const h = byHour.get(f.hourStart);
    if (f.kind === 'sealed' && h && h.file === f.name && h.fileSize === f.size) out.hours.push(h);
    else out.rest.push(f);
  }
  return out;
}

/** Minute counters of the rows a scan of `files` finds in the window, counted as a cache entry counts them. */
async function scanMinutes(files: readonly CaptureFileInfo[], w: CacheWindow): Promise<Record<MinuteDim, MinuteRows>> {
  const counters = new MinuteCounters();
  const scan = { files, from: w.from, to: w.to, columns: MINUTE_COLUMNS, stats: w.stats ?? newReadStats(), onError: w.onError };
  // Without a filter the matching rows of a block are exactly its rows in the window.
  await scanMatches(scan, ({ batch }) => counters.add(batch, 0, batch.length, w.from, w.to));
  return counters.rows();
}

/**
 * The minute counters of `dim` over the window: cached hours from the
 * cache, the other files scanned. Undefined when no hour is cached (the
 * engine's own scan is as good) or a cached hour has no minute counters.
 */
async function windowMinutes(
  cache: KpiCache,
  source: string,
  w: CacheWindow,
  cov: Coverage,
  dim: MinuteDim,
): Promise<MinuteRows[] | undefined> {
  if (cov.hours.length === 0 && cov.rest.length > 0) return undefined;
  const parts = minuteRows(cache, source, cov.hours, dim);
  if (parts && cov.rest.length > 0) parts.push((await scanMinutes(cov.rest, w))[dim]);
  return parts;
}

/** The minute counters of `dim` of every hour, or undefined when one hour has none (an entry older than them). */
function minuteRows(cache: KpiCache, source: string, hours: readonly CachedHour[], dim: MinuteDim): MinuteRows[] | undefined {
  const out: MinuteRows[] = [];
  for (const h of hours) {
    const rows = cache.minutes(source, h.hourStart, dim);
    if (!rows) return undefined;
    out.push(rows);
  }
  return out;
}

interface Group {
  words: Uint32Array;
  vals: [number, number, number];
}

/** Sums minute rows in [from, to) per key. */
function groupMinutes(parts: readonly MinuteRows[], from: number, to: number): Map<string, Group> {
  const lo = from / MINUTE_MS;
  const hi = to / MINUTE_MS;
  const groups = new Map<string, Group>();
  for (const p of parts) {
    const w = p.width;
    for (let r = 0; r < p.length; r++) {
      const minute = p.minutes[r]!;
      if (minute < lo || minute >= hi) continue;
      const text = keyText(p.keys, r * w, w);
      let g = groups.get(text);
      if (!g) groups.set(text, (g = { words: p.keys.slice(r * w, r * w + w), vals: [0, 0, 0] }));
      g.vals[BYTES] += p.vals[r * 3 + BYTES]!;
      g.vals[PACKETS] += p.vals[r * 3 + PACKETS]!;
      g.vals[FLOWS] += p.vals[r * 3 + FLOWS]!;
    }
  }
  return groups;
}

function keyText(keys: Uint32Array, at: number, width: number): string {
  let s = '';
  for (let i = 0; i < width; i++) s += `${keys[at + i]!},`;
  return s;
}

/** The `n` best groups by `m`, ties by key words ascending (group-table.ts's topSlots order). */
function best(groups: Iterable<Group>, m: MetricIndex, n: number): Group[] {
  const all = [...groups];
  all.sort((a, b) => b.vals[m] - a.vals[m] || compareKeyWords(a.words, 0, b.words, 0, a.words.length));
  return all.slice(0, n);
}

function valueOf(dim: Dimension, words: Uint32Array): DimensionValue[] {
  return [dimensionReader(dim, undefined).value(words, 0)];
}

/**
 * The series `series()` would give for the window's files, from the cache;
 * undefined when the cache cannot answer it (see the module comment).
 */
export async function cachedSeries(
  cache: KpiCache,
  source: string,
  window: CacheWindow,
  query: CachedSeriesQuery,
): Promise<SeriesAnswer | undefined> {
  if (query.dims.length > 1) return undefined;
  const dim = query.dims[0];
  const md = dim ? minuteDimOf(dim) : 'total';
  if (!md) return undefined;
  const cov = coverage(cache, source, window);
  if (!cov) return undefined;
  const parts = await windowMinutes(cache, source, window, cov, md);
  if (!parts) return undefined;

  const points = stepPoints(window.from, window.to, query.step);
  const len = STEPS[query.step];
  const first = points[0] ?? window.from;
  const total = new Float64Array(points.length);
  const other = new Float64Array(points.length);
  const m = METRIC_INDEX[query.metric];
  const lo = window.from / MINUTE_MS;
  const hi = window.to / MINUTE_MS;

  // The chosen groups' lines, by key text; rows of other groups go to `other`.
  const lineOf = new Map<string, number>();
  const lines: SeriesAnswer['lines'] = [];
  if (dim) {
    best(groupMinutes(parts, window.from, window.to).values(), m, query.n).forEach((g, i) => {
      lineOf.set(keyText(g.words, 0, g.words.length), i);
      lines.push({ key: valueOf(dim, g.words), total: 0, values: [] });
    });
  }
  const values = lines.map(() => new Float64Array(points.length));
  for (const p of parts) {
    const w = p.width;
    for (let r = 0; r < p.length; r++) {
      const minute = p.minutes[r]!;
      if (minute < lo || minute >= hi) continue;
      const step = Math.floor((minute * MINUTE_MS - first) / len);
      const v = p.vals[r * 3 + m]!;
      total[step]! += v;
      if (!dim) continue;
      const line = lineOf.get(keyText(p.keys, r * w, w));
      if (line === undefined) other[step]! += v;
      else values[line]![step]! += v;
    }
  }
  lines.forEach((l, i) => {
    l.values = [...values[i]!];
    l.total = l.values.reduce((a, b) => a + b, 0);
  });
  return { step: query.step, points, lines, other: [...other], total: [...total] };
}

function sumRows(parts: readonly MinuteRows[], from: number, to: number): Counts {
  const lo = from / MINUTE_MS;
  const hi = to / MINUTE_MS;
  const c: Counts = { flows: 0, packets: 0, bytes: 0 };
  for (const p of parts) {
    for (let r = 0; r < p.length; r++) {
      const minute = p.minutes[r]!;
      if (minute < lo || minute >= hi) continue;
      c.bytes += p.vals[r * 3 + BYTES]!;
      c.packets += p.vals[r * 3 + PACKETS]!;
      c.flows += p.vals[r * 3 + FLOWS]!;
    }
  }
  return c;
}

/** True when every row of every hour (its total per minute) lies in [from, to): the hour's rankings are then the window's. */
function wholeHoursInside(totals: readonly MinuteRows[], from: number, to: number): boolean {
  const lo = from / MINUTE_MS;
  const hi = to / MINUTE_MS;
  return totals.every((t) => t.length === 0 || (t.minutes[0]! >= lo && t.minutes[t.length - 1]! < hi));
}

function answer(rows: TopRow[], total: Counts, groups: number): TopAnswer {
  const other: Counts = { ...total };
  for (const r of rows) {
    other.flows -= r.flows;
    other.packets -= r.packets;
    other.bytes -= r.bytes;
  }
  return { rows, other, total, groups };
}

const rowOf = (key: DimensionValue[], vals: ArrayLike<number>, at = 0): TopRow => ({
  key,
  flows: vals[at + FLOWS]!,
  packets: vals[at + PACKETS]!,
  bytes: vals[at + BYTES]!,
});

/** Every level of one ranking of an hour. */
function* levelsOf(cache: KpiCache, source: string, hourStart: number, dim: 'src' | 'dst' | 'port') {
  for (let k = 0; ; k++) {
    const level = cache.level(source, hourStart, dim, k);
    if (!level) return;
    yield level.rows;
  }
}

/**
 * Top-N by a whole source or destination address. Of one hour: the rows
 * merged from the ranking's first levels (top-merge.ts), the distinct count
 * from the level sizes. Of several: every key of every hour summed, since
 * the distinct count over hours needs every key anyway.
 */
async function topAddress(
  cache: KpiCache,
  source: string,
  hours: readonly CachedHour[],
  dim: Dimension,
  m: MetricIndex,
  n: number,
  total: Counts,
): Promise<TopAnswer> {
  const kpiDim = dim.name === 'src_ip' ? 'src' : 'dst';
  let top: RankedRows;
  let groups: number;
  if (hours.length === 1 && m === BYTES) {
    // The levels rank addresses by bytes, so only a top by bytes can stop early.
    const hour = hours[0]!.hourStart;
    top = await mergeTop([{ level: (k) => cache.level(source, hour, kpiDim, k) }], m, n, 16);
    groups = cache.keyCount(source, hour, kpiDim);
  } else {
    const table = new KeyTable();
    for (const h of hours) {
      for (const rows of levelsOf(cache, source, h.hourStart, kpiDim)) {
        // A Uint32Array view needs 4-byte alignment; SQLite's rows come aligned, others are copied once.
        const keys = rows.keys.byteOffset % 4 === 0 ? rows.keys : rows.keys.slice();
        const w = new Uint32Array(keys.buffer, keys.byteOffset, rows.length * 4);
        const v = rows.vals;
        for (let i = 0; i < rows.length; i++) {
          table.addWords(w[i * 4]!, w[i * 4 + 1]!, w[i * 4 + 2]!, w[i * 4 + 3]!, v[i * 3]!, v[i * 3 + 1]!, v[i * 3 + 2]!);
        }
      }
    }
    top = table.top(m, n).rows;
    groups = table.size;
  }
  const words = new Uint32Array(4);
  const view = new DataView(top.keys.buffer, top.keys.byteOffset, top.keys.byteLength);
  const rows: TopRow[] = [];
  for (let i = 0; i < top.length; i++) {
    for (let k = 0; k < 4; k++) words[k] = view.getUint32(i * 16 + k * 4);
    rows.push(rowOf(valueOf(dim, words), top.vals, i * 3));
  }
  return answer(rows, total, groups);
}

/** Top-N by destination port: the TCP/UDP ranking of every hour plus the other protocols' minute counters. */
function topPort(
  cache: KpiCache,
  source: string,
  hours: readonly CachedHour[],
  others: readonly MinuteRows[],
  dim: Dimension,
  m: MetricIndex,
  n: number,
  total: Counts,
): TopAnswer {
  const acc = new Float64Array(65536 * 3);
  for (const h of hours) {
    for (const rows of levelsOf(cache, source, h.hourStart, 'port')) {
      for (let i = 0; i < rows.length; i++) {
        const port = (rows.keys[i * 2]! << 8) | rows.keys[i * 2 + 1]!;
        for (let j = 0; j < 3; j++) acc[port * 3 + j]! += rows.vals[i * 3 + j]!;
      }
    }
  }
  for (const p of others) {
    for (let r = 0; r < p.length; r++) {
      const port = p.keys[r]!;
      for (let j = 0; j < 3; j++) acc[port * 3 + j]! += p.vals[r * 3 + j]!;
    }
  }
  const ports: number[] = [];
  for (let port = 0; port < 65536; port++) if (acc[port * 3 + FLOWS]! > 0) ports.push(port);
  ports.sort((a, b) => acc[b * 3 + m]! - acc[a * 3 + m]! || a - b);
  const rows = ports.slice(0, n).map((port) => rowOf(valueOf(dim, Uint32Array.of(port)), acc, port * 3));
  return answer(rows, total, ports.length);
}

/**
 * The answer `topN()` would give for the window's files, from the cache;
 * undefined when the cache cannot answer it (see the module comment).
 */
export async function cachedTopN(
  cache: KpiCache,
  source: string,
  window: CacheWindow,
  query: CachedTopQuery,
): Promise<TopAnswer | undefined> {
  if (query.dims.length !== 1) return undefined;
  const dim = query.dims[0]!;
  const m = METRIC_INDEX[query.metric];
  const md = minuteDimOf(dim);
  const ranked = (dim.name === 'src_ip' || dim.name === 'dst_ip') && wholeAddress(dim);
  if (!md && !ranked && dim.name !== 'dst_port') return undefined;
  const cov = coverage(cache, source, window);
  if (!cov) return undefined;

  if (md) {
    const parts = await windowMinutes(cache, source, window, cov, md);
    if (!parts) return undefined;
    const groups = groupMinutes(parts, window.from, window.to);
    const rows = best(groups.values(), m, query.n).map((g) => rowOf(valueOf(dim, g.words), g.vals));
    return answer(rows, sumRows(parts, window.from, window.to), groups.size);
  }

  // The rankings are of whole hours, and can be merged exactly only with other cached hours.
  if (cov.rest.length > 0) return undefined;
  const hours = cov.hours;
  const totals = minuteRows(cache, source, hours, 'total');
  if (!totals || !wholeHoursInside(totals, window.from, window.to)) return undefined;
  const total = sumRows(totals, window.from, window.to);
  if (ranked) return topAddress(cache, source, hours, dim, m, query.n, total);
  const others = minuteRows(cache, source, hours, 'dst_port_other');
  if (!others) return undefined;
  return topPort(cache, source, hours, others, dim, m, query.n, total);
}
