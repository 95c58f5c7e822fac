import { describe, expect, it } from 'vitest';
import { RangeOrderError, V4RangeTableBuilder, V6RangeTableBuilder, v6Key } from '../../../storage/geo/range-table.js';
import { NOT_GLOBAL_V4 } from '../../../storage/geo/special-purpose.js';

function v4Table(rows: [number, number, number][], excluded: [number, number][] = []) {
  const b = new V4RangeTableBuilder(excluded);
  for (const [s, e, v] of rows) b.add(s, e, v);
  return b.build();
}

/** The table as [start, end, value] rows. */
function rowsOf(t: ReturnType<typeof v4Table>): number[][] {
  return Array.from(t.values, (v, i) => [t.starts[i]!, t.ends[i]!, v]);
}

describe('IPv4 range table', () => {
  it('finds the first and last address of a range, and nothing one beyond or in a gap', () => {
    const t = v4Table([
      [100, 199, 1],
      [300, 300, 2],
    ]);
    expect([99, 100, 150, 199, 200, 299, 300, 301].map((a) => t.find(a))).toEqual([0, 1, 1, 1, 0, 0, 2, 0]);
  });

  it('covers the whole address space at its edges', () => {
    const t = v4Table([
      [0, 0, 7],
      [0xfffffff0, 0xffffffff, 9],
    ]);
    expect([0, 1, 0xffffffef, 0xfffffff0, 0xffffffff].map((a) => t.find(a))).toEqual([7, 0, 0, 9, 9]);
  });

  it('gives a nested row its range and the enclosing row the rest (the country tables nest GeoFeed in whois rows)', () => {
    // As in geo-whois-asn-country-ipv4-num.csv: 87932928-87934975 FR, then 87932928-87933439 SK.
    const t = v4Table([
      [1000, 1999, 1],
      [1000, 1099, 2],
      [1500, 1509, 3],
      [1600, 1699, 4],
      [1650, 1659, 5],
    ]);
    expect(rowsOf(t)).toEqual([
      [1000, 1099, 2],
      [1100, 1499, 1],
      [1500, 1509, 3],
      [1510, 1599, 1],
      [1600, 1649, 4],
      [1650, 1659, 5],
      [1660, 1699, 4],
      [1700, 1999, 1],
    ]);
  });

  it('lets a later row win where it overlaps an earlier one past its end', () => {
    const t = v4Table([
      [0, 99, 1],
      [50, 149, 2],
    ]);
    expect(rowsOf(t)).toEqual([
      [0, 49, 1],
      [50, 149, 2],
    ]);
  });

  it('merges neighbours with the same value and drops value 0 (unknown)', () => {
    const t = v4Table([
      [0, 9, 1],
      [10, 19, 1],
      [20, 29, 0],
      [30, 39, 1],
    ]);
    expect(rowsOf(t)).toEqual([
      [0, 19, 1],
      [30, 39, 1],
    ]);
  });

  it('cuts excluded ranges out of every row', () => {
    // 10.0.0.0/8 inside a row from 9.0.0.0 to 11.255.255.255, and a row entirely in 192.168/16.
    const t = v4Table(
      [
        [0x09000000, 0x0bffffff, 5],
        [0xc0a80000, 0xc0a800ff, 6],
      ],
      NOT_GLOBAL_V4.map(([s, e]) => [s, e]),
    );
    expect(rowsOf(t)).toEqual([
      [0x09000000, 0x09ffffff, 5],
      [0x0b000000, 0x0bffffff, 5],
    ]);
  });

  it('refuses rows out of order or ending before they start', () => {
    const b = new V4RangeTableBuilder([]);
    b.add(10, 20, 1);
    expect(() => b.add(5, 8, 1)).toThrow(RangeOrderError);
    expect(() => new V4RangeTableBuilder([]).add(9, 8, 1)).toThrow(RangeOrderError);
  });
});

describe('IPv6 range table', () => {
  const key = (...g: number[]): string => v6Key([...g, ...Array<number>(8 - g.length).fill(0)]);
  const last = (...g: number[]): string => v6Key([...g, ...Array<number>(8 - g.length).fill(0xffff)]);

  it('finds by four words, across word boundaries, and nests rows as IPv4 does', () => {
    const b = new V6RangeTableBuilder([]);
    b.add(key(0x2001, 0x0db9), last(0x2001, 0x0db9), 1); // a /32
    b.add(key(0x2001, 0x0db9, 0, 0x0001), last(0x2001, 0x0db9, 0, 0x0001), 2); // a /64 inside it
    const t = b.build();
    expect(t.size).toBe(3);
    expect(t.find(0x20010db9, 0, 0, 0)).toBe(1);
    expect(t.find(0x20010db9, 0, 0xffffffff, 0xffffffff)).toBe(1);
    expect(t.find(0x20010db9, 1, 0, 0)).toBe(2);
    expect(t.find(0x20010db9, 1, 0xffffffff, 0xffffffff)).toBe(2);
    expect(t.find(0x20010db9, 2, 0, 0)).toBe(1);
    expect(t.find(0x20010db9, 0xffffffff, 0xffffffff, 0xffffffff)).toBe(1);
    expect(t.find(0x20010dba, 0, 0, 0)).toBe(0);
    expect(t.find(0x20010db8, 0xffffffff, 0xffffffff, 0xffffffff)).toBe(0);
  });

  it('handles a row that ends at the last address', () => {
    const b = new V6RangeTableBuilder([]);
    b.add(key(0xfff0), last(0xffff), 1);
    b.add(key(0xffff), last(0xffff), 2);
    const t = b.build();
    expect(t.find(0xfff00000, 0, 0, 0)).toBe(1);
    expect(t.find(0xfffeffff, 0xffffffff, 0xffffffff, 0xffffffff)).toBe(1);
    expect(t.find(0xffff0000, 0, 0, 0)).toBe(2);
    expect(t.find(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff)).toBe(2);
    expect(t.size).toBe(2);
  });
});
