import { createHash, randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  createDatagramRing,
  DatagramRingReader,
  DatagramRingWriter,
  MIN_RING_BYTES,
} from '../../../collector/listen/datagram-ring.js';

interface Rec {
  payload: Buffer;
  addr: string;
  time: number;
  source: number;
}

/** The record as text (payload hashed): comparing large buffers byte by byte in expect() is slow. */
function key(rec: Rec): string {
  return `${createHash('sha1').update(rec.payload).digest('hex')}/${rec.payload.length} ${rec.addr} ${rec.time} ${rec.source}`;
}

function take(r: DatagramRingReader): Rec {
  const at = r.peek();
  const rec = { payload: Buffer.from(r.payload(at)), addr: r.addr(at), time: r.time(at), source: r.source(at) };
  r.drop();
  return rec;
}

describe('datagram ring', () => {
  it('hands over each datagram with its exporter address, received time and source, in order', () => {
    const mem = createDatagramRing(1 << 20, 1000);
    const w = new DatagramRingWriter(mem);
    const r = new DatagramRingReader(mem);
    const sent: Rec[] = [
      { payload: randomBytes(1400), addr: '192.0.2.1', time: 1_700_000_000_123.5, source: 0 },
      { payload: Buffer.alloc(0), addr: 'fe80:1234:5678:9abc:def0:1234:5678:9abc%enp0s31f6', time: 1, source: 7 },
      { payload: randomBytes(65_507), addr: '::ffff:198.51.100.200', time: 2, source: 65_534 },
      // The reader reuses the previous address text when the bytes match: same, same length but different, again.
      { payload: randomBytes(10), addr: '::ffff:198.51.100.200', time: 3, source: 1 },
      { payload: randomBytes(10), addr: '::ffff:198.51.100.201', time: 4, source: 1 },
      { payload: randomBytes(10), addr: '::ffff:198.51.100.200', time: 5, source: 1 },
    ];
    for (const s of sent) expect(w.push(s.payload, s.addr, s.time, s.source)).toBe(true);
    expect(r.count).toBe(sent.length);
    expect(sent.map(() => take(r))).toEqual(sent);
    expect(r.count).toBe(0);
    expect(r.highWater).toBe(sent.length);
  });

  it('wraps around the end of its memory many times without damaging a datagram', () => {
    const mem = createDatagramRing(MIN_RING_BYTES, 1 << 20);
    const w = new DatagramRingWriter(mem);
    const r = new DatagramRingReader(mem);
    const pending: Rec[] = [];
    let seen = 0;
    for (let i = 0; i < 5000; i++) {
      // Sizes from empty to a full datagram, so records end at every offset before the end.
      const rec = {
        payload: randomBytes((i * 7919) % 60_000),
        addr: `10.0.${i % 256}.${(i >> 8) % 256}`,
        time: i,
        source: i % 3,
      };
      if (w.push(rec.payload, rec.addr, rec.time, rec.source)) pending.push(rec);
      else {
        // Full: once read (a record never wraps, so a partly read ring may still lack room), the push succeeds.
        while (pending.length > 0) {
          expect(key(take(r))).toBe(key(pending.shift()!));
          seen++;
        }
        expect(w.push(rec.payload, rec.addr, rec.time, rec.source)).toBe(true);
        pending.push(rec);
      }
    }
    while (pending.length > 0) {
      expect(key(take(r))).toBe(key(pending.shift()!));
      seen++;
    }
    expect(seen).toBe(5000);
    expect(r.count).toBe(0);
  });

  it('refuses a datagram when full (by bytes or by count) and keeps every one it already holds', () => {
    const byCount = createDatagramRing(1 << 20, 4);
    const w = new DatagramRingWriter(byCount);
    for (let i = 0; i < 4; i++) expect(w.push(Buffer.from([i]), '192.0.2.1', i, 0)).toBe(true);
    expect(w.push(Buffer.from([9]), '192.0.2.1', 9, 0)).toBe(false);
    const r = new DatagramRingReader(byCount);
    expect([0, 1, 2, 3].map(() => take(r).payload[0])).toEqual([0, 1, 2, 3]);

    const byBytes = createDatagramRing(MIN_RING_BYTES, 1000);
    const wb = new DatagramRingWriter(byBytes);
    let n = 0;
    while (wb.push(Buffer.alloc(10_000, n), '192.0.2.1', n, 0)) n++;
    expect(n).toBeGreaterThan(10);
    expect(n).toBeLessThan(14); // 2 × (64 KiB + 80) bytes hold 13 records of 10 080 bytes
    const rb = new DatagramRingReader(byBytes);
    for (let i = 0; i < n; i++) expect(take(rb).payload).toEqual(Buffer.alloc(10_000, i));
    expect(wb.push(Buffer.alloc(10_000, 1), '192.0.2.1', 0, 0)).toBe(true);
  });

  it('wakes a reader waiting for records as soon as one is written, not at its timeout', async () => {
    const mem = createDatagramRing(1 << 20, 100);
    const r = new DatagramRingReader(mem);
    const w = new DatagramRingWriter(mem);
    const t0 = performance.now();
    const waited = r.waitForRecords(10_000);
    setTimeout(() => w.push(Buffer.from('x'), '192.0.2.1', 0, 0), 20);
    await waited;
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r.count).toBe(1);
  });

  it('carries datagrams from a writer on another thread, all of them intact', async () => {
    const mem = createDatagramRing(MIN_RING_BYTES, 1 << 16);
    const r = new DatagramRingReader(mem);
    const n = 20_000;
    // The writer thread writes datagram i as i repeated (i % 1500) times, retrying while the ring is full.
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads');
       import(workerData.module).then(({ DatagramRingWriter }) => {
         const w = new DatagramRingWriter(workerData.mem);
         for (let i = 0; i < workerData.n; i++) {
           const p = Buffer.alloc(i % 1500, i % 251);
           while (!w.push(p, '192.0.2.' + (i % 250), i, i % 5));
         }
       });`,
      {
        eval: true,
        workerData: { mem, n, module: new URL('../../../dist/collector/listen/datagram-ring.js', import.meta.url).href },
      },
    );
    const exited = new Promise((ok) => worker.once('exit', ok));
    let i = 0;
    const deadline = Date.now() + 20_000;
    while (i < n && Date.now() < deadline) {
      if (r.count === 0) {
        await r.waitForRecords(50);
        continue;
      }
      const got = take(r);
      if (
        got.payload.length !== i % 1500 ||
        got.payload.some((b) => b !== i % 251) ||
        got.addr !== `192.0.2.${i % 250}` ||
        got.time !== i ||
        got.source !== i % 5
      ) {
        throw new Error(`datagram ${i} damaged: ${JSON.stringify({ ...got, payload: got.payload.length })}`);
      }
      i++;
    }
    await exited;
    expect(i).toBe(n);
  });
});
