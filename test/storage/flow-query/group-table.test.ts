import { describe, expect, it } from 'vitest';
import {
  AddressGroups,
  BYTES,
  type Best,
  DenseGroups,
  FIRST,
  FLOWS,
  HashGroups,
  KeyGroups,
  keyHash,
  LAST,
  PACKETS,
  sortedOrder,
  topSlots,
  WordGroups,
  type Groups,
} from '../../../storage/flow-query/group-table.js';
import { prng } from '../capture/flows.js';
import { xorshift } from '../../helpers/xorshift.js';
import { contentsByKey, groupRows } from './group-rows.js';

/** Deterministic 32-bit integers (test/helpers/xorshift.ts), so a failure can be replayed. */
function rng(seed: number): () => number {
  const next = xorshift(seed);
  return () => Math.floor(next() * 0x1_0000_0000);
}

interface Expected {
  bytes: number;
  packets: number;
  flows: number;
  first: number;
  last: number;
}

/** Every group of `g` by its one-word key. */
function contents(g: Groups, times: boolean): Map<number, Expected> {
  const out = new Map<number, Expected>();
  const w = new Uint32Array(g.width);
  g.forEach((s) => {
    g.key(s, w, 0);
    out.set(w[g.width - 1]!, {
      bytes: g.value(s, BYTES),
      packets: g.value(s, PACKETS),
      flows: g.value(s, FLOWS),
      first: times ? g.value(s, FIRST) : 0,
      last: times ? g.value(s, LAST) : 0,
    });
  });
  return out;
}

describe('WordGroups (one-word keys, summed a partition at a time)', () => {
  it('sums every key exactly across many sums of a partition, with first and last times', () => {
    const next = rng(7);
    const n = 200_000; // about fifty sums of each partition (16 rows pending at most)
    const keys = new Uint32Array(n);
    const bytes = new Float64Array(n);
    const packets = new Float64Array(n);
    const start = new Float64Array(n);
    const end = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      // Heavy keys, a long tail, and the extremes of the word.
      const r = next() % 100;
      keys[i] = r < 30 ? next() % 50 : r < 31 ? (r & 1 ? 0 : 0xffffffff) : next();
      bytes[i] = next() % 1_000_000;
      packets[i] = 1 + (next() % 1000);
      start[i] = 1_700_000_000_000 + (next() % 3_600_000);
      end[i] = start[i]! + (next() % 60_000);
    }
    const want = new Map<number, Expected>();
    for (let i = 0; i < n; i++) {
      const e = want.get(keys[i]!);
      if (!e) want.set(keys[i]!, { bytes: bytes[i]!, packets: packets[i]!, flows: 1, first: start[i]!, last: end[i]! });
      else {
        e.bytes += bytes[i]!;
        e.packets += packets[i]!;
        e.flows++;
        e.first = Math.min(e.first, start[i]!);
        e.last = Math.max(e.last, end[i]!);
      }
    }
    // A fixed seed, so that a failure can be replayed.
    const g = new WordGroups(true, 16, 0x5eed);
    // Rows arrive in blocks of varying size, as a scan hands them over, a few one at a time.
    const idx = Uint32Array.from({ length: n }, (_, i) => i);
    const rv = { bytes, packets, start, end };
    let at = 0;
    while (at < n) {
      const take = Math.min(n - at, 1 + (next() % 9_000));
      if (take < 10) {
        for (let r = at; r < at + take; r++) g.addRows(keys.subarray(r, r + 1), 1, idx.subarray(r, r + 1), rv, true);
      } else {
        g.addRows(keys.subarray(at, at + take), take, idx.subarray(at, at + take), rv, true);
      }
      at += take;
      expect(g.held).toBeLessThanOrEqual(at); // at most the rows added, read without sorting
    }
    expect(g.size).toBe(want.size);
    expect(contents(g, true)).toEqual(want);
    // find: present keys point at their own group, absent ones at none.
    const probe = new Uint32Array(1);
    for (const k of [0, 0xffffffff, 3, keys[n - 1]!]) {
      probe[0] = k;
      const s = g.find(probe, 0);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(g.value(s, FLOWS)).toBe(want.get(k)!.flows);
    }
    let absent = 1;
    while (want.has(absent)) absent++;
    probe[0] = absent;
    expect(g.find(probe, 0)).toBe(-1);
    // The ranking is the reference's: bytes descending, ties by key.
    const top = topSlots(g, BYTES, 20).map((s) => {
      g.key(s, probe, 0);
      return probe[0];
    });
    const ref = [...want]
      .sort((a, b) => b[1].bytes - a[1].bytes || a[0] - b[0])
      .slice(0, 20)
      .map(([k]) => k);
    expect(top).toEqual(ref);
  });

  it('is not slowed down by keys chosen to collide in its hash (anyone can forge a source address)', { timeout: 10_000 }, () => {
    // The inverse of murmur3's 32-bit finaliser: keys whose unseeded hash is any value wanted.
    const unmix = (h: number): number => {
      h ^= h >>> 16;
      h = Math.imul(h, 0x7ed1b41d);
      h ^= (h >>> 13) ^ (h >>> 26);
      h = Math.imul(h, 0xa5cb9243);
      return (h ^ (h >>> 16)) >>> 0;
    };
    // 200 000 keys in one partition, two per slot of the first half of its table: unseeded, they
    // pile into one run and each new key walks it (about 10^10 probes, half a minute; 50 000 such
    // keys took 2.2 s where random ones take 26 ms).
    const n = 200_000;
    const keys = Uint32Array.from({ length: n }, (_, j) => unmix(((j & 1) << 19) | (j >>> 1)));
    expect(new Set(keys).size).toBe(n);
    const g = new WordGroups(false);
    const idx = Uint32Array.from({ length: n }, (_, i) => i);
    g.addRows(keys, n, idx, { bytes: new Float64Array(n).fill(10), packets: new Float64Array(n).fill(1) });
    expect(g.size).toBe(n);
    expect(g.totals()).toEqual({ bytes: 10 * n, packets: n, flows: n });
  });

  it('finds rows still pending, and ranks keys spread over few partitions (most empty)', () => {
    const g = new WordGroups(false, 2048, 77);
    const keys = Uint32Array.of(5, 9, 5, 0xffffffff, 9, 9);
    const bytes = Float64Array.of(10, 20, 30, 40, 50, 60);
    g.addRows(keys, 6, Uint32Array.from(keys.keys()), { bytes, packets: new Float64Array(6).fill(1) });
    // No read yet: every row is pending, and find sums them in first.
    const probe = Uint32Array.of(9);
    expect(g.value(g.find(probe, 0), BYTES)).toBe(130);
    probe[0] = 6;
    expect(g.find(probe, 0)).toBe(-1);
    // Slots read out of order and in order give each key's own sums.
    const byKey = new Map<number, number>();
    const slots: number[] = [];
    g.forEach((s) => slots.push(s));
    for (const s of [...slots].reverse()) {
      g.key(s, probe, 0);
      byKey.set(probe[0]!, g.value(s, BYTES));
    }
    expect(byKey).toEqual(
      new Map([
        [5, 40],
        [9, 130],
        [0xffffffff, 40],
      ]),
    );
    expect(topSlots(g, BYTES, 2).map((s) => (g.key(s, probe, 0), probe[0]))).toEqual([9, 5]);
  });

  it('answers the same inside an address table, IPv4 beside IPv6', () => {
    const g = new AddressGroups(false);
    const keys = new Uint32Array([0, 0, 0xffff, 0x0a000001, 0x20010db8, 0, 0, 1, 0, 0, 0xffff, 0x0a000001]);
    const bytes = Float64Array.of(100, 200, 300);
    const packets = Float64Array.of(1, 2, 3);
    g.addRows(keys, 3, Uint32Array.of(0, 1, 2), { bytes, packets });
    expect(g.size).toBe(2);
    const seen: Array<[string, number, number]> = [];
    const w = new Uint32Array(4);
    g.forEach((s) => {
      g.key(s, w, 0);
      seen.push([[...w].map((x) => x.toString(16)).join(':'), g.value(s, BYTES), g.value(s, FLOWS)]);
    });
    expect(seen.sort()).toEqual([
      ['0:0:ffff:a000001', 400, 2],
      ['20010db8:0:0:1', 200, 1],
    ]);
  });
});

describe('sortedOrder', () => {
  it('orders keys ascending and keeps equal keys in arrival order', () => {
    const next = rng(11);
    const n = 100_000;
    const keys = Uint32Array.from({ length: n }, () => (next() % 3 === 0 ? next() % 16 : next()));
    const { order, sorted } = sortedOrder(keys, n);
    const ref = Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
    expect([...order]).toEqual(ref);
    expect([...sorted]).toEqual(ref.map((i) => keys[i]));
  });

  it('leaves keys that share every digit in their order', () => {
    const keys = new Uint32Array(1000).fill(0xdeadbeef);
    const { order, sorted } = sortedOrder(keys, 1000);
    expect([...order]).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect([...sorted]).toEqual([...keys]);
  });
});

// Groups counted apart (another thread's) and added together with addGroup: the same groups as
// counted in one table, for every kind of table.

describe('HashGroups (keys of several words)', () => {
  it('is not slowed down by keys chosen to share one hash (a forged address with any port)', { timeout: 10_000 }, () => {
    // Two-word keys whose unseeded hash is the same value, whatever the first word: the second
    // word undoes the first's effect on the multiply-xor chain, and murmur3's finaliser is a
    // bijection. Unseeded, 120 000 such keys probe one run of the table each (~7·10^9 compares).
    const C = 0x9e3779b1;
    let inverse = C; // C⁻¹ mod 2^32, by Newton's iteration
    for (let k = 0; k < 5; k++) inverse = Math.imul(inverse, 2 - Math.imul(C, inverse));
    expect(Math.imul(C, inverse)).toBe(1);
    const target = 0x12345678;
    const n = 120_000;
    const keys = new Uint32Array(n * 2);
    for (let i = 0; i < n; i++) {
      const x = Math.imul(0x811c9dc5 ^ i, C);
      keys[i * 2] = i;
      keys[i * 2 + 1] = (Math.imul(target, inverse) ^ x) >>> 0;
    }
    for (let i = 0; i < n; i += 997) expect(Math.imul(Math.imul(0x811c9dc5 ^ i, C) ^ keys[i * 2 + 1]!, C) >>> 0).toBe(target);
    const g = new HashGroups(2);
    g.addRows(
      keys,
      n,
      Uint32Array.from({ length: n }, (_, i) => i),
      { bytes: new Float64Array(n).fill(3), packets: new Float64Array(n).fill(1) },
    );
    expect(g.size).toBe(n);
    expect(g.totals()).toEqual({ bytes: 3 * n, packets: n, flows: n });
  });
});

describe('adding groups counted apart', () => {
  const kinds: Array<{ name: string; width: number; make: (times: boolean) => Groups; key: (r: () => number) => number[] }> = [
    { name: 'dense', width: 1, make: (t) => new DenseGroups(0xffff, t), key: (r) => [Math.floor(r() * 300)] },
    { name: 'word', width: 1, make: (t) => new WordGroups(t), key: (r) => [Math.floor(r() * 5000) * 7919] },
    {
      name: 'address',
      width: 4,
      make: (t) => new AddressGroups(t),
      key: (r) => (r() < 0.7 ? [0, 0, 0xffff, Math.floor(r() * 3000)] : [0x20010db8, 0, 0, Math.floor(r() * 1000)]),
    },
    {
      name: 'sorted wide-key',
      width: 4,
      make: (t) => new KeyGroups(4, t, 4096),
      key: (r) => [0x20010db8, Math.floor(r() * 3), 0, Math.floor(r() * 3000)],
    },
    {
      name: 'hash',
      width: 3,
      make: (t) => new HashGroups(3, 0, t),
      key: (r) => [Math.floor(r() * 40), 6, Math.floor(r() * 100)],
    },
  ];
  for (const kind of kinds) {
    for (const times of [false, true]) {
      it(`${kind.name} groups${times ? ' with first and last' : ''}`, () => {
        const n = 20_000;
        const { keys, idx, rows } = groupRows(n, kind.width, kind.key, 11);
        const { bytes, packets } = rows;
        const whole = kind.make(times);
        whole.addRows(keys, n, idx, rows, times);
        // Two tables of every other row, the second added to the first group by group.
        const a = kind.make(times);
        const b = kind.make(times);
        const even = idx.filter((i) => i % 2 === 0);
        const odd = idx.filter((i) => i % 2 === 1);
        const keysOf = (sel: Uint32Array) => {
          const k = new Uint32Array(sel.length * kind.width);
          sel.forEach((i, j) => k.set(keys.subarray(i * kind.width, (i + 1) * kind.width), j * kind.width));
          return k;
        };
        a.addRows(keysOf(even), even.length, even, rows, times);
        b.addRows(keysOf(odd), odd.length, odd, rows, times);
        const key = new Uint32Array(kind.width);
        const vals = new Float64Array(5);
        b.forEach((s) => {
          b.key(s, key, 0);
          for (let m = 0; m < 5; m++) vals[m] = m <= FLOWS || times ? b.value(s, m as 0) : 0;
          a.addGroup(key, 0, vals, 0, times);
        });
        expect(a.size).toBe(whole.size);
        expect(contentsByKey(a, times)).toEqual(contentsByKey(whole, times));
        // What a ranking reads in one pass: every group once, with its value.
        for (const m of [BYTES, PACKETS, FLOWS] as const) {
          const offered: Array<[number, number]> = [];
          a.rank(m, { floor: -Infinity, offer: (s: number, v: number) => offered.push([s, v]) } as unknown as Best);
          const seen: Array<[number, number]> = [];
          a.forEach((s) => seen.push([s, a.value(s, m)]));
          expect(offered).toEqual(seen);
          expect(offered.length).toBe(whole.size);
        }
        // The totals a top-N reports come from the groups: the rows' own sums, rows still pending included.
        const sum = (v: Float64Array) => v.reduce((x, y) => x + y, 0);
        const rowsTotal = { bytes: sum(bytes), packets: sum(packets), flows: n };
        expect(whole.totals()).toEqual(rowsTotal);
        expect(a.totals()).toEqual(rowsTotal);
        const pending = kind.make(times);
        pending.addRows(keys, 100, idx, rows, times);
        expect(pending.totals()).toEqual({
          bytes: sum(bytes.subarray(0, 100)),
          packets: sum(packets.subarray(0, 100)),
          flows: 100,
        });
      });
    }
  }
});

describe("adding another table's groups in one call", () => {
  it('gives what adding them one by one gives, in any key order, with or without first and last', () => {
    const r = prng(5);
    const make = (): WordGroups => {
      const g = new WordGroups(true, 16);
      const keys = Uint32Array.from({ length: 3000 }, () => Math.floor(r() * 2000));
      const f = (n: number) => Float64Array.from({ length: 3000 }, () => Math.floor(r() * n));
      const start = f(1e6);
      g.addRows(
        keys,
        3000,
        Uint32Array.from({ length: 3000 }, (_, i) => i),
        {
          bytes: f(1e5),
          packets: f(100),
          start,
          end: start.map((s) => s + 1000),
        },
        true,
      );
      return g;
    };
    const [a, b] = [make(), make()];
    // b's groups flattened, listed backwards (not in the order b holds them).
    const flat = { keys: new Uint32Array(b.size), values: new Float64Array(b.size * 5) };
    let n = b.size;
    b.forEach((s) => {
      n--;
      b.key(s, flat.keys, n);
      for (let k = 0; k < 5; k++) flat.values[n * 5 + k] = b.value(s, k as 0);
    });
    n = b.size;
    const one = (g: Groups, times: boolean): WordGroups => {
      const copy = new WordGroups(true);
      const k = new Uint32Array(1);
      g.forEach((s) => {
        g.key(s, k, 0);
        copy.addGroup(
          k,
          0,
          Float64Array.from({ length: 5 }, (_, m) => g.value(s, m as 0)),
          0,
          times,
        );
      });
      return copy;
    };
    // `a` plus `b`, added one group at a time.
    const copy = one(a, true);
    for (let i = 0; i < n; i++) copy.addGroup(flat.keys, i, flat.values, i * 5, true);
    const before = one(a, true);
    const aAlone = contentsByKey(a, true);
    a.addGroups(flat.keys, flat.values, n, true);
    const want = contentsByKey(copy, true);
    expect(contentsByKey(a, true)).toEqual(want);
    // Groups without first and last (three values each) add their counts and leave a group's
    // first and last as they were (none, for a key only they hold).
    const three = new Float64Array(n * 3);
    for (let i = 0; i < n; i++) three.set(flat.values.subarray(i * 5, i * 5 + 3), i * 3);
    before.addGroups(flat.keys, three, n, false);
    const got = contentsByKey(before, true);
    expect(got.size).toBe(want.size);
    for (const [key, [bytes, packets, flows]] of want) {
      const times = aAlone.get(key)?.slice(3) ?? [Infinity, -Infinity];
      expect(got.get(key)).toEqual([bytes, packets, flows, ...times]);
    }
  });
});

describe('KeyGroups (several-word keys, sorted by hash and key)', () => {
  it('sums every key exactly across sort chunks, with first and last times, whole groups and rows without times', () => {
    const next = rng(31);
    const n = 60_000;
    // IPv6-like keys; the last word names the key (the others follow from it).
    const keys = new Uint32Array(n * 4);
    const bytes = new Float64Array(n);
    const packets = new Float64Array(n);
    const start = new Float64Array(n);
    const end = new Float64Array(n);
    const want = new Map<number, Expected>();
    for (let i = 0; i < n; i++) {
      const k = next() % 100 < 40 ? next() % 30 : next();
      keys.set([0x20010db8, k % 7, 0, k], i * 4);
      bytes[i] = next() % 1_000_000;
      packets[i] = 1 + (next() % 1000);
      start[i] = 1_700_000_000_000 + (next() % 3_600_000);
      end[i] = start[i]! + (next() % 60_000);
    }
    const g = new KeyGroups(4, true, 4096);
    const rv = { bytes, packets, start, end };
    const idx = Uint32Array.from({ length: n }, (_, i) => i);
    for (let at = 0; at < n;) {
      const take = Math.min(n - at, 1 + (next() % 5_000));
      // Some rows come without their times (they leave a group's first and last as they are).
      const times = take % 5 !== 0;
      g.addRows(keys.subarray(at * 4, (at + take) * 4), take, idx.subarray(at, at + take), rv, times);
      for (let i = at; i < at + take; i++) {
        const k = keys[i * 4 + 3]!;
        const e = want.get(k) ?? { bytes: 0, packets: 0, flows: 0, first: Infinity, last: -Infinity };
        e.bytes += bytes[i]!;
        e.packets += packets[i]!;
        e.flows++;
        if (times) {
          e.first = Math.min(e.first, start[i]!);
          e.last = Math.max(e.last, end[i]!);
        }
        want.set(k, e);
      }
      at += take;
    }
    // A whole group counted apart (another thread's), added to a key held and to a new one.
    for (const k of [keys[3]!, 0xfffffff0]) {
      g.addGroup(
        Uint32Array.of(0x20010db8, k % 7, 0, k),
        0,
        Float64Array.of(10, 2, 3, 1_600_000_000_000, 1_800_000_000_000),
        0,
        true,
      );
      const e = want.get(k) ?? { bytes: 0, packets: 0, flows: 0, first: Infinity, last: -Infinity };
      want.set(k, {
        bytes: e.bytes + 10,
        packets: e.packets + 2,
        flows: e.flows + 3,
        first: 1_600_000_000_000,
        last: 1_800_000_000_000,
      });
    }
    expect(g.size).toBe(want.size);
    expect(contents(g, true)).toEqual(want);
  });

  it('tells apart keys of equal hash, and sums every key exactly across sort chunks', () => {
    const r = rng(23);
    const n = 200_000;
    const keys = new Uint32Array(n * 4);
    for (let i = 0; i < n * 4; i++) keys[i] = r();
    // Among 200 000 random keys some share their 32-bit hash (about 4.6 pairs are expected).
    const byHash = new Map<number, number>();
    const colliding: number[] = [];
    for (let i = 0; i < n; i++) {
      const h = keyHash(keys, i * 4, 4);
      if (byHash.has(h)) colliding.push(byHash.get(h)!, i);
      byHash.set(h, i);
    }
    expect(colliding.length).toBeGreaterThan(0);
    // Every key twice, the second time after the first was sorted in (chunks of 50 000 rows), or
    // both in one chunk (colliding keys then meet in one sort); once more as a whole group.
    for (const chunk of [50_000, 1 << 19]) {
      const g = new KeyGroups(4, false, chunk);
      const idx = Uint32Array.from({ length: n }, (_, i) => i);
      const bytes = Float64Array.from({ length: n }, (_, i) => i + 1);
      const packets = new Float64Array(n).fill(1);
      g.addRows(keys, n, idx, { bytes, packets });
      g.addRows(keys, n, idx, { bytes, packets });
      g.addGroup(keys, 7 * 4, Float64Array.of(1000, 10, 5), 0);
      expect(g.size).toBe(n);
      for (const i of [0, 7, 12_345, n - 1, ...colliding]) {
        const s = g.find(keys, i * 4);
        expect(s).toBeGreaterThanOrEqual(0);
        const key = new Uint32Array(4);
        g.key(s, key, 0);
        expect([...key]).toEqual([...keys.subarray(i * 4, i * 4 + 4)]);
        expect([g.value(s, BYTES), g.value(s, FLOWS)]).toEqual(i === 7 ? [2 * 8 + 1000, 7] : [2 * (i + 1), 2]);
      }
      expect(g.find(Uint32Array.of(1, 2, 3, 4), 0)).toBe(-1);
    }
  });
});

describe('topSlots', () => {
  /** The reference ranking: every group sorted by value descending, then key words ascending. */
  function reference(g: Groups, m: typeof BYTES | typeof FLOWS, n: number): string[] {
    const all: { key: number[]; v: number }[] = [];
    const k = new Uint32Array(g.width);
    g.forEach((s) => {
      g.key(s, k, 0);
      all.push({ key: [...k], v: g.value(s, m) });
    });
    all.sort((a, b) => b.v - a.v || a.key.reduce((d, x, i) => d || x - b.key[i]!, 0));
    return all.slice(0, n).map((r) => r.key.join('.'));
  }
  const ranked = (g: Groups, m: typeof BYTES | typeof FLOWS, n: number): string[] => {
    const k = new Uint32Array(g.width);
    return topSlots(g, m, n).map((s) => (g.key(s, k, 0), [...k].join('.')));
  };

  it('ranks as a full sort does, with many ties, for every n up to past the groups, one-word and two-word keys', () => {
    const next = rng(2026);
    for (const width of [1, 2]) {
      const g: Groups = width === 1 ? new WordGroups(false, 2048, 5) : new HashGroups(2, 0);
      const rows = 3000;
      const keys = new Uint32Array(rows * width);
      // Keys from a small range (so equal keys meet), values from a smaller one (so groups tie).
      for (let i = 0; i < keys.length; i++) keys[i] = next() % 700;
      const bytes = Float64Array.from({ length: rows }, () => 100 * (next() % 6));
      const packets = new Float64Array(rows).fill(1);
      g.addRows(
        keys,
        rows,
        Uint32Array.from({ length: rows }, (_, i) => i),
        { bytes, packets },
      );
      for (const n of [0, 1, 2, 10, 37, 500, g.size - 1, g.size, g.size + 5]) {
        expect(ranked(g, BYTES, n), `width ${width}, n ${n}, bytes`).toEqual(reference(g, BYTES, n));
        expect(ranked(g, FLOWS, n), `width ${width}, n ${n}, flows`).toEqual(reference(g, FLOWS, n));
      }
    }
  });

  it('keeps the smallest keys when every group has the same value, in any arrival order', () => {
    for (const order of ['ascending', 'descending', 'shuffled'] as const) {
      const n = 5000;
      const keys = Uint32Array.from({ length: n }, (_, i) => (order === 'descending' ? n - i : i + 1) * 7919);
      if (order === 'shuffled') {
        const next = rng(9);
        for (let i = n - 1; i > 0; i--) {
          const j = next() % (i + 1);
          [keys[i], keys[j]] = [keys[j]!, keys[i]!];
        }
      }
      const g = new WordGroups(false, 2048, 11);
      g.addRows(
        keys,
        n,
        Uint32Array.from({ length: n }, (_, i) => i),
        {
          bytes: new Float64Array(n).fill(64),
          packets: new Float64Array(n).fill(1),
        },
      );
      expect(ranked(g, FLOWS, 4), order).toEqual(['7919', '15838', '23757', '31676']);
    }
  });
});
