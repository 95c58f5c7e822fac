/**
 * ReverseDns over node:dns (c-ares) with a PTR cache: names are kept for the
 * positive TTL, "no name" (NXDOMAIN, no PTR, timeout, refused) for the
 * negative TTL, so an unknown address costs one query per negative TTL and a
 * dead resolver never holds a request longer than its budget.
 */
import { Resolver } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { ReverseDns } from './reverse-dns.js';

/** Settings of the resolver and its cache. */
export interface CachedReverseDnsOptions {
  /** `IP`, `IP:PORT` or `[IPv6]:PORT`; empty = the system's resolvers. */
  servers: readonly string[];
  /** Per-query timeout in ms (one try per server). */
  timeoutMs: number;
  positiveTtlSec: number;
  negativeTtlSec: number;
  /** Most cached addresses; the least recently stored go first. */
  maxEntries: number;
  /** Lookups running at once for `peek` misses; beyond it a miss waits for a later call. */
  maxBackground?: number;
  now: () => number;
}

interface Entry {
  name: string;
  expiresAt: number;
}

/** c-ares' code for a query stopped by cancel(); not an answer, so not cached. */
const CANCELLED = 'ECANCELLED';

/** The in-addr.arpa / ip6.arpa name whose PTR record names `ip`. */
export function ptrName(ip: string): string {
  const bytes = ipaddr.parse(ip).toByteArray();
  if (bytes.length === 4) return `${bytes.reverse().join('.')}.in-addr.arpa`;
  const nibbles: string[] = [];
  for (let i = bytes.length - 1; i >= 0; i--) nibbles.push((bytes[i]! & 15).toString(16), (bytes[i]! >> 4).toString(16));
  return `${nibbles.join('.')}.ip6.arpa`;
}

/** One spelling per address (RFC 5952 for IPv6), so differently written IPs share a cache entry. */
function canonical(ip: string): string {
  const a = ipaddr.parse(ip);
  return a.kind() === 'ipv6' ? (a as ipaddr.IPv6).toRFC5952String() : a.toString();
}

/** A PTR cache in front of a c-ares resolver. */
export class CachedReverseDns implements ReverseDns {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<string>>();
  private readonly maxBackground: number;
  private closed = false;
  /** Lookups answered, answered with no name, failed (timeout, refused, …), and peek misses not started. */
  readonly counters = { answered: 0, noName: 0, failed: 0, skipped: 0 };

  constructor(private readonly opts: CachedReverseDnsOptions) {
    if (opts.timeoutMs <= 0) throw new Error('dns timeoutMs must be positive');
    this.resolver = new Resolver({ timeout: opts.timeoutMs, tries: 1 });
    if (opts.servers.length) this.resolver.setServers([...opts.servers]);
    this.maxBackground = opts.maxBackground ?? 64;
  }

  private cached(ip: string): Entry | undefined {
    const e = this.cache.get(ip);
    if (e && e.expiresAt <= this.opts.now()) {
      this.cache.delete(ip);
      return undefined;
    }
    return e;
  }

  private store(ip: string, name: string): void {
    const ttl = name ? this.opts.positiveTtlSec : this.opts.negativeTtlSec;
    this.cache.delete(ip);
    if (ttl <= 0) return;
    this.cache.set(ip, { name, expiresAt: this.opts.now() + ttl * 1000 });
    while (this.cache.size > this.opts.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
  }

  private lookup(ip: string): Promise<string> {
    let p = this.inflight.get(ip);
    if (p) return p;
    p = new Promise<string>((resolve) => {
      // resolvePtr, not reverse(): a DNS question only (reverse() also reads /etc/hosts), and distinct error codes.
      this.resolver.resolvePtr(ptrName(ip), (err, names) => {
        this.inflight.delete(ip);
        if (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === CANCELLED || this.closed) return resolve('');
          if (code === 'ENOTFOUND' || code === 'ENODATA') this.counters.noName++;
          else this.counters.failed++;
          this.store(ip, '');
          return resolve('');
        }
        const name = names[0] ?? '';
        if (name) this.counters.answered++;
        else this.counters.noName++;
        this.store(ip, name);
        resolve(name);
      });
    });
    this.inflight.set(ip, p);
    return p;
  }

  async resolve(ips: readonly string[], budgetMs: number): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const pending: Array<Promise<void>> = [];
    for (const ip of ips) {
      const key = canonical(ip);
      const hit = this.cached(key);
      out.set(ip, hit?.name ?? '');
      if (!hit && !this.closed) pending.push(this.lookup(key).then((name) => void out.set(ip, name)));
    }
    if (pending.length) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, budgetMs);
        timer.unref();
      });
      await Promise.race([Promise.all(pending), deadline]);
      clearTimeout(timer);
    }
    // A copy: lookups finishing later must not change an answer already handed out.
    return new Map(out);
  }

  peek(ip: string): string {
    const key = canonical(ip);
    const hit = this.cached(key);
    if (hit) return hit.name;
    if (!this.closed && !this.inflight.has(key)) {
      if (this.inflight.size < this.maxBackground) void this.lookup(key);
      else this.counters.skipped++;
    }
    return '';
  }

  close(): void {
    this.closed = true;
    this.resolver.cancel();
  }
}
