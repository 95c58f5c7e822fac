/**
 * The rows a filter can match in a block whose rows are ordered by protocol,
 * then destination port (ROW_ORDER.protoDstPort: what sealing writes), found
 * by bisection instead of a test per row.
 *
 * In such a block, rows a … b−1 hold protocols proto[a] … proto[b−1]; when
 * those two are equal they also hold destination ports dstPort[a] …
 * dstPort[b−1]. Those bounds are what the filter's block verdict is asked
 * with (other columns: the block's own min/max): 'none' drops the rows,
 * 'all' takes them whole, 'some' splits them in two, down to rows of one
 * protocol and port or a few rows, which are then tested row by row (or,
 * for a filter of protocol and port alone, decided a run of one key at a
 * time). A filter on the port or the protocol (`dst port 443`, `proto udp
 * and dst port 53`) so settles a block of 65 536 rows with a few hundred
 * verdicts, testing none of its rows.
 */
import type { ColumnName } from '../capture/format.js';
import type { BlockStats, BlockVerdict } from './filter-compile.js';

/** Value i of a column (decoded, or read from its stored bytes). */
export type ValueAt = (i: number) => number;

/** Ranges of rows longer than this are split further while the verdict is 'some'. */
const SPLIT_ABOVE = 32;

/**
 * Verdicts asked per row of a block, at most (1 in 64, and 64 in any block): a verdict walks
 * the filter's tree, some hundred nanoseconds against a few for testing a row, so a filter
 * that cuts the rows into many pieces is left to the row tests.
 */
const VERDICTS_PER_ROW_SHIFT = 6;
const MIN_VERDICTS = 64;

/** What a bisection found: ranges [from[k], to[k]), ascending; `whole[k]` when every row matches, else they are to be tested. */
export interface SortedRanges {
  count: number;
  from: Uint32Array;
  to: Uint32Array;
  whole: Uint8Array;
}

/** Whether a filter's columns let a bisection over protocol and destination port drop or take rows. */
export function bisectionHelps(filterColumns: readonly ColumnName[]): boolean {
  return filterColumns.includes('proto') || filterColumns.includes('dstPort');
}

/** Whether a filter reads protocol and destination port alone, so that a bisection decides every row. */
export function keysOnly(filterColumns: readonly ColumnName[]): boolean {
  return filterColumns.every((c) => c === 'proto' || c === 'dstPort');
}

/**
 * The ranges of rows [0, rows) that may match, for a block ordered by protocol then destination
 * port; `out` is reused (grown as needed). `verdict` is the filter's block verdict; `blockStats`
 * the block's own bounds for the other columns (and for the port where protocols differ).
 * With `decideKeys` (the filter reads protocol and port alone: keysOnly) the last few rows of
 * a range are decided too, a verdict per protocol and port (per protocol when not `byPort`: the
 * filter does not read the port), so that no range is left to test.
 * Undefined when the bisection would ask more verdicts than VERDICTS_PER_ROW_SHIFT allows:
 * the caller then tests every row.
 */
export function sortedRanges(
  rows: number,
  protoAt: ValueAt,
  portAt: ValueAt,
  blockStats: BlockStats,
  verdict: (stats: BlockStats) => BlockVerdict,
  out?: SortedRanges,
  decideKeys = false,
  byPort = true,
): SortedRanges | undefined {
  const r: SortedRanges = out ?? { count: 0, from: new Uint32Array(64), to: new Uint32Array(64), whole: new Uint8Array(64) };
  r.count = 0;
  if (rows === 0) return r;
  let budget = Math.max(MIN_VERDICTS, rows >>> VERDICTS_PER_ROW_SHIFT);
  let protoLo = 0;
  let protoHi = 0;
  let portLo = 0;
  let portHi = 0;
  let portKnown = false;
  // The bounds handed to the verdict, one object per column reused (a verdict reads them at once).
  const protoRange = { min: 0, max: 0 };
  const portRange = { min: 0, max: 0 };
  const stats: BlockStats = (column) => {
    if (column === 'proto') {
      protoRange.min = protoLo;
      protoRange.max = protoHi;
      return protoRange;
    }
    if (column === 'dstPort' && portKnown) {
      portRange.min = portLo;
      portRange.max = portHi;
      return portRange;
    }
    return blockStats(column);
  };
  const emit = (from: number, to: number, whole: boolean): void => {
    const k = r.count;
    // Adjacent ranges of the same kind are one.
    if (k > 0 && r.to[k - 1] === from && (r.whole[k - 1] === 1) === whole) {
      r.to[k - 1] = to;
      return;
    }
    if (k === r.from.length) {
      const grow = <T extends Uint32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      r.from = grow(r.from, (n) => new Uint32Array(n));
      r.to = grow(r.to, (n) => new Uint32Array(n));
      r.whole = grow(r.whole, (n) => new Uint8Array(n));
    }
    r.from[k] = from;
    r.to[k] = to;
    r.whole[k] = whole ? 1 : 0;
    r.count = k + 1;
  };
  // Depth-first over [a, b), left half first, so ranges come out ascending (an explicit stack: no recursion).
  const stackA: number[] = [0];
  const stackB: number[] = [rows];
  while (stackA.length > 0) {
    const a = stackA.pop()!;
    const b = stackB.pop()!;
    if (--budget < 0) return undefined;
    protoLo = protoAt(a);
    protoHi = protoAt(b - 1);
    portKnown = protoLo === protoHi;
    if (portKnown) {
      portLo = portAt(a);
      portHi = portAt(b - 1);
    }
    const v = verdict(stats);
    if (v === 'none') continue;
    if (v === 'all') {
      emit(a, b, true);
      continue;
    }
    if (portKnown && portLo === portHi) {
      emit(a, b, false);
      continue;
    }
    if (b - a <= SPLIT_ABOVE) {
      if (!decideKeys) {
        emit(a, b, false);
        continue;
      }
      // A filter of protocol and port alone: a verdict per run of one key decides each row (of
      // one protocol, when the filter does not read the port).
      for (let x = a; x < b;) {
        protoLo = protoHi = protoAt(x);
        portKnown = byPort;
        if (byPort) portLo = portHi = portAt(x);
        let y = x + 1;
        while (y < b && protoAt(y) === protoLo && (!byPort || portAt(y) === portLo)) y++;
        if (--budget < 0) return undefined;
        const w = verdict(stats);
        if (w !== 'none') emit(x, y, w === 'all');
        x = y;
      }
      continue;
    }
    const mid = a + ((b - a) >>> 1);
    stackA.push(mid, a);
    stackB.push(b, mid);
  }
  return r;
}
