/** Rows and contents of group tables, for the tests of group-table.ts and top-n.ts. */
import { BYTES, FIRST, FLOWS, LAST, PACKETS, type Groups } from '../../../storage/flow-query/group-table.js';
import { prng } from '../capture/flows.js';

/** `n` rows of keys `width` words wide (from `key`), with counters, start and end, reproducible from `seed`. */
export function groupRows(n: number, width: number, key: (r: () => number) => number[], seed: number) {
  const r = prng(seed);
  const keys = new Uint32Array(n * width);
  const bytes = new Float64Array(n);
  const packets = new Float64Array(n);
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    keys.set(key(r), i * width);
    bytes[i] = Math.floor(r() * 1e6);
    packets[i] = 1 + Math.floor(r() * 100);
    start[i] = 1e12 + Math.floor(r() * 1e6);
    end[i] = start[i]! + Math.floor(r() * 1e5);
  }
  const idx = Uint32Array.from({ length: n }, (_, i) => i);
  return { keys, idx, rows: { bytes, packets, start, end } };
}

/** Every group of `g` by its key words (joined with '.'), with its values (first and last with `times`). */
export function contentsByKey(g: Groups, times: boolean): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const key = new Uint32Array(g.width);
  g.forEach((s) => {
    g.key(s, key, 0);
    out.set(
      key.join('.'),
      [BYTES, PACKETS, FLOWS, ...(times ? [FIRST, LAST] : [])].map((m) => g.value(s, m as 0)),
    );
  });
  return out;
}
