import { describe, expect, it } from 'vitest';
import { AddressGroups, KeyGroups, WordGroups, type Groups } from '../../../storage/flow-query/group-table.js';
import { addGroups, flatGroups } from '../../../storage/flow-query/top-n.js';
import { contentsByKey, groupRows } from './group-rows.js';

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
        const n = 200_000;
        const { keys, idx, rows } = groupRows(n, kind.width, kind.key, 3);
        const half = n / 2;
        const whole = kind.make(times);
        whole.addRows(keys, n, idx, rows, times);
        const here = kind.make(times);
        here.addRows(keys, half, idx, rows, times);
        const there = kind.make(times);
        there.addRows(keys.subarray(half * kind.width), half, idx.subarray(half), rows, times);
        const flat = flatGroups(there, times);
        const v4 = flat.v4 ?? { size: 0, keys: new Uint32Array(0), values: new Float64Array(0) };
        // An address table's IPv4 groups travel apart, one word each.
        expect(v4.size > 0).toBe(kind.name === 'address');
        expect(flat.size + v4.size).toBe(there.size);
        expect(flat.keys.length).toBe(flat.size * kind.width);
        expect(flat.values.length).toBe(flat.size * (times ? 5 : 3));
        expect(v4.keys.length).toBe(v4.size);
        expect(v4.values.length).toBe(v4.size * (times ? 5 : 3));
        // More groups than one turn of the event loop adds: the event loop gets turns meanwhile.
        expect(flat.size + v4.size).toBeGreaterThan(1 << 16);
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
        expect(contentsByKey(here, times)).toEqual(contentsByKey(whole, times));
      });
    }
  }

  it("adds an address table's groups, IPv4 apart, into a table of four-word keys as into an address table", async () => {
    const n = 50_000;
    const key = (r: () => number): number[] =>
      r() < 0.7 ? [0, 0, 0xffff, Math.floor(r() * 20_000)] : [0x20010db8, 0, 7, Math.floor(r() * 9_000)];
    const { keys, idx, rows } = groupRows(n, 4, key, 5);
    const from = new AddressGroups(true);
    from.addRows(keys, n, idx, rows, true);
    const flat = flatGroups(from, true);
    expect(flat.v4?.size).toBeGreaterThan(0);
    const address = new AddressGroups(true);
    const words = new KeyGroups(4, true);
    await addGroups(address, structuredClone(flat));
    await addGroups(words, structuredClone(flat));
    expect(contentsByKey(words, true)).toEqual(contentsByKey(from, true));
    expect(contentsByKey(address, true)).toEqual(contentsByKey(from, true));
  });
});
