/**
 * Top-N: the matching flows of a window grouped by one to three dimensions,
 * the N largest groups by a metric, and the rest as `other`, so that the
 * rows plus `other` add up to the total (what `nfdump -s dim/metric -n N`
 * prints, and more dimensions at once).
 */
import type { GeoLookup } from '../geo/geo-lookup.js';
import { dimensionReader, type Dimension, type DimensionReader, type DimensionValue } from './dimensions.js';
import {
  AddressGroups,
  BYTES,
  DenseGroups,
  FIRST,
  FLOWS,
  HashGroups,
  LAST,
  PACKETS,
  topSlots,
  WordGroups,
  type Groups,
  type MetricIndex,
} from './group-table.js';
import { scanMatches, type MatchScanOptions } from './match-scan.js';

/** What groups are ranked by. */
export type Metric = 'bytes' | 'packets' | 'flows';

/** Most groups one answer lists. */
export const MAX_TOP = 1000;

/** Memory the groups of one query may take, about: past it the query is refused, not the process killed. */
export const MAX_GROUP_BYTES = 512 * 1024 * 1024;

/** The matching flows fall into more groups than one query may count; a narrower window, filter or dimension list answers. */
export class TooManyGroupsError extends Error {
  override readonly name = 'TooManyGroupsError';
}

/** Flows, packets and bytes of a group, of `other`, or of the total. */
export interface Counts {
  flows: number;
  packets: number;
  bytes: number;
}

/** One group of a top-N answer: its value in each dimension, in the order asked. */
export interface TopRow extends Counts {
  key: DimensionValue[];
  /** Earliest flow start and latest flow end of the group (ms), as nfdump's `-s` shows them; only when asked for (`times`). */
  first?: number;
  last?: number;
}

export interface TopAnswer {
  rows: TopRow[];
  other: Counts;
  total: Counts;
  /** Distinct groups that matched (rows + those folded into other). */
  groups: number;
}

export const METRIC_INDEX: Record<Metric, MetricIndex> = { bytes: BYTES, packets: PACKETS, flows: FLOWS };

/** Readers of a dimension list, with the key layout they share. */
export interface KeyLayout {
  readers: DimensionReader[];
  /** Word offset of each dimension in a key. */
  offsets: number[];
  width: number;
}

export function keyLayout(dims: readonly Dimension[], geo: GeoLookup | undefined): KeyLayout {
  const readers = dims.map((d) => dimensionReader(d, geo));
  const offsets: number[] = [];
  let width = 0;
  for (const r of readers) {
    offsets.push(width);
    width += r.words;
  }
  return { readers, offsets, width };
}

/**
 * Empty groups for a layout: plain arrays for one small dimension, one-word
 * records for one other number, an IPv4/other split for one address, a
 * hash table over the key words otherwise.
 */
export function newGroups(layout: KeyLayout, times = false): Groups {
  const only = layout.readers.length === 1 ? layout.readers[0]! : undefined;
  if (only?.dense !== undefined) return new DenseGroups(only.dense);
  if (only?.words === 1) return new WordGroups(times);
  if (only?.words === 4) return new AddressGroups(times);
  return new HashGroups(layout.width, 0, times);
}

/** The values of a key, one per dimension. */
export function keyValues(layout: KeyLayout, words: Uint32Array, at: number): DimensionValue[] {
  return layout.readers.map((r, d) => r.value(words, at + layout.offsets[d]!));
}

/** Writes the keys of a block's matching rows, one row of `layout.width` words each. */
export function writeKeys(
  layout: KeyLayout,
  m: { batch: Parameters<DimensionReader['write']>[0]; idx: Uint32Array; n: number },
  keys: Uint32Array,
): void {
  layout.readers.forEach((r, d) => r.write(m.batch, m.idx, m.n, keys, layout.width, layout.offsets[d]!));
}

/** Columns a layout reads, with the counters. */
export function layoutColumns(layout: KeyLayout, times = false): MatchScanOptions['columns'] {
  const counters = times ? (['bytes', 'packets', 'start', 'end'] as const) : (['bytes', 'packets'] as const);
  return [...new Set([...layout.readers.flatMap((r) => r.columns), ...counters])];
}

/** Groups every matching row of the scan by the layout; `times` also keeps each group's first start and last end. */
export async function groupMatches(
  scan: Omit<MatchScanOptions, 'columns'>,
  layout: KeyLayout,
  times = false,
): Promise<{ groups: Groups; total: Counts }> {
  const groups = newGroups(layout, times);
  const total: Counts = { flows: 0, packets: 0, bytes: 0 };
  let keys = new Uint32Array(4096 * layout.width);
  // A group takes its key words and 3 or 5 float64s, in a table kept at most half full.
  const maxGroups = Math.floor(MAX_GROUP_BYTES / (2 * (layout.width * 4 + (times ? 40 : 24))));
  await scanMatches({ ...scan, columns: layoutColumns(layout, times) }, (m) => {
    if (groups.size > maxGroups) {
      throw new TooManyGroupsError(
        `more than ${maxGroups.toLocaleString('en-US')} groups: narrow the window, add a filter, or group by fewer or shorter dimensions (an address prefix)`,
      );
    }
    if (keys.length < m.n * layout.width) keys = new Uint32Array(m.n * layout.width);
    writeKeys(layout, m, keys);
    const { bytes, packets } = m.batch.cols;
    groups.addRows(keys, m.n, m.idx, m.batch.cols, times);
    let b = 0;
    let p = 0;
    for (let r = 0; r < m.n; r++) {
      const i = m.idx[r]!;
      b += bytes[i]!;
      p += packets[i]!;
    }
    total.flows += m.n;
    total.bytes += b;
    total.packets += p;
  });
  return { groups, total };
}

/** The top `n` groups of the scan's matching rows by `dims` and `metric`. */
export async function topN(
  scan: Omit<MatchScanOptions, 'columns'>,
  dims: readonly Dimension[],
  metric: Metric,
  n: number,
  opts: { geo?: GeoLookup; times?: boolean } = {},
): Promise<TopAnswer> {
  const layout = keyLayout(dims, opts.geo);
  const { groups, total } = await groupMatches(scan, layout, opts.times);
  const slots = topSlots(groups, METRIC_INDEX[metric], n);
  const words = new Uint32Array(layout.width);
  const rows: TopRow[] = slots.map((s) => {
    groups.key(s, words, 0);
    return {
      key: keyValues(layout, words, 0),
      flows: groups.value(s, FLOWS),
      packets: groups.value(s, PACKETS),
      bytes: groups.value(s, BYTES),
      ...(opts.times ? { first: groups.value(s, FIRST), last: groups.value(s, LAST) } : {}),
    };
  });
  const other: Counts = { ...total };
  for (const r of rows) {
    other.flows -= r.flows;
    other.packets -= r.packets;
    other.bytes -= r.bytes;
  }
  // Counts past 2^53 (a hostile exporter's) are float64 sums: rounding must not make `other` negative.
  other.packets = Math.max(0, other.packets);
  other.bytes = Math.max(0, other.bytes);
  return { rows, other, total, groups: groups.size };
}
