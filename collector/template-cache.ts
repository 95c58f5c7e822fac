/**
 * Template store for NetFlow v9 and IPFIX, keyed as nfcapd keys it:
 * exporter address + version + observation domain (v9 source id) + template
 * id. One exporter's templates never decode another's data, and one
 * observation domain's never decode another domain's of the same exporter.
 *
 * Each domain also keeps what options data told about it (sampler id →
 * interval, a default interval, systemInitTimeMilliseconds) and its
 * sequence-number expectation, because all of those share the same key.
 *
 * Time is whatever the caller passes (the datagram's received time), so
 * expiry is tested with a fake clock and the store touches no clock.
 */

/** One field specifier of a template: IE id, length on the wire (65535 = variable), enterprise number (0 = IANA). */
export interface TemplateField {
  readonly id: number;
  readonly length: number;
  readonly enterprise: number;
}

/** A template (or options template) as the exporter announced it. */
export interface Template {
  readonly id: number;
  /** True for an options template: its data records describe the exporter, not flows. */
  readonly options: boolean;
  /** Leading scope fields of an options template (0 for a data template). */
  readonly scopeCount: number;
  readonly fields: readonly TemplateField[];
  /** Last time (received ms) the exporter announced it; drives expiry. */
  lastSeenMs: number;
  /** The decoder built from the layout, attached lazily by the v9/IPFIX decoders; never persisted. */
  compiled?: unknown;
}

/** What `TemplateCache.set` did. */
export type TemplateChange = 'added' | 'updated' | 'refreshed';

/** Everything known about one exporter + version + observation domain. */
export class DomainState {
  readonly templates = new Map<number, Template>();
  /** Sampler (or selector) id → sampling interval, from options data. */
  readonly samplers = new Map<number, number>();
  /** Interval announced by options data without a sampler id (0 = none announced). */
  defaultInterval = 0;
  /** IPFIX systemInitTimeMilliseconds from options data (NaN = unknown). */
  systemInitMs = Number.NaN;
  /** Sequence number expected in the next message (-1 = unknown). */
  nextSequence = -1;

  constructor(
    readonly address: string,
    readonly version: number,
    readonly domainId: number,
  ) {}
}

/** Options of the store. */
export interface TemplateCacheOptions {
  /** A template not re-announced for this long is forgotten; 0 keeps templates forever. */
  ttlMs: number;
}

/** The store: one DomainState per (exporter, version, domain). */
export class TemplateCache {
  private readonly domains = new Map<string, DomainState>();
  private last: DomainState | undefined;
  readonly ttlMs: number;
  /** Goes up whenever a template is added, changed or removed (a refresh does not count): persistence saves when it moved. */
  revision = 0;

  constructor(options: Partial<TemplateCacheOptions> = {}) {
    this.ttlMs = options.ttlMs ?? 0;
  }

  /** The state of one exporter domain, created on first use. */
  domain(address: string, version: number, domainId: number): DomainState {
    // Consecutive datagrams mostly come from the same domain: answered without building the
    // map key (a string per datagram). Domains are never removed, so the last one stays valid.
    const last = this.last;
    if (last !== undefined && last.address === address && last.version === version && last.domainId === domainId) return last;
    const key = domainKey(address, version, domainId);
    let d = this.domains.get(key);
    if (d === undefined) {
      d = new DomainState(address, version, domainId);
      this.domains.set(key, d);
    }
    this.last = d;
    return d;
  }

  /** The state of one exporter domain, if anything was ever learned about it. */
  findDomain(address: string, version: number, domainId: number): DomainState | undefined {
    return this.domains.get(domainKey(address, version, domainId));
  }

  /** Every domain, for persistence and status output. */
  allDomains(): IterableIterator<DomainState> {
    return this.domains.values();
  }

  /** A template of a domain, unless it has expired by `nowMs` (`expire` removes and counts it later). */
  get(domain: DomainState, id: number, nowMs: number): Template | undefined {
    const t = domain.templates.get(id);
    if (t === undefined) return undefined;
    if (this.ttlMs > 0 && nowMs - t.lastSeenMs > this.ttlMs) return undefined;
    return t;
  }

  /**
   * Stores a template; a re-announcement with the same layout only refreshes
   * its time and keeps the compiled decoder.
   */
  set(
    domain: DomainState,
    id: number,
    options: boolean,
    scopeCount: number,
    fields: readonly TemplateField[],
    nowMs: number,
  ): TemplateChange {
    const old = domain.templates.get(id);
    if (old !== undefined && sameLayout(old, options, scopeCount, fields)) {
      this.refresh(old, nowMs);
      return 'refreshed';
    }
    domain.templates.set(id, { id, options, scopeCount, fields, lastSeenMs: nowMs });
    this.revision++;
    return old === undefined ? 'added' : 'updated';
  }

  /**
   * Notes a re-announcement of a stored template with the same layout (what
   * `set` does for one): decoders that compare the wire layout with the
   * stored one call this instead of parsing the fields again.
   */
  refresh(t: Template, nowMs: number): void {
    t.lastSeenMs = nowMs;
  }

  /** Removes one template; true when it existed. */
  withdraw(domain: DomainState, id: number): boolean {
    const gone = domain.templates.delete(id);
    if (gone) this.revision++;
    return gone;
  }

  /** Removes every data template (or every options template) of a domain; returns how many. */
  withdrawAll(domain: DomainState, options: boolean): number {
    let n = 0;
    for (const [id, t] of domain.templates) {
      if (t.options === options) {
        domain.templates.delete(id);
        n++;
      }
    }
    if (n > 0) this.revision++;
    return n;
  }

  /** Drops templates not announced within the TTL; returns them per exporter address. */
  expire(nowMs: number): Map<string, number> {
    const dropped = new Map<string, number>();
    if (this.ttlMs <= 0) return dropped;
    for (const d of this.domains.values()) {
      for (const [id, t] of d.templates) {
        if (nowMs - t.lastSeenMs > this.ttlMs) {
          d.templates.delete(id);
          this.revision++;
          dropped.set(d.address, (dropped.get(d.address) ?? 0) + 1);
        }
      }
    }
    return dropped;
  }

  /** Number of templates held over all domains. */
  get size(): number {
    let n = 0;
    for (const d of this.domains.values()) n += d.templates.size;
    return n;
  }
}

/** The map key of a domain. */
export function domainKey(address: string, version: number, domainId: number): string {
  return `${address}|${version}|${domainId}`;
}

function sameLayout(t: Template, options: boolean, scopeCount: number, fields: readonly TemplateField[]): boolean {
  if (t.options !== options || t.scopeCount !== scopeCount || t.fields.length !== fields.length) return false;
  for (let i = 0; i < fields.length; i++) {
    const a = t.fields[i]!;
    const b = fields[i]!;
    if (a.id !== b.id || a.length !== b.length || a.enterprise !== b.enterprise) return false;
  }
  return true;
}

/** A data set held until its template arrives. */
export interface PendingSet {
  readonly domain: DomainState;
  readonly templateId: number;
  /** A copy of the set's records (the datagram buffer is reused by the listener). */
  readonly body: Buffer;
  readonly exporter: Uint8Array;
  readonly receivedMs: number;
  /** Header facts the records' times are relative to. */
  readonly exportMs: number;
  readonly sysUptimeMs: number;
}

/** Bounds of the pending buffer. */
export interface PendingOptions {
  /** Most data sets held at once over all exporters. */
  maxSets: number;
  /** A set held longer than this (received-time ms) is dropped. */
  maxAgeMs: number;
}

/** What the pending buffer answers when nothing goes (shared: it is asked on every datagram). */
const NONE: readonly PendingSet[] = Object.freeze([]);

/** A bounded FIFO of data sets waiting for their template. */
export class PendingBuffer {
  private items: PendingSet[] = [];

  constructor(readonly options: PendingOptions) {}

  /** Sets held now. */
  get size(): number {
    return this.items.length;
  }

  /**
   * Holds a set; returns the sets evicted to respect the bound (oldest first),
   * so the caller can count them against their exporter.
   */
  hold(item: PendingSet): readonly PendingSet[] {
    if (this.options.maxSets <= 0) return [item];
    this.items.push(item);
    if (this.items.length <= this.options.maxSets) return NONE;
    return this.items.splice(0, this.items.length - this.options.maxSets);
  }

  /** Removes and returns the sets older than maxAgeMs at `nowMs`. */
  expire(nowMs: number): readonly PendingSet[] {
    // Called for every datagram: the oldest set is first (sets arrive in
    // received order), so when it is young enough nothing else is looked at.
    const head = this.items[0];
    if (head === undefined || nowMs - head.receivedMs <= this.options.maxAgeMs) return NONE;
    const keep: PendingSet[] = [];
    const gone: PendingSet[] = [];
    for (const it of this.items) (nowMs - it.receivedMs > this.options.maxAgeMs ? gone : keep).push(it);
    if (gone.length > 0) this.items = keep;
    return gone;
  }

  /** Removes and returns the sets waiting for template `id` of `domain`. */
  take(domain: DomainState, id: number): readonly PendingSet[] {
    if (this.items.length === 0) return NONE;
    const keep: PendingSet[] = [];
    const hit: PendingSet[] = [];
    for (const it of this.items) (it.domain === domain && it.templateId === id ? hit : keep).push(it);
    if (hit.length > 0) this.items = keep;
    return hit;
  }
}
