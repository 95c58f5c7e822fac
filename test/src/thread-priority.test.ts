import { describe, expect, it } from 'vitest';
import { lowerOtherThreads, type ThreadSystem } from '../../src/thread-priority.js';

/** A process of `tids` whose threads in `refuse` refuse a new nice value (ended, or not ours to change). */
function system(tids: number[], refuse: number[] = []): ThreadSystem & { nice: Map<number, number> } {
  const nice = new Map(tids.map((t) => [t, 0]));
  return {
    nice,
    threads: () => [...tids],
    setNice(tid, value) {
      if (refuse.includes(tid)) throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
      nice.set(tid, value);
    },
  };
}

describe('lowerOtherThreads', () => {
  it('gives every thread but the kept ones the nice value', () => {
    const sys = system([100, 101, 102, 107, 110]);
    expect(lowerOtherThreads([107], 10, sys)).toEqual({ lowered: 4, failed: 0 });
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 10, 101: 10, 102: 10, 107: 0, 110: 10 });
  });

  it('counts a thread that refuses (it ended meanwhile) and still lowers the rest', () => {
    const sys = system([100, 101, 102, 107], [101]);
    expect(lowerOtherThreads([107], 5, sys)).toEqual({ lowered: 2, failed: 1 });
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 5, 101: 0, 102: 5, 107: 0 });
  });

  it('refuses a nice value outside 1..19 before touching any thread', () => {
    const sys = system([100, 107]);
    for (const bad of [0, 20, -5, 2.5]) expect(() => lowerOtherThreads([107], bad, sys)).toThrow(RangeError);
    expect(Object.fromEntries(sys.nice)).toEqual({ 100: 0, 107: 0 });
  });
});
