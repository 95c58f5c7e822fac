import { describe, expect, it } from 'vitest';
import { lowerOtherThreads, NiceValueError, type ThreadSystem } from '../../src/thread-priority.js';

/** A process whose threads have the given nice values; those in `refuse` refuse a new one (ended, or not ours to change). */
function system(start: Record<number, number>, refuse: number[] = []): ThreadSystem & { nice: Map<number, number> } {
  const nice = new Map(Object.entries(start).map(([t, n]) => [Number(t), n]));
  return {
    nice,
    threads: () => [...nice.keys()],
    getNice(tid) {
      const n = nice.get(tid);
      if (n === undefined) throw new Error('ESRCH');
      return n;
    },
    setNice(tid, value) {
      if (refuse.includes(tid)) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
      nice.set(tid, value);
    },
  };
}

describe('lowerOtherThreads', () => {
  it('gives every thread but the kept ones the nice value', () => {
    const sys = system({ 100: 0, 101: 0, 102: 0, 107: 0, 110: 0 });
    expect(lowerOtherThreads([107], 10, sys)).toEqual({ lowered: 4, already: 0, failed: 0 });
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 10, 101: 10, 102: 10, 107: 0, 110: 10 });
  });

  it('leaves a thread that already runs at that nice value or a higher one as it is', () => {
    const sys = system({ 100: 15, 101: 10, 102: 3, 107: 0 });
    expect(lowerOtherThreads([107], 10, sys)).toEqual({ lowered: 1, already: 2, failed: 0 });
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 15, 101: 10, 102: 10, 107: 0 });
  });

  it('counts a thread that refuses and still lowers the rest', () => {
    const sys = system({ 100: 0, 101: 0, 102: 0, 107: 0 }, [101]);
    expect(lowerOtherThreads([107], 5, sys)).toEqual({ lowered: 2, already: 0, failed: 1 });
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 5, 101: 0, 102: 5, 107: 0 });
  });

  it('refuses a nice value outside 1..19 before touching any thread', () => {
    const sys = system({ 100: 0, 107: 0 });
    for (const bad of [0, 20, -5, 2.5]) expect(() => lowerOtherThreads([107], bad, sys)).toThrow(NiceValueError);
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 0, 107: 0 });
  });
});
