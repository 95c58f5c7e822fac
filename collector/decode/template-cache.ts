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

/** What `TemplateCache.set` did ('refused': not stored, see `TemplateLimits`). */
export type TemplateChange = 'added' | 'updated' | 'refreshed' | 'refused';

/** Everything known about one exporter + version + observation domain. */
export class DomainState {
  // Made on first use: a flood of datagrams that each name a new domain (and carry nothing else)
  // then costs an object per domain, not three, while those domains wait for eviction.
  private templateMap: Map<number, Template> | undefined;
  private samplerMap: Map<number, number> | undefined;
  /** Interval announced by options data without a sampler id (0 = none announced). */
  defaultInterval = 0;
  /** IPFIX systemInitTimeMilliseconds from options data (NaN = unknown). */
  systemInitMs = Number.NaN;
  /** Sequence number expected in the next message (-1 = unknown). */
  nextSequence = -1;
  /** Received time of the last datagram for this domain (set by the decoders; drives eviction). */
  usedMs = 0;
  /** `usedMs` when the domain last took its place at the end of the eviction order (second chance). */
  orderedMs = 0;
  /** Fields held over this domain's templates. */
  fields = 0;

  constructor(
    readonly exporter: ExporterState,
    readonly version: number,
    readonly domainId: number,
  ) {}

  /** Template id → template. */
  get templates(): Map<number, Template> {
    return (this.templateMap ??= new Map());
  }

  /** Sampler (or selector) id → sampling interval, from options data. */
  get samplers(): Map<number, number> {
    return (this.samplerMap ??= new Map());
  }

  /** Templates held, without making the map. */
  get templateCount(): number {
    return this.templateMap?.size ?? 0;
  }

  /** The exporter's address (the counter key). */
  get address(): string {
    return this.exporter.address;
  }
}

/** What one exporter address holds: its domains, what they cost, and its template budget. */
export class ExporterState {
  /** version × 2^32 + domain id → state. */
  readonly domains = new Map<number, DomainState>();
  templates = 0;
  fields = 0;
  /** Goes up when one of its templates is added, changed or removed: persistence saves the exporter when it moved. */
  revision = 0;
  /** Template budget left (field units) as of `budgetAtMs`. */
  budget: number;
  budgetAtMs = 0;

  constructor(
    readonly address: string,
    burst: number,
  ) {
    this.budget = burst;
  }
}

/**
 * Bounds of the store: one exporter (or a spoofing sender) must not grow it
 * without end, nor spend the decode thread on templates. Each is counted
 * when hit (templatesRefused, templatesEvicted, domainsEvicted).
 */
export interface TemplateLimits {
  /** A template with more fields is refused (a decoder is compiled per template: its cost follows the fields). */
  maxFieldsPerTemplate: number;
  /** Templates per observation domain; beyond, the least recently announced goes. */
  maxTemplatesPerDomain: number;
  /** Observation domains per exporter address; beyond, the least recently used goes with its templates. */
  maxDomainsPerExporter: number;
  /** Templates per exporter address over its domains; beyond, its least recently announced goes. */
  maxTemplatesPerExporter: number;
  /** Domains over all exporters; beyond, the least recently used goes. */
  maxDomains: number;
  /** Templates over all exporters; beyond, the least recently announced of the exporter holding most goes. */
  maxTemplates: number;
  /** Template fields over all exporters (memory, template file size, restart time). */
  maxFields: number;
  /**
   * Template budget per exporter, in fields: a new or changed template costs
   * its field count (plus 8), refilled at `budgetPerSec` up to `budgetBurst`.
   * A template beyond the budget is refused; a re-announcement with the same
   * layout costs nothing.
   */
  budgetPerSec: number;
  budgetBurst: number;
}

/** Defaults: ample for real exporters (tens of templates of tens of fields, a few domains), small for a flood. */
export const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  maxFieldsPerTemplate: 512,
  maxTemplatesPerDomain: 1024,
  maxDomainsPerExporter: 64,
  maxTemplatesPerExporter: 2048,
  maxDomains: 16_384,
  maxTemplates: 16_384,
  maxFields: 500_000,
  budgetPerSec: 5_000,
  budgetBurst: 50_000,
});

/** Fixed budget cost of a template on top of its fields. */
const TEMPLATE_BASE_COST = 8;

/** Options of the store. */
export interface TemplateCacheOptions {
  /** A template not re-announced for this long is forgotten; 0 keeps templates forever. */
  ttlMs: number;
  limits: Partial<TemplateLimits>;
}

/** What a bound did: the counter it adds to, for one exporter address. */
export type BoundEvent = 'templatesRefused' | 'templatesEvicted' | 'domainsEvicted';

/** The store: one DomainState per (exporter, version, domain), bounded by `TemplateLimits`. */
export class TemplateCache {
  private readonly exporters = new Map<string, ExporterState>();
  /** Every domain in eviction order (oldest first; a domain used since it was placed gets a second chance). */
  private readonly order = new Map<DomainState, true>();
  private last: DomainState | undefined;
  private templateCount = 0;
  private fieldCount = 0;
  readonly ttlMs: number;
  readonly limits: Readonly<TemplateLimits>;
  /** Goes up whenever a template is added, changed or removed (a refresh does not count). */
  revision = 0;
  /** Told what the bounds did (the decoder counts it per exporter). */
  onBound: (address: string, event: BoundEvent, n: number) => void = () => {};

  constructor(options: Partial<TemplateCacheOptions> = {}) {
    this.ttlMs = options.ttlMs ?? 0;
    this.limits = Object.freeze({ ...DEFAULT_TEMPLATE_LIMITS, ...options.limits });
  }

  /**
   * The state of one exporter domain, created on first use (which may evict
   * another), marked as used at `nowMs` (received time).
   */
  domain(address: string, version: number, domainId: number, nowMs: number): DomainState {
    // Consecutive datagrams mostly come from the same domain: answered without a map lookup
    // (a dropped domain is never `last`).
    const last = this.last;
    if (last !== undefined && last.domainId === domainId && last.version === version && last.exporter.address === address) {
      if (nowMs > last.usedMs) last.usedMs = nowMs;
      return last;
    }
    const key = version * 0x1_0000_0000 + domainId;
    let e = this.exporters.get(address);
    let d = e?.domains.get(key);
    if (d === undefined) {
      if (e !== undefined && e.domains.size >= this.limits.maxDomainsPerExporter) this.evictDomain(leastUsed(e.domains.values()));
      if (this.order.size >= this.limits.maxDomains) this.evictDomain(this.oldestDomain());
      // The evictions may have dropped the exporter's last domain, and so the exporter.
      e = this.exporters.get(address);
      if (e === undefined) {
        e = new ExporterState(address, this.limits.budgetBurst);
        e.budgetAtMs = nowMs;
        this.exporters.set(address, e);
      }
      d = new DomainState(e, version, domainId);
      d.orderedMs = nowMs;
      e.domains.set(key, d);
      this.order.set(d, true);
    }
    if (nowMs > d.usedMs) d.usedMs = nowMs;
    this.last = d;
    return d;
  }

  /** The state of one exporter domain, if anything is held for it. */
  findDomain(address: string, version: number, domainId: number): DomainState | undefined {
    return this.exporters.get(address)?.domains.get(version * 0x1_0000_0000 + domainId);
  }

  /** One exporter's state, if anything is held for it. */
  findExporter(address: string): ExporterState | undefined {
    return this.exporters.get(address);
  }

  /** Every exporter, for persistence. */
  allExporters(): IterableIterator<ExporterState> {
    return this.exporters.values();
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
   * its time and keeps the compiled decoder. A template beyond the bounds is
   * refused: then a stored one of the same id goes too (its layout is no
   * longer the exporter's).
   */
  set(
    domain: DomainState,
    id: number,
    options: boolean,
    scopeCount: number,
    fields: readonly TemplateField[],
    nowMs: number,
  ): TemplateChange {
    return this.put(domain, id, options, scopeCount, fields, nowMs, true);
  }

  /**
   * Stores a template saved before a restart, with the time it was last
   * announced: bounded like any other, but free of the exporter's budget
   * (it was paid for when it was announced).
   */
  restore(
    domain: DomainState,
    id: number,
    options: boolean,
    scopeCount: number,
    fields: readonly TemplateField[],
    lastSeenMs: number,
  ): TemplateChange {
    return this.put(domain, id, options, scopeCount, fields, lastSeenMs, false);
  }

  /** `set` and `restore`: stores a template seen at `seenMs`, paying the exporter's budget when `pay`. */
  private put(
    domain: DomainState,
    id: number,
    options: boolean,
    scopeCount: number,
    fields: readonly TemplateField[],
    seenMs: number,
    pay: boolean,
  ): TemplateChange {
    const old = domain.templates.get(id);
    if (old !== undefined && sameLayout(old, options, scopeCount, fields)) {
      this.refresh(old, seenMs);
      return 'refreshed';
    }
    const e = domain.exporter;
    if (fields.length > this.limits.maxFieldsPerTemplate || (pay && !this.spend(e, fields.length + TEMPLATE_BASE_COST, seenMs))) {
      if (old !== undefined) this.remove(domain, old);
      this.onBound(e.address, 'templatesRefused', 1);
      return 'refused';
    }
    if (old !== undefined) this.remove(domain, old);
    const t: Template = { id, options, scopeCount, fields, lastSeenMs: seenMs };
    domain.templates.set(id, t);
    this.account(domain, t, 1);
    this.revision++;
    this.makeRoom(domain, t);
    return old === undefined ? 'added' : 'updated';
  }

  /**
   * Refuses a template without reading its fields (a decoder that saw more
   * fields than `maxFieldsPerTemplate` calls this): counted, and a stored
   * template of the same id goes.
   */
  refuse(domain: DomainState, id: number): void {
    const old = domain.templates.get(id);
    if (old !== undefined) this.remove(domain, old);
    this.onBound(domain.address, 'templatesRefused', 1);
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
    const t = domain.templates.get(id);
    if (t === undefined) return false;
    this.remove(domain, t);
    return true;
  }

  /** Removes every data template (or every options template) of a domain; returns how many. */
  withdrawAll(domain: DomainState, options: boolean): number {
    let n = 0;
    for (const t of [...domain.templates.values()]) {
      if (t.options === options) {
        this.remove(domain, t);
        n++;
      }
    }
    return n;
  }

  /**
   * Drops templates not announced within the TTL, and domains left without
   * templates that nothing used for as long; returns dropped templates per
   * exporter address.
   */
  expire(nowMs: number): Map<string, number> {
    const dropped = new Map<string, number>();
    if (this.ttlMs <= 0) return dropped;
    for (const e of [...this.exporters.values()]) {
      for (const d of [...e.domains.values()]) {
        for (const t of [...d.templates.values()]) {
          if (nowMs - t.lastSeenMs > this.ttlMs) {
            this.remove(d, t);
            bump(dropped, e.address, 1);
          }
        }
        if (d.templateCount === 0 && nowMs - d.usedMs > this.ttlMs) this.dropDomain(d);
      }
    }
    return dropped;
  }

  /** Number of templates held over all domains. */
  get size(): number {
    return this.templateCount;
  }

  /** Number of domains held over all exporters. */
  get domainCount(): number {
    return this.order.size;
  }

  /** Template fields held over all exporters. */
  get fieldTotal(): number {
    return this.fieldCount;
  }

  /** Takes `cost` from the exporter's budget, refilled since it was last asked; false when it cannot pay. */
  private spend(e: ExporterState, cost: number, nowMs: number): boolean {
    const { budgetPerSec, budgetBurst } = this.limits;
    if (nowMs > e.budgetAtMs) {
      e.budget = Math.min(budgetBurst, e.budget + ((nowMs - e.budgetAtMs) * budgetPerSec) / 1000);
      e.budgetAtMs = nowMs;
    }
    if (e.budget < cost) return false;
    e.budget -= cost;
    return true;
  }

  /** After `added` was stored in `domain`: evicts templates until every bound holds again (never `added` itself). */
  private makeRoom(domain: DomainState, added: Template): void {
    const L = this.limits;
    const e = domain.exporter;
    while (domain.templates.size > L.maxTemplatesPerDomain) this.evictTemplate(domain, added, [domain]);
    while (e.templates > L.maxTemplatesPerExporter) this.evictTemplate(domain, added, e.domains.values());
    while (this.templateCount > L.maxTemplates || this.fieldCount > L.maxFields) {
      // From whoever holds most, so one sender cannot push the others out.
      let top: ExporterState = e;
      for (const x of this.exporters.values()) if (x.fields > top.fields) top = x;
      if (!this.evictTemplate(domain, added, top.domains.values())) break;
    }
  }

  /** Evicts the least recently announced template among `domains` other than `keep`; false when there is none. */
  private evictTemplate(keepDomain: DomainState, keep: Template, domains: Iterable<DomainState>): boolean {
    let victim: Template | undefined;
    let victimDomain: DomainState | undefined;
    for (const d of domains) {
      if (d.templateCount === 0) continue;
      for (const t of d.templates.values()) {
        if (t !== keep && (victim === undefined || t.lastSeenMs < victim.lastSeenMs)) {
          victim = t;
          victimDomain = d;
        }
      }
    }
    if (victim === undefined || victimDomain === undefined) {
      // Only `keep` is left where room was needed: it goes itself rather than break a bound.
      if (keepDomain.templates.get(keep.id) !== keep) return false;
      victim = keep;
      victimDomain = keepDomain;
    }
    this.remove(victimDomain, victim);
    this.onBound(victimDomain.address, 'templatesEvicted', 1);
    return victim !== keep;
  }

  private remove(domain: DomainState, t: Template): void {
    if (domain.templates.get(t.id) !== t) return;
    domain.templates.delete(t.id);
    this.account(domain, t, -1);
    this.revision++;
  }

  private account(domain: DomainState, t: Template, sign: 1 | -1): void {
    const n = t.fields.length * sign;
    domain.fields += n;
    domain.exporter.fields += n;
    domain.exporter.templates += sign;
    domain.exporter.revision++;
    this.fieldCount += n;
    this.templateCount += sign;
  }

  /** The domain first in eviction order that was not used since it took its place there. */
  private oldestDomain(): DomainState {
    for (;;) {
      const d = this.order.keys().next().value as DomainState;
      if (d.usedMs <= d.orderedMs) return d;
      // Used since: a second chance at the end of the order.
      d.orderedMs = d.usedMs;
      this.order.delete(d);
      this.order.set(d, true);
    }
  }

  private evictDomain(d: DomainState): void {
    this.onBound(d.address, 'domainsEvicted', 1);
    if (d.templateCount > 0) this.onBound(d.address, 'templatesEvicted', d.templateCount);
    this.dropDomain(d);
  }

  private dropDomain(d: DomainState): void {
    if (d.templateCount > 0) for (const t of [...d.templates.values()]) this.remove(d, t);
    const e = d.exporter;
    e.domains.delete(d.version * 0x1_0000_0000 + d.domainId);
    this.order.delete(d);
    if (this.last === d) this.last = undefined;
    if (e.domains.size === 0) {
      this.exporters.delete(e.address);
      // Persistence sees the exporter gone through the cache's revision.
      this.revision++;
    }
  }
}

function bump(m: Map<string, number>, key: string, n: number): void {
  m.set(key, (m.get(key) ?? 0) + n);
}

/** The domain used least recently (first met among equals). */
function leastUsed(domains: Iterable<DomainState>): DomainState {
  let best: DomainState | undefined;
  for (const d of domains) if (best === undefined || d.usedMs < best.usedMs) best = d;
  return best!;
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
