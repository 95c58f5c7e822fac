import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../../common/log-throttle.js';

describe('LogThrottle', () => {
  it('lets one line per key through per period, each key on its own, on the clock it is given', () => {
    let now = 0;
    const t = new LogThrottle(60_000, () => now);
    expect(t.allow('drop:netflow')).toBe(true);
    now = 59_999;
    expect(t.allow('drop:netflow')).toBe(false);
    now = 30_000;
    expect(t.allow('unclaimed:192.0.2.1')).toBe(true);
    now = 60_000;
    expect(t.allow('drop:netflow')).toBe(true);
  });

  it('says how many lines of a key it held back since the last one let through', () => {
    let now = 0;
    const t = new LogThrottle(10_000, () => now);
    expect(t.pass('db:acme')).toBe(0);
    for (let i = 1; i <= 3; i++) {
      now = i * 1000;
      expect(t.pass('db:acme')).toBeUndefined();
    }
    now = 10_000;
    expect(t.pass('db:acme')).toBe(3);
    now = 20_000;
    expect(t.pass('db:acme')).toBe(0);
  });

  it('forgets every key once it remembers maxKeys, so a flood of addresses cannot grow it', () => {
    let now = 0;
    const t = new LogThrottle(60_000, () => now, 3);
    for (const k of ['a', 'b', 'c']) expect(t.allow(k)).toBe(true);
    // Three keys held: the next new key starts the memory over, and 'a' may log again.
    now = 1;
    expect(t.allow('d')).toBe(true);
    now = 2;
    expect(t.allow('a')).toBe(true);
    expect(t.allow('b')).toBe(true);
  });
});
