import { describe, expect, it } from 'vitest';
import { decodeAddresses, encodeAddresses, gatherAddresses } from '../../../storage/capture/address-codec.js';
import { prng } from './flows.js';

/** `n` addresses, 16 bytes each: IPv4-mapped with probability 1 - v6, else 2001:db8::/32 ones. */
function addresses(n: number, v6: number, seed: number): Uint8Array {
  const r = prng(seed);
  const col = new Uint8Array(n * 16);
  for (let i = 0; i < n; i++) {
    const o = i * 16;
    if (r() < v6) {
      col.set([0x20, 0x01, 0x0d, 0xb8], o);
      for (let b = 4; b < 16; b++) col[o + b] = Math.floor(r() * 256);
    } else {
      col[o + 10] = 0xff;
      col[o + 11] = 0xff;
      for (let b = 12; b < 16; b++) col[o + b] = Math.floor(r() * 256);
    }
  }
  return col;
}

describe('address columns', () => {
  for (const [name, v6] of [
    ['IPv4 only', 0],
    ['IPv6 only', 1],
    ['both', 0.3],
  ] as const) {
    it(`decode and gather every address exactly, into any target offset (${name})`, () => {
      const n = 5000;
      const col = addresses(n, v6, 3);
      const t = encodeAddresses(col, n);
      // A target that does not start on a word boundary is written as one that does.
      for (const shift of [0, 1, 3]) {
        const whole = new Uint8Array(n * 16 + shift).subarray(shift);
        decodeAddresses(t, t.bytes, n, whole);
        expect(whole).toEqual(col);
        const r = prng(shift + 9);
        const idx = [...Array(n).keys()].filter(() => r() < 0.1);
        const some = new Uint8Array((idx.length + 2) * 16 + shift).subarray(shift);
        gatherAddresses(t, t.bytes, n, idx, some, 2);
        expect(some.subarray(0, 32)).toEqual(new Uint8Array(32));
        idx.forEach((i, k) => expect(some.subarray((k + 2) * 16, (k + 3) * 16)).toEqual(col.subarray(i * 16, (i + 1) * 16)));
      }
    });
  }

  it('refuses rows to gather out of order or outside the block', () => {
    const n = 100;
    const t = encodeAddresses(addresses(n, 0.3, 4), n);
    const out = new Uint8Array(16 * 4);
    for (const idx of [[5, 3], [-1], [n]]) {
      expect(() => gatherAddresses(t, t.bytes, n, idx, out, 0)).toThrow(/ascending and inside the block/);
    }
  });
});
