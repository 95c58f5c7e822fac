import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../../collector/log-throttle.js';

describe('LogThrottle', () => {
  it('lets one line per key through per period, each key on its own', () => {
    const t = new LogThrottle(60_000);
    expect(t.allow('drop:netflow', 0)).toBe(true);
    expect(t.allow('drop:netflow', 59_999)).toBe(false);
    expect(t.allow('unclaimed:192.0.2.1', 30_000)).toBe(true);
    expect(t.allow('drop:netflow', 60_000)).toBe(true);
  });

  it('forgets every key once it remembers more than maxKeys, so a flood of addresses cannot grow it', () => {
    const t = new LogThrottle(60_000, 2);
    for (const k of ['a', 'b', 'c']) expect(t.allow(k, 0)).toBe(true);
    // Three keys held: the next new key starts the memory over, and 'a' may log again.
    expect(t.allow('d', 1)).toBe(true);
    expect(t.allow('a', 2)).toBe(true);
  });
});
