import { describe, expect, it } from 'vitest';
import { createRingBuffer, RingConsumer, RingProducer, ringCapacityFor, type RingLayout } from '../../collector/shared-ring.js';

const layout: RingLayout = { capacity: 65536, sources: 2, sockets: 1, maxExporters: 4 };

function pair(): { p: RingProducer; c: RingConsumer } {
  const sab = createRingBuffer(layout);
  return { p: new RingProducer(sab, layout), c: new RingConsumer(sab, layout) };
}

const addr = (last: number) => () => Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, last]);

describe('shared datagram ring', () => {
  it('hands every datagram over in order, across many wrap-arounds', () => {
    const { p, c } = pair();
    let seed = 1;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const sent: string[] = [];
    const got: string[] = [];
    for (let round = 0; round < 2000; round++) {
      // Bursts of pushes, then partial draining, so the ring runs full and wraps.
      for (let k = rnd(8); k > 0; k--) {
        const len = rnd(3000);
        const payload = Buffer.alloc(len, (round + k) & 0xff);
        if (len > 0) payload[0] = k;
        if (p.push(payload, round % 2, 0, 1, round + 0.5)) sent.push(`${round % 2}:${round + 0.5}:${payload.toString('hex')}`);
      }
      for (let k = rnd(8); k > 0; k--) {
        const r = c.next();
        if (!r) break;
        got.push(`${r.source}:${r.receivedMs}:${r.payload.toString('hex')}`);
        c.release();
      }
    }
    for (let r = c.next(); r; r = c.next()) {
      got.push(`${r.source}:${r.receivedMs}:${r.payload.toString('hex')}`);
      c.release();
    }
    expect(got).toEqual(sent);
    expect(sent.length).toBeGreaterThan(2000);
    expect(c.usedBytes()).toBe(0);
  });

  it('refuses a datagram that does not fit, and takes it once there is room', () => {
    const { p, c } = pair();
    const big = Buffer.alloc(20_000, 7);
    expect(p.push(big, 0, 0, 0, 1)).toBe(true);
    expect(p.push(big, 0, 0, 0, 2)).toBe(true);
    expect(p.push(big, 0, 0, 0, 3)).toBe(true);
    expect(p.push(big, 0, 0, 0, 4)).toBe(false);
    expect(c.next()!.receivedMs).toBe(1);
    c.release();
    expect(p.push(big, 0, 0, 0, 4)).toBe(true);
    expect([2, 3, 4].map(() => {
      const t = c.next()!.receivedMs;
      c.release();
      return t;
    })).toEqual([2, 3, 4]);
  });

  it('registers exporter addresses once and refuses more than the table holds', () => {
    const { p, c } = pair();
    expect(p.exporterId('10.0.0.1', addr(1))).toBe(0);
    expect(p.exporterId('10.0.0.2', addr(2))).toBe(1);
    expect(p.exporterId('10.0.0.1', addr(9))).toBe(0);
    expect(Array.from(c.exporterAddress(1).subarray(12))).toEqual([10, 0, 0, 2]);
    p.exporterId('10.0.0.3', addr(3));
    p.exporterId('10.0.0.4', addr(4));
    expect(p.exporterId('10.0.0.5', addr(5))).toBe(-1);
  });

  it('wakes a waiting consumer when data arrives', async () => {
    const { p, c } = pair();
    const waited = c.waitForData(5000);
    setTimeout(() => p.push(Buffer.from('x'), 0, 0, 0, 1), 20);
    const t0 = Date.now();
    await waited;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(c.next()!.payload.toString()).toBe('x');
  });

  it('sizes capacities as powers of two', () => {
    expect(ringCapacityFor(1)).toBe(65536);
    expect(ringCapacityFor(64 * 1024 * 1024)).toBe(64 * 1024 * 1024);
    expect(ringCapacityFor(64 * 1024 * 1024 + 1)).toBe(128 * 1024 * 1024);
    expect(() => createRingBuffer({ ...layout, capacity: 100_000 })).toThrow(RangeError);
  });

  it('gives the ids of idle exporters to new ones once their datagrams are consumed, never a name a queued datagram still uses', () => {
    const sab = createRingBuffer(layout);
    let t = 1_000_000;
    const p = new RingProducer(sab, layout, () => t, 60_000);
    const c = new RingConsumer(sab, layout);
    // Four hostile source addresses fill the table; the last one's datagram stays queued.
    for (let i = 1; i <= 4; i++) expect(p.push(Buffer.from([i]), 0, 0, p.exporterId(`10.0.0.${i}`, addr(i)), t)).toBe(true);
    for (let i = 1; i <= 3; i++) {
      c.next();
      c.release();
    }
    expect(p.exporterId('10.0.0.50', addr(50))).toBe(-1); // nobody idle yet
    t += 60_000;
    const got: number[] = [];
    for (let i = 50; i < 55; i++) got.push(p.exporterId(`10.0.0.${i}`, addr(i)));
    // Three ids came back; the one a queued datagram names did not, and the fourth newcomer is refused.
    expect(got.filter((id) => id >= 0).sort()).toEqual([0, 1, 2]);
    expect(got.slice(3)).toEqual([-1, -1]);
    const queued = c.next()!;
    expect(Array.from(c.exporterAddress(queued.exporterId))).toEqual(Array.from(addr(4)()));
    c.release();
    // A real exporter's datagram on a recycled id names the new address under a new generation.
    const id = got[0]!;
    expect(p.push(Buffer.from([9]), 0, 0, id, t)).toBe(true);
    const rec = c.next()!;
    expect(rec.exporterId).toBe(id);
    expect(rec.exporterGen).toBe(1);
    expect(Array.from(c.exporterAddress(rec.exporterId))).toEqual(Array.from(addr(50)()));
    c.release();
    // A recycled exporter that keeps sending keeps its id.
    expect(p.exporterId('10.0.0.50', addr(50))).toBe(id);
  });
});
