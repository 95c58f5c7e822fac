/**
 * Cuts a ranking into the levels of top-merge.ts without sorting it: the
 * value at each level boundary is found by selection (linear time), rows are
 * placed by value, and only rows tied across a boundary are ordered by key.
 * A million keys take tens of milliseconds instead of seconds for a full sort.
 */
import { compareKeys, type Metric, type RankedRows } from './key-table.js';
import { LEVEL_ENDS } from './top-merge.js';

/** One level: its rows (level 0 best first; deeper levels in no order) and the metric of the best row after it (0 = none). */
export interface Level {
  rows: RankedRows;
  next: number;
}

/** The k-th largest value (k from 0) of `a`, reordering `a` in place (quickselect). */
function kthLargest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    // Median of three keeps sorted and reversed input linear.
    const mid = (lo + hi) >>> 1;
    const x = a[lo]!;
    const y = a[mid]!;
    const z = a[hi]!;
    const pivot = x > y ? (y > z ? y : x > z ? z : x) : x > z ? x : y > z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

function emptyRows(keyWidth: number, n: number): RankedRows {
  return { keyWidth, length: n, keys: new Uint8Array(n * keyWidth), vals: new Float64Array(n * 3) };
}

/** Orders rows by metric descending, then key ascending (for small sets). */
export function sortRows(rows: RankedRows, metric: Metric): RankedRows {
  const w = rows.keyWidth;
  const idx = Array.from({ length: rows.length }, (_, i) => i);
  idx.sort(
    (x, y) => rows.vals[y * 3 + metric]! - rows.vals[x * 3 + metric]! || compareKeys(rows.keys, x * w, rows.keys, y * w, w),
  );
  const out = emptyRows(w, rows.length);
  idx.forEach((from, to) => {
    out.keys.set(rows.keys.subarray(from * w, from * w + w), to * w);
    out.vals.set(rows.vals.subarray(from * 3, from * 3 + 3), to * 3);
  });
  return out;
}

/** Cuts rows given in any order into levels by (metric descending, key ascending). */
export function cutLevels(all: RankedRows, metric: Metric): Level[] {
  const n = all.length;
  const w = all.keyWidth;
  if (n === 0) return [];
  const ends = LEVEL_ENDS.filter((e) => e < n);
  if (ends.length === 0) return [{ rows: sortRows(all, metric), next: 0 }];

  const work = new Float64Array(n);
  for (let i = 0; i < n; i++) work[i] = all.vals[i * 3 + metric]!;
  // Value of the last row inside and of the first row past each boundary.
  const lastIn = ends.map((e) => kthLargest(work, e - 1));
  const firstOut = ends.map((e) => kthLargest(work, e));
  const straddling = new Set<number>();
  ends.forEach((_, k) => {
    if (lastIn[k] === firstOut[k]) straddling.add(lastIn[k]!);
  });

  const levelOf = new Uint8Array(n);
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const v = all.vals[i * 3 + metric]!;
    if (straddling.has(v)) {
      let g = groups.get(v);
      if (!g) groups.set(v, (g = []));
      g.push(i);
      continue;
    }
    let level = 0;
    for (let k = 0; k < ends.length; k++) if (v < lastIn[k]!) level = k + 1;
    levelOf[i] = level;
  }
  for (const [v, group] of groups) {
    let above = 0;
    for (let i = 0; i < n; i++) if (all.vals[i * 3 + metric]! > v) above++;
    group.sort((x, y) => compareKeys(all.keys, x * w, all.keys, y * w, w));
    group.forEach((row, j) => {
      const rank = above + j;
      let level = 0;
      for (let k = 0; k < ends.length; k++) if (rank >= ends[k]!) level = k + 1;
      levelOf[row] = level;
    });
  }

  const counts = new Array<number>(ends.length + 1).fill(0);
  for (let i = 0; i < n; i++) counts[levelOf[i]!]!++;
  const levels: Level[] = counts.map((c, k) => ({ rows: emptyRows(w, c), next: k < ends.length ? firstOut[k]! : 0 }));
  const fill = new Array<number>(levels.length).fill(0);
  for (let i = 0; i < n; i++) {
    const l = levelOf[i]!;
    const at = fill[l]!++;
    const rows = levels[l]!.rows;
    rows.keys.set(all.keys.subarray(i * w, i * w + w), at * w);
    rows.vals.set(all.vals.subarray(i * 3, i * 3 + 3), at * 3);
  }
  levels[0]!.rows = sortRows(levels[0]!.rows, metric);
  return levels;
}
