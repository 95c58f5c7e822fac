/** The receiver's bounded queue: first in, first out, the oldest dropped (and reported) past its bound. */
import { describe, expect, it } from 'vitest';
import { DropOldestQueue } from '../../../collector/syslog/syslog-queue.js';

describe('DropOldestQueue', () => {
  it('keeps order, and drops and reports the oldest past max', () => {
    const q = new DropOldestQueue<number>(3);
    expect([1, 2, 3].map((n) => q.push(n))).toEqual([0, 0, 0]);
    expect(q.push(4)).toBe(1);
    expect(q.length).toBe(3);
    expect(q.take(10)).toEqual([2, 3, 4]);
    expect(q.length).toBe(0);
  });

  it('puts a failed batch back in front, dropping its oldest if the queue filled meanwhile', () => {
    const q = new DropOldestQueue<number>(4);
    for (let i = 1; i <= 4; i++) q.push(i);
    const batch = q.take(3);
    expect(batch).toEqual([1, 2, 3]);
    q.push(5);
    q.push(6);
    expect(q.unshift(batch)).toBe(2);
    expect(q.take(10)).toEqual([3, 4, 5, 6]);
  });

  it('stays exact over many pushes past its bound (the head moves, the array is compacted)', () => {
    const q = new DropOldestQueue<number>(1000);
    let dropped = 0;
    for (let i = 0; i < 100_000; i++) dropped += q.push(i);
    expect(dropped).toBe(99_000);
    const rest = q.take(2000);
    expect(rest.length).toBe(1000);
    expect(rest[0]).toBe(99_000);
    expect(rest[999]).toBe(99_999);
    expect(q.clear()).toBe(0);
  });

  it('puts back in front after a compaction moved the head', () => {
    const q = new DropOldestQueue<number>(5000);
    for (let i = 0; i < 3000; i++) q.push(i);
    const first = q.take(2500); // head past 1024 and past half: compacted
    expect(q.unshift(first.slice(-10))).toBe(0);
    expect(q.take(11)).toEqual([2490, 2491, 2492, 2493, 2494, 2495, 2496, 2497, 2498, 2499, 2500]);
    expect(q.length).toBe(499);
  });
});
