/**
 * Time series: a metric per step (1 min, 5 min, 1 h) of the window, for the
 * top-N groups of one to three dimensions plus `other` (what Akvorado
 * draws), or for the total alone. Steps are cut on received time, aligned to
 * multiples of the step since the epoch, so every matching flow falls in
 * exactly one step: the values over all steps and groups add up to the
 * window's total.
 *
 * With dimensions it takes two passes: the first ranks the groups over the
 * whole window (top-n.ts; shared with the scan worker thread, with `split`),
 * the second adds each row to its group's step, or to `other`'s, in this
 * thread. Per-step counters for every group at once would need memory in
 * groups × steps.
 */
import type { GeoLookup } from '../geo/geo-lookup.js';
import type { Dimension, DimensionValue } from './dimensions.js';
import { BYTES, HashGroups, PACKETS, topSlots } from './group-table.js';
import { scanMatches, type MatchScanOptions } from './match-scan.js';
import {
  groupMatches,
  keyLayout,
  keyValues,
  layoutColumns,
  METRIC_INDEX,
  writeKeys,
  type Metric,
  type SplitOptions,
} from './top-n.js';

/** Step lengths a series can have, in ms. */
export const STEPS = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000 } as const;
export type StepName = keyof typeof STEPS;

/** Most points one series answer holds (a month at 5-minute steps is 8 928). */
export const MAX_POINTS = 10_000;

export interface SeriesAnswer {
  step: StepName;
  /** Start of each step, ms since epoch. */
  points: number[];
  /** One line per top group, largest first. */
  lines: Array<{ key: DimensionValue[]; total: number; values: number[] }>;
  /** Everything outside the top groups (all zeros without dimensions). */
  other: number[];
  /** Every matching flow. */
  total: number[];
}

/** Step starts covering [from, to). */
export function stepPoints(from: number, to: number, step: StepName): number[] {
  const len = STEPS[step];
  const first = Math.floor(from / len) * len;
  const out: number[] = [];
  for (let t = first; t < to; t += len) out.push(t);
  return out;
}

export async function series(
  scan: Omit<MatchScanOptions, 'columns'>,
  opts: { dims: readonly Dimension[]; metric: Metric; n: number; step: StepName; geo?: GeoLookup; split?: SplitOptions },
): Promise<SeriesAnswer> {
  const points = stepPoints(scan.from, scan.to, opts.step);
  const len = STEPS[opts.step];
  const first = points[0] ?? scan.from;
  const steps = points.length;
  const total = new Float64Array(steps);
  const other = new Float64Array(steps);
  const m = METRIC_INDEX[opts.metric];
  const valueOf = (bytes: Float64Array, packets: Float64Array, i: number): number =>
    m === BYTES ? bytes[i]! : m === PACKETS ? packets[i]! : 1;

  if (opts.dims.length === 0) {
    await scanMatches({ ...scan, columns: ['received', 'bytes', 'packets'] }, ({ batch, idx, n }) => {
      const rec = batch.cols.received;
      for (let r = 0; r < n; r++) {
        const i = idx[r]!;
        total[Math.floor((rec[i]! - first) / len)]! += valueOf(batch.cols.bytes, batch.cols.packets, i);
      }
    });
    return { step: opts.step, points, lines: [], other: [...other], total: [...total] };
  }

  const layout = keyLayout(opts.dims, opts.geo);
  const ranked = await groupMatches(scan, layout, false, opts.split && { ...opts.split, dims: opts.dims });
  const slots = topSlots(ranked.groups, m, opts.n);
  // The chosen groups, in a table of their own whose flow count is the line number + 1.
  const chosen = new HashGroups(layout.width, slots.length);
  const words = new Uint32Array(layout.width);
  const lineOf = new Map<number, number>();
  const zero = Float64Array.of(0);
  const lines: SeriesAnswer['lines'] = slots.map((s, line) => {
    ranked.groups.key(s, words, 0);
    chosen.addRows(words, 1, Uint32Array.of(0), { bytes: zero, packets: zero });
    lineOf.set(chosen.find(words, 0), line);
    return { key: keyValues(layout, words, 0), total: 0, values: [] };
  });
  const values = lines.map(() => new Float64Array(steps));
  let keys = new Uint32Array(4096 * layout.width);
  await scanMatches({ ...scan, columns: [...layoutColumns(layout), 'received'] }, (match) => {
    const { batch, idx, n } = match;
    if (keys.length < n * layout.width) keys = new Uint32Array(n * layout.width);
    writeKeys(layout, match, keys);
    const rec = batch.cols.received;
    for (let r = 0; r < n; r++) {
      const i = idx[r]!;
      const step = Math.floor((rec[i]! - first) / len);
      const v = valueOf(batch.cols.bytes, batch.cols.packets, i);
      total[step]! += v;
      const slot = chosen.find(keys, r * layout.width);
      if (slot < 0) other[step]! += v;
      else values[lineOf.get(slot)!]![step]! += v;
    }
  });
  // Totals from this pass, so that lines + other = total even when rows arrived between the passes.
  lines.forEach((l, i) => {
    l.values = [...values[i]!];
    l.total = l.values.reduce((a, b) => a + b, 0);
  });
  return { step: opts.step, points, lines, other: [...other], total: [...total] };
}
