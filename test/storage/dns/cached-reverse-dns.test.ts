import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CachedReverseDns } from '../../../storage/dns/cached-reverse-dns.js';
import { ptrName, startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';

describe('CachedReverseDns against a DNS server on loopback', () => {
  let dns: TestDnsServer;
  let clock = 1_000_000;
  const made: CachedReverseDns[] = [];
  const resolver = (over: Partial<ConstructorParameters<typeof CachedReverseDns>[0]> = {}) => {
    const r = new CachedReverseDns({
      servers: [dns.address],
      timeoutMs: 500,
      positiveTtlSec: 3600,
      negativeTtlSec: 60,
      maxEntries: 1000,
      now: () => clock,
      ...over,
    });
    made.push(r);
    return r;
  };

  beforeAll(async () => {
    dns = await startDnsServer(
      { '192.0.2.10': 'web.example.net', '2001:db8::53': 'ns1.example.net', '198.51.100.7': 'mail.example.org' },
      ['203.0.113.99'],
    );
  });
  afterEach(() => {
    made.splice(0).forEach((r) => r.close());
    dns.silent = false;
    dns.queries.clear();
  });
  afterAll(async () => dns.close());

  it('returns PTR names for IPv4 and IPv6, and "" for an address without one', async () => {
    const names = await resolver().resolve(['192.0.2.10', '2001:db8::53', '192.0.2.11'], 2000);
    expect(Object.fromEntries(names)).toEqual({
      '192.0.2.10': 'web.example.net',
      '2001:db8::53': 'ns1.example.net',
      '192.0.2.11': '',
    });
  });

  it('answers again from the cache until the positive TTL ends, and asks again after it', async () => {
    const r = resolver();
    await r.resolve(['198.51.100.7'], 2000);
    await r.resolve(['198.51.100.7'], 2000);
    expect(dns.queries.get(ptrName('198.51.100.7'))).toBe(1);
    clock += 3601 * 1000;
    expect(Object.fromEntries(await r.resolve(['198.51.100.7'], 2000))).toEqual({ '198.51.100.7': 'mail.example.org' });
    expect(dns.queries.get(ptrName('198.51.100.7'))).toBe(2);
  });

  it('keeps "no name" for the negative TTL only', async () => {
    const r = resolver();
    await r.resolve(['192.0.2.200'], 2000);
    clock += 30_000;
    await r.resolve(['192.0.2.200'], 2000);
    expect(dns.queries.get(ptrName('192.0.2.200'))).toBe(1);
    clock += 31_000;
    await r.resolve(['192.0.2.200'], 2000);
    expect(dns.queries.get(ptrName('192.0.2.200'))).toBe(2);
  });

  it('gives up at the budget when the server does not answer, with the answered names kept', async () => {
    const r = resolver({ timeoutMs: 5000 });
    const t0 = performance.now();
    const names = await r.resolve(['203.0.113.99', '192.0.2.10'], 300);
    const took = performance.now() - t0;
    expect(took).toBeLessThan(1000);
    expect(Object.fromEntries(names)).toEqual({ '203.0.113.99': '', '192.0.2.10': 'web.example.net' });
  });

  it('peek never waits, and finds the name once the background lookup is done', async () => {
    const r = resolver();
    expect(r.peek('192.0.2.10')).toBe('');
    await new Promise((done) => setTimeout(done, 200));
    expect(r.peek('192.0.2.10')).toBe('web.example.net');
  });

  it('a silent server costs one timeout, then the negative cache answers at once', async () => {
    dns.silent = true;
    const r = resolver({ timeoutMs: 200 });
    await r.resolve(['192.0.2.10'], 2000);
    expect(r.counters.failed).toBe(1);
    const t0 = performance.now();
    expect(Object.fromEntries(await r.resolve(['192.0.2.10'], 2000))).toEqual({ '192.0.2.10': '' });
    expect(performance.now() - t0).toBeLessThan(50);
  });
});
