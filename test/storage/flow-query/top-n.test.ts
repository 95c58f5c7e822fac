import { describe, expect, it } from 'vitest';
import {
  AddressGroups,
  BYTES,
  FIRST,
  FLOWS,
  KeyGroups,
  LAST,
  PACKETS,
  WordGroups,
  type Groups,
} from '../../../storage/flow-query/group-table.js';
import { addGroups, flatGroups } from '../../../storage/flow-query/top-n.js';
import { prng } from '../capture/flows.js';

/** Every group of `g` by its key words, with its values (first and last with `times`). */
function byKey(g: Groups, times: boolean): Map<string, number[]> {
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

describe("a worker's groups, flattened and added back", () => {
  const kinds: Array<{ name: string; width: number; make: (t: boolean) => Groups; key: (r: () => number) => number[] }> = [
    { name: 'one-word', width: 1, make: (t) => new WordGroups(t, 64), key: (r) => [Math.floor(r() * 150_000)] },
    {
      name: 'address',
      width: 4,
      make: (t) => new AddressGroups(t),
      key: (r) => (r() < 0.8 ? [0, 0, 0xffff, Math.floor(r() * 100_000)] : [0x20010db8, 0, 7, Math.floor(r() * 40_000)]),
    },
    {
      name: 'several-word',
      width: 3,
      make: (t) => new KeyGroups(3, t, 4096),
      key: (r) => [Math.floor(r() * 9), 6, Math.floor(r() * 40_000)],
    },
  ];
  for (const kind of kinds) {
    for (const times of [false, true]) {
      it(`${kind.name} groups${times ? ' with first and last' : ''}: the sum of both threads' rows, over several turns of the event loop`, async () => {
        const r = prng(3);
        const n = 200_000;
        const keys = new Uint32Array(n * kind.width);
        const bytes = new Float64Array(n);
        const packets = new Float64Array(n);
        const start = new Float64Array(n);
        const end = new Float64Array(n);
        for (let i = 0; i < n; i++) {
          keys.set(kind.key(r), i * kind.width);
          bytes[i] = Math.floor(r() * 1e6);
          packets[i] = 1 + Math.floor(r() * 100);
          start[i] = 1e12 + Math.floor(r() * 1e6);
          end[i] = start[i]! + Math.floor(r() * 1e5);
        }
        const rows = { bytes, packets, start, end };
        const half = n / 2;
        const idx = Uint32Array.from({ length: n }, (_, i) => i);
        const whole = kind.make(times);
        whole.addRows(keys, n, idx, rows, times);
        const here = kind.make(times);
        here.addRows(keys, half, idx, rows, times);
        const there = kind.make(times);
        there.addRows(keys.subarray(half * kind.width), half, idx.subarray(half), rows, times);
        const flat = flatGroups(there, times);
        expect(flat.size).toBe(there.size);
        expect(flat.keys.length).toBe(flat.size * kind.width);
        expect(flat.values.length).toBe(flat.size * (times ? 5 : 3));
        // More groups than one turn of the event loop adds: the event loop gets turns meanwhile.
        expect(flat.size).toBeGreaterThan(1 << 16);
        let turns = 0;
        let ticking = true;
        const tick = (): void => {
          if (!ticking) return;
          turns++;
          setImmediate(tick);
        };
        setImmediate(tick);
        await addGroups(here, structuredClone(flat));
        ticking = false;
        expect(turns).toBeGreaterThan(0);
        expect(here.size).toBe(whole.size);
        expect(byKey(here, times)).toEqual(byKey(whole, times));
      });
    }
  }
});
