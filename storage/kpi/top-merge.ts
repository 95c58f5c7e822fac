/**
 * Exact top-N over several hours from per-hour rankings read level by level.
 *
 * Every hour keeps ALL its keys, ranked by the metric and cut into levels
 * (the best 256 rows, then up to 4 096, 65 536, …). Reading only the first
 * levels is enough when this proof holds, with T_h the metric of the best
 * row of hour h not read yet (0 once h is read to the end):
 *
 *  - a key read in every hour with T_h > 0 has its exact total (it cannot
 *    hide more rows: each hour holds a key once);
 *  - any other key's total is at most (what was read of it) + Σ T_h over the
 *    hours where it was not read; a key read nowhere is at most Σ T_h;
 *  - the N best keys by what was read are the answer when each of them is
 *    exact and no other key's bound reaches the N-th (equal bounds are
 *    settled by key order, as the ranking is).
 *
 * When the proof fails, every hour with T_h > 0 reads its next level and the
 * proof is tried again; with every level read it holds trivially. So the
 * answer is always exact; levels only decide how much is read (docs/netflow.md).
 */
import { compareKeys, type Metric, type RankedRows } from './key-table.js';

/** One level's rows and the bound after them. */
export interface LevelRows {
  rows: RankedRows;
  next: number;
}

/** One hour's ranking of one dimension, readable level by level. */
export interface RankedSource {
  /**
   * Rows of `level` (levels are consecutive rank ranges, best first) and the
   * metric of the best row after them (0 when none); undefined past the end.
   * An hour held elsewhere (an open hour in the KPI worker) answers later.
   */
  level(level: number): LevelRows | undefined | Promise<LevelRows | undefined>;
}

/** Rank boundaries of the levels: rows [LEVEL_ENDS[k-1], LEVEL_ENDS[k]) form level k. */
export const LEVEL_ENDS = [256, 4096, 65_536, 1_048_576, 16_777_216, Number.MAX_SAFE_INTEGER] as const;

interface Acc {
  key: Uint8Array;
  text: string;
  vals: [number, number, number];
  /** Σ T_h over the hours where this key was read (recomputed per round). */
  covered: number;
}

interface SourceState {
  src: RankedSource;
  /** The accumulators of every row read from this source (each key once per source). */
  seen: Acc[];
  next: number;
  levels: number;
  done: boolean;
}

/** A key as a string for the map: two bytes per UTF-16 unit, no Buffer per row. */
function keyText(keys: Uint8Array, at: number, width: number): string {
  let s = '';
  for (let i = 0; i < width; i += 2) s += String.fromCharCode((keys[at + i]! << 8) | (keys[at + i + 1] ?? 0));
  return s;
}

/** Keys read in the last merge, for tests and the benchmark. */
export interface MergeStats {
  rounds: number;
  rowsRead: number;
}

/** The exact top `n` keys by `metric` summed over `sources`, best first, ties by key bytes ascending. */
export async function mergeTop(
  sources: readonly RankedSource[],
  metric: Metric,
  n: number,
  keyWidth: number,
  stats?: MergeStats,
): Promise<RankedRows> {
  const states: SourceState[] = sources.map((src) => ({ src, seen: [], next: 0, levels: 0, done: false }));
  const acc = new Map<string, Acc>();
  const read = async (s: SourceState): Promise<void> => {
    const got = await s.src.level(s.levels);
    s.levels++;
    if (!got) {
      s.done = true;
      s.next = 0;
      return;
    }
    s.next = got.next;
    if (got.next === 0) s.done = true;
    if (stats) stats.rowsRead += got.rows.length;
    const { rows } = got;
    for (let i = 0; i < rows.length; i++) {
      const text = keyText(rows.keys, i * keyWidth, keyWidth);
      let a = acc.get(text);
      if (!a) {
        a = { key: rows.keys.subarray(i * keyWidth, (i + 1) * keyWidth), text, vals: [0, 0, 0], covered: 0 };
        acc.set(text, a);
      }
      a.vals[0] += rows.vals[i * 3]!;
      a.vals[1] += rows.vals[i * 3 + 1]!;
      a.vals[2] += rows.vals[i * 3 + 2]!;
      s.seen.push(a);
    }
  };
  for (const s of states) await read(s);

  for (let round = 1; ; round++) {
    if (stats) stats.rounds = round;
    let sumT = 0;
    for (const s of states) sumT += s.done ? 0 : s.next;
    for (const a of acc.values()) a.covered = 0;
    if (sumT > 0) {
      for (const s of states) {
        if (s.done || s.next === 0) continue;
        for (const a of s.seen) a.covered += s.next;
      }
    }
    const all = [...acc.values()].sort((x, y) => y.vals[metric] - x.vals[metric] || compareKeys(x.key, 0, y.key, 0, keyWidth));
    const top = all.slice(0, n);
    if (proven(all, top, n, sumT, metric, keyWidth)) return toRows(top, keyWidth);
    for (const s of states) if (!s.done) await read(s);
  }
}

function proven(all: Acc[], top: Acc[], n: number, sumT: number, metric: Metric, keyWidth: number): boolean {
  if (sumT === 0) return true;
  if (top.length < n) return false;
  if (top.some((a) => a.covered !== sumT)) return false;
  const last = top[top.length - 1]!;
  const floor = last.vals[metric];
  // A key not read anywhere could be worth up to sumT and could sort before `last` on a tie.
  if (sumT >= floor) return false;
  for (let i = n; i < all.length; i++) {
    const a = all[i]!;
    const upper = a.vals[metric] + (sumT - a.covered);
    if (upper > floor) return false;
    if (upper === floor && a.covered !== sumT && compareKeys(a.key, 0, last.key, 0, keyWidth) < 0) return false;
  }
  return true;
}

function toRows(top: Acc[], keyWidth: number): RankedRows {
  const out: RankedRows = {
    keyWidth,
    length: top.length,
    keys: new Uint8Array(top.length * keyWidth),
    vals: new Float64Array(top.length * 3),
  };
  top.forEach((a, i) => {
    out.keys.set(a.key, i * keyWidth);
    out.vals.set(a.vals, i * 3);
  });
  return out;
}

/** A RankedSource over levels already cut (levels.ts). */
export function levelsSource(levels: ReadonlyArray<{ rows: RankedRows; next: number }>): RankedSource {
  return { level: (level) => levels[level] };
}
