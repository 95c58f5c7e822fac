import { describe, expect, it } from 'vitest';
import {
  ADDRESS_COLUMNS,
  exactCount,
  FlowBatch,
  NUMERIC_COLUMNS,
  scaleCount,
  type AddressColumn,
  type NumericArrays,
  type NumericColumn,
} from '../../common/flow-batch.js';
import { randomFlows, rowsOf } from '../storage/capture/flows.js';

function filled(n: number, capacity: number): FlowBatch {
  const b = new FlowBatch(capacity);
  for (let k = 0; k < n; k++) {
    const i = b.addRow();
    b.cols.received[i] = 1_700_000_000_000 + k;
    b.cols.bytes[i] = 100 * (k + 1);
    b.cols.srcPort[i] = 1000 + k;
    b.setV4('srcAddr', i, (10 << 24) | k);
  }
  return b;
}

describe('FlowBatch hand-off between threads', () => {
  it('gives its buffers away with the rows in them and starts over empty on new arrays of the same room', () => {
    const b = filled(5, 64);
    const given = b.handOff();
    expect(b.length).toBe(0);
    expect(b.capacity).toBe(64);
    expect(b.cols.received.buffer).not.toBe(given.numeric[0]);
    // The batch keeps working: new rows do not touch what was given away.
    const i = b.addRow();
    b.cols.bytes[i] = 7;
    const other = FlowBatch.fromBuffers(5, given);
    expect(other.capacity).toBe(64);
    expect(Array.from(other.cols.bytes.subarray(0, 5))).toEqual([100, 200, 300, 400, 500]);
    expect(Array.from(other.cols.srcPort.subarray(0, 5))).toEqual([1000, 1001, 1002, 1003, 1004]);
    expect(Array.from(other.srcAddr.subarray(4 * 16 + 12, 4 * 16 + 16))).toEqual([10, 0, 0, 4]);
  });

  it('refills the buffers it is given back when they have its room, and allocates when they do not', () => {
    const b = filled(5, 64);
    const first = b.handOff();
    const back = filled(3, 64).handOff(); // another batch's arrays of the same room
    b.handOff(back);
    expect(b.cols.bytes.buffer).toBe(back.numeric[NUMERIC_COLUMNS.indexOf('bytes')]);
    expect(b.srcAddr.buffer).toBe(back.addrs[ADDRESS_COLUMNS.indexOf('srcAddr')]);
    expect(b.length).toBe(0);
    const wrongRoom = filled(3, 32).handOff();
    b.handOff(wrongRoom);
    expect(b.cols.bytes.buffer).not.toBe(wrongRoom.numeric[NUMERIC_COLUMNS.indexOf('bytes')]);
    expect(b.capacity).toBe(64);
    expect(FlowBatch.holdsRows(first, 64)).toBe(true);
    expect(FlowBatch.holdsRows(first, 32)).toBe(false);
  });

  it('starts over at the room it was made with, even after one large datagram made it grow', () => {
    const b = filled(100, 64); // grew to 128 rows
    expect(b.capacity).toBe(128);
    b.handOff();
    expect(b.capacity).toBe(64);
  });

  it('gives address columns that start off a word boundary a copy that does not, with the same bytes', () => {
    const b = filled(3, 8);
    const numeric = {} as Record<NumericColumn, Float64Array | Uint32Array | Uint16Array | Uint8Array>;
    for (const c of NUMERIC_COLUMNS) numeric[c] = b.cols[c];
    const addrs = {} as Record<AddressColumn, Uint8Array>;
    for (const c of ADDRESS_COLUMNS) {
      const shifted = new Uint8Array(b[c].length + 1);
      shifted.set(b[c], 1);
      addrs[c] = shifted.subarray(1);
    }
    const over = FlowBatch.over(3, numeric as unknown as NumericArrays, addrs);
    for (const c of ADDRESS_COLUMNS) {
      expect(over[c].byteOffset % 4).toBe(0);
      expect(Array.from(over[c])).toEqual(Array.from(b[c]));
    }
  });

  it('refuses columns that hold fewer rows than the length it is given', () => {
    const given = filled(5, 8).handOff();
    expect(() => FlowBatch.fromBuffers(9, given)).toThrow(RangeError);
  });
});

describe('exact counts (value + rest)', () => {
  it('splits a scaled 64-bit count into its nearest float and an integer rest, and joins them back exactly', () => {
    const rest = new Float64Array(1);
    const f = scaleCount(0xffffffff, 0xffffffff, 1, rest);
    expect(f).toBe(2 ** 64);
    expect(rest[0]).toBe(-1);
    expect(exactCount(f, rest[0]!)).toBe(2n ** 64n - 1n);
    const g = scaleCount(0xffffffff, 0xffffffff, 2 ** 24, rest);
    expect(exactCount(g, rest[0]!)).toBe((2n ** 64n - 1n) * 2n ** 24n);
  });

  it('gives a number while it is exact in JSON, and never throws on a value no decoder writes', () => {
    expect(exactCount(1500, 0)).toBe(1500);
    expect(exactCount(2 ** 53, -1)).toBe(2 ** 53 - 1);
    expect(exactCount(2 ** 53, 0)).toBe(2n ** 53n);
    expect(exactCount(Number.NaN, 0)).toBe(0);
    expect(exactCount(Infinity, 0)).toBe(0);
  });
});

describe('FlowBatch.gatherRows', () => {
  it('appends the rows of another batch in the given order, every column and address', () => {
    const src = randomFlows(300, { received: 1000, seed: 9, v6: 0.5 });
    // The generator leaves the 64-bit remainders 0: give them values, so a column left out shows.
    for (let i = 0; i < src.length; i++) {
      src.cols.bytesRest[i] = i - 150;
      src.cols.packetsRest[i] = 150 - i;
    }
    const out = randomFlows(5, { received: 0, seed: 1 });
    const order = Uint32Array.from({ length: 300 }, (_, k) => (k * 7) % 300);
    out.gatherRows(src, order, 10, 200);
    expect(out.length).toBe(205);
    const srcRows = rowsOf([src]);
    expect(rowsOf([out]).slice(5)).toEqual(Array.from(order.subarray(10, 210), (i) => srcRows[i]));
  });
});
