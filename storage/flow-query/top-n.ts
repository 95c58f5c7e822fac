/**
 * Top-N: the matching flows of a window grouped by one to three dimensions,
 * the N largest groups by a metric, and the rest as `other`, so that the
 * rows plus `other` add up to the total (what `nfdump -s dim/metric -n N`
 * prints, and more dimensions at once). On a window of enough blocks the
 * grouping is shared with a worker thread (groupMatches, scan-pool.ts).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CaptureFileError } from '../capture/format.js';
import { GeoDataError, type GeoDataErrorCode } from '../geo/geo-error.js';
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
  type Counts,
  type Groups,
  type MetricIndex,
  type ValueIndex,
} from './group-table.js';
import { BlockClaims, blockLayout, listedBlocks } from './block-claims.js';
import { scanMatches, type BlockPlan, type BlockRef, type MatchScanOptions } from './match-scan.js';
import {
  ScanJobError,
  ScanWorkerLostError,
  type FlatGroups,
  type GeoSource,
  type GroupJobResult,
  type JobError,
  type ScanTask,
  type ScanWorkers,
} from './scan-pool.js';

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

// Defined beside the group tables, whose totals() answer one; top-N answers are made of them.
export type { Counts } from './group-table.js';

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
  if (only?.dense !== undefined) return new DenseGroups(only.dense, times);
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

/** How groupMatches may share the blocks out with the worker thread of a pool (scan-pool.ts). */
export interface SplitOptions {
  workers: ScanWorkers;
  /** The text the scan's filter was compiled from: the worker compiles it again. */
  filter?: string;
  /** Where the worker opens geo data, for a query that reads it (dimensions or filter). */
  geo?: GeoSource;
  /** Windows of fewer blocks are scanned in this thread alone: the worker's round trip costs more than it saves. Default 8. */
  minBlocks?: number;
  /** The worker stops taking blocks once it holds this many groups (default WORKER_MAX_GROUPS). */
  workerGroups?: number;
}

/** Blocks a window needs before a scan is split between two threads. */
export const MIN_SPLIT_BLOCKS = 8;

/**
 * Groups past which the worker takes no more blocks and leaves the rest to the calling thread:
 * adding a group back costs about as much as counting its rows did (a random access into a large
 * table, which two threads hardly do faster than one), and the worker's table and its copy are
 * memory on top of the caller's. Keys with few flows each (every source address of an hour) are
 * thus mostly counted in one table.
 */
export const WORKER_MAX_GROUPS = 1 << 20;

/** Who took a block of a split scan (block-claims.ts): the calling thread, or the worker. */
const CALLER_TAKER = 1;
export const WORKER_TAKER = 2;

/**
 * Groups every matching row of the scan by the layout; `times` also keeps each group's first
 * start and last end. With `split` (and the dimensions it was made for), a worker thread groups
 * blocks meanwhile, and its groups are added to these: the same answer, in about half the time on
 * two cores. Throws TooManyGroupsError past the groups one query may hold.
 */
export async function groupMatches(
  scan: Omit<MatchScanOptions, 'columns'>,
  layout: KeyLayout,
  times = false,
  split?: SplitOptions & { dims: readonly Dimension[] },
): Promise<{ groups: Groups; total: Counts }> {
  const maxGroups = groupLimit(layout, times);
  const out = split?.workers.available ? await groupSplit(scan, layout, times, split) : await groupPart(scan, layout, times);
  // Each thread kept its own groups under the limit; together they may not be.
  if (out.groups.size > maxGroups) throw tooManyGroups(maxGroups);
  return out;
}

/**
 * The number of matching rows of the scan, read from the filter's columns alone; with `split`, the
 * worker thread counts blocks meanwhile, as groupMatches shares them.
 */
export async function countMatching(scan: Omit<MatchScanOptions, 'columns'>, split?: SplitOptions): Promise<number> {
  const layout = keyLayout([], undefined);
  const out = split?.workers.available
    ? await groupSplit(scan, layout, false, { ...split, dims: [], countOnly: true })
    : await groupPart(scan, layout, false, Infinity, true);
  return out.total.flows;
}

/** Most groups a query may hold for a layout: a group takes its key words and 3 or 5 float64s, in a table kept at most half full. */
function groupLimit(layout: KeyLayout, times: boolean): number {
  return Math.floor(MAX_GROUP_BYTES / (2 * (layout.width * 4 + (times ? 40 : 24))));
}

function tooManyGroups(maxGroups: number): TooManyGroupsError {
  return new TooManyGroupsError(
    `more than ${maxGroups.toLocaleString('en-US')} groups: narrow the window, add a filter, or group by fewer or shorter dimensions (an address prefix)`,
  );
}

/**
 * Groups the matching rows of the scan (of the blocks its `part` hands out, when it has one) in
 * this thread; with `stopAt`, takes no more blocks once it may hold that many groups (`held`).
 */
export async function groupPart(
  scan: Omit<MatchScanOptions, 'columns'>,
  layout: KeyLayout,
  times = false,
  stopAt = Infinity,
  countOnly = false,
): Promise<{ groups: Groups; total: Counts }> {
  const groups = newGroups(layout, times);
  if (countOnly) {
    const total: Counts = { flows: 0, packets: 0, bytes: 0 };
    // The matching rows counted, nothing else: no column besides the filter's is decoded.
    await scanMatches({ ...scan, columns: [], countOnly: true }, (m) => {
      total.flows += m.n;
    });
    return { groups, total };
  }
  let keys = new Uint32Array(4096 * layout.width);
  const maxGroups = groupLimit(layout, times);
  await scanMatches({ ...scan, columns: layoutColumns(layout, times) }, (m) => {
    // `held` may count rows not yet sorted in; the exact count is taken only near the limit.
    if (groups.held > maxGroups && groups.size > maxGroups) throw tooManyGroups(maxGroups);
    if (keys.length < m.n * layout.width) keys = new Uint32Array(m.n * layout.width);
    writeKeys(layout, m, keys);
    groups.addRows(keys, m.n, m.idx, m.batch.cols, times);
    return groups.held < stopAt;
  });
  // Every matching row is in exactly one group: their sums are the totals (no second pass over the rows).
  return { groups, total: groups.totals() };
}

/**
 * groupMatches over two threads: once this thread's scan knows the window holds enough blocks,
 * the worker is given the same scan, and each thread takes the next block as it goes. When this
 * thread is done and the worker has not begun (it is busy with another query's job), the job is
 * withdrawn: this thread took every block. The blocks of a lost worker are scanned here again;
 * an error the worker threw is thrown here, as its own class.
 */
async function groupSplit(
  scan: Omit<MatchScanOptions, 'columns'>,
  layout: KeyLayout,
  times: boolean,
  split: SplitOptions & { dims: readonly Dimension[]; countOnly?: boolean },
): Promise<{ groups: Groups; total: Counts }> {
  const countOnly = split.countOnly === true;
  let task: ScanTask | undefined;
  let claims: BlockClaims | undefined;
  let planLayout = '';
  let failed = false;
  // This thread's scan ends early when the worker's fails: the answer is that error.
  const stop = new AbortController();
  const part = (blocks: readonly BlockRef[]): BlockPlan | undefined => {
    if (blocks.length < (split.minBlocks ?? MIN_SPLIT_BLOCKS)) return undefined;
    const memory = BlockClaims.memory(blocks.length);
    claims = new BlockClaims(memory, CALLER_TAKER, true);
    planLayout = blockLayout(blocks);
    task = split.workers.submit({
      files: [...scan.files],
      from: scan.from,
      to: scan.to,
      filter: split.filter?.trim() ? split.filter : undefined,
      dims: [...split.dims],
      times,
      claims: memory,
      layout: planLayout,
      stopAt: split.workerGroups ?? WORKER_MAX_GROUPS,
      geo: split.geo,
      countOnly,
    });
    task.result.catch((err: unknown) => {
      if (err instanceof ScanJobError) {
        failed = true;
        stop.abort();
      }
    });
    return claims;
  };
  let here: { groups: Groups; total: Counts };
  try {
    here = await groupPart({ ...scan, part, signal: anySignal(scan.signal, stop.signal) }, layout, times, Infinity, countOnly);
  } catch (err) {
    task?.cancel();
    throw err;
  }
  if (!task || !claims) return here;
  if (scan.signal?.aborted) {
    // Stopped by its caller: what was grouped here is the answer.
    task.cancel();
    return here;
  }
  if (!failed && !task.started) task.cancel();
  let there: GroupJobResult | undefined;
  try {
    there = await task.result;
  } catch (err) {
    if (err instanceof ScanJobError) throw jobError(err.error);
    if (!(err instanceof ScanWorkerLostError)) throw err;
  }
  if (!there) {
    // Withdrawn before it began, or lost: what the worker took (if anything) is scanned here,
    // by the same block numbers when the files still hold the same blocks.
    const lost = claims.lostTo(WORKER_TAKER);
    if (lost.length > 0) {
      const plan = listedBlocks(lost, false, { blocks: claims.blocks, layout: planLayout });
      const rest = await groupPart({ ...scan, part: plan }, layout, times, Infinity, countOnly);
      // The files changed meanwhile (an hour sealed and renamed, one removed): the numbers no
      // longer name the same blocks, so the whole window is grouped again, here alone.
      if (!plan.fitted) return groupPart(scan, layout, times, Infinity, countOnly);
      await addGroups(here.groups, flatGroups(rest.groups, times));
      addTotal(here.total, rest.total);
    }
    return here;
  }
  // The worker opened the same files: they are counted once, by this thread's scan.
  for (const k of Object.keys(there.stats) as Array<keyof typeof there.stats>) {
    if (k !== 'filesOpened') scan.stats[k] += there.stats[k];
  }
  for (const e of there.errors) scan.onError?.(new CaptureFileError(e.code, e.message, e.path, e.offset));
  await addGroups(here.groups, there.groups);
  addTotal(here.total, there.total);
  return here;
}

function addTotal(into: Counts, from: Counts): void {
  into.flows += from.flows;
  into.packets += from.packets;
  into.bytes += from.bytes;
}

/** Aborted when either is. */
function anySignal(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}

/** Groups as flat arrays (what a worker sends back). */
export function flatGroups(groups: Groups, times: boolean): FlatGroups {
  // The tables that can copy their groups out whole (grouped with `times` as asked, so laid out alike).
  const stride = times ? LAST + 1 : FLOWS + 1;
  if (groups instanceof WordGroups) {
    const { keys, values, size } = groups.flat();
    if (values.length === size * stride) return { size, width: 1, times, keys, values };
  }
  if (groups instanceof AddressGroups) {
    const { v4, other } = groups.flatParts();
    if (v4.values.length === v4.size * stride && other.values.length === other.size * stride) {
      return { size: other.size, width: 4, times, keys: other.keys, values: other.values, v4 };
    }
  }
  const width = groups.width;
  const keys = new Uint32Array(groups.size * width);
  const values = new Float64Array(groups.size * stride);
  let r = 0;
  groups.forEach((s) => {
    groups.key(s, keys, r * width);
    for (let k = 0; k < stride; k++) values[r * stride + k] = groups.value(s, k as ValueIndex);
    r++;
  });
  return { size: r, width, times, keys, values };
}

/** Groups merged per turn of the event loop. */
const ADD_PER_TURN = 1 << 16;

/** Adds flat groups to `groups` (flows, packets, bytes summed; the earlier first and later last kept), giving the event loop turns. */
export async function addGroups(groups: Groups, flat: FlatGroups): Promise<void> {
  const stride = flat.times ? LAST + 1 : FLOWS + 1;
  const v4 = flat.v4;
  if (v4 && v4.size > 0) {
    // An address table's IPv4 groups, one word each: as they are into another address table.
    const mapped = Uint32Array.of(0, 0, 0xffff, 0);
    await inRuns(v4.size, (r, n) => {
      const keys = v4.keys.subarray(r);
      const values = v4.values.subarray(r * stride);
      if (groups instanceof AddressGroups) groups.addV4Groups(keys, values, n, flat.times);
      else
        for (let g = 0; g < n; g++) {
          mapped[3] = keys[g]!;
          groups.addGroup(mapped, 0, values, g * stride, flat.times);
        }
    });
    if (flat.size > 0) await yieldToLoop();
  }
  await inRuns(flat.size, (r, n) => {
    const keys = flat.keys.subarray(r * flat.width);
    const values = flat.values.subarray(r * stride);
    // The partitioned table and the address table take another's groups a run at a time.
    if (groups instanceof WordGroups || groups instanceof AddressGroups) groups.addGroups(keys, values, n, flat.times);
    else for (let g = 0; g < n; g++) groups.addGroup(keys, g * flat.width, values, g * stride, flat.times);
  });
}

/** Calls `add(from, count)` for runs of ADD_PER_TURN of `size` items, with a turn of the event loop between runs. */
async function inRuns(size: number, add: (from: number, count: number) => void): Promise<void> {
  for (let r = 0; r < size; r += ADD_PER_TURN) {
    if (r > 0) await yieldToLoop();
    add(r, Math.min(ADD_PER_TURN, size - r));
  }
}

/** The error a job threw in the worker, as its own class where the caller tells them apart. */
function jobError(e: JobError): Error {
  switch (e.name) {
    case 'TooManyGroupsError':
      return new TooManyGroupsError(e.message);
    case 'GeoDataError': {
      const path = e.path ?? '';
      const message = e.message.startsWith(`${path}: `) ? e.message.slice(path.length + 2) : e.message;
      return new GeoDataError(e.code as GeoDataErrorCode, path, message);
    }
    default: {
      const err = new Error(`scan worker: ${e.message}`);
      err.name = e.name;
      return err;
    }
  }
}

/** The top `n` groups of the scan's matching rows by `dims` and `metric`. */
export async function topN(
  scan: Omit<MatchScanOptions, 'columns'>,
  dims: readonly Dimension[],
  metric: Metric,
  n: number,
  opts: { geo?: GeoLookup; times?: boolean; split?: SplitOptions } = {},
): Promise<TopAnswer> {
  const layout = keyLayout(dims, opts.geo);
  const { groups, total } = await groupMatches(scan, layout, opts.times, opts.split && { ...opts.split, dims });
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
