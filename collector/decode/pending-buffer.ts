/**
 * Data sets that arrived before their template, held (bounded in bytes and
 * per exporter) until the template comes or they expire.
 */
import type { DomainState } from './template-cache.js';
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
  /** Most bytes held at once over all exporters (each set is a copy of up to 64 KiB). */
  maxBytes: number;
  /** Most sets one exporter address may hold: a sender whose data never finds a template cannot push out the others'. */
  maxSetsPerExporter: number;
}

/** What the pending buffer answers when nothing goes (shared: it is asked on every datagram). */
const NONE: readonly PendingSet[] = Object.freeze([]);

/** A bounded FIFO of data sets waiting for their template. */
export class PendingBuffer {
  private items: PendingSet[] = [];
  private bytes = 0;
  private readonly perExporter = new Map<string, number>();
  /** Sets held per domain: a template refresh asks on every datagram, answered without a scan when none wait. */
  private readonly perDomain = new Map<DomainState, number>();

  constructor(readonly options: PendingOptions) {}

  /** Sets held now. */
  get size(): number {
    return this.items.length;
  }

  /** Bytes held now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /**
   * Holds a set; returns the sets evicted to respect the bounds (the
   * exporter's own oldest when it holds its share, else the oldest of all),
   * so the caller can count them against their exporter.
   */
  hold(item: PendingSet): readonly PendingSet[] {
    const o = this.options;
    if (o.maxSets <= 0 || item.body.length > o.maxBytes) return [item];
    const address = item.domain.address;
    const gone: PendingSet[] = [];
    if ((this.perExporter.get(address) ?? 0) >= o.maxSetsPerExporter) {
      const i = this.items.findIndex((it) => it.domain.address === address);
      gone.push(...this.removeAt(i));
    }
    this.items.push(item);
    this.bytes += item.body.length;
    this.perExporter.set(address, (this.perExporter.get(address) ?? 0) + 1);
    this.perDomain.set(item.domain, (this.perDomain.get(item.domain) ?? 0) + 1);
    while (this.items.length > o.maxSets || this.bytes > o.maxBytes) gone.push(...this.removeAt(0));
    return gone.length === 0 ? NONE : gone;
  }

  private removeAt(i: number): PendingSet[] {
    if (i < 0) return [];
    const [it] = this.items.splice(i, 1);
    this.forget(it!);
    return [it!];
  }

  private forget(it: PendingSet): void {
    this.bytes -= it.body.length;
    const address = it.domain.address;
    const n = (this.perExporter.get(address) ?? 1) - 1;
    if (n <= 0) this.perExporter.delete(address);
    else this.perExporter.set(address, n);
    const m = (this.perDomain.get(it.domain) ?? 1) - 1;
    if (m <= 0) this.perDomain.delete(it.domain);
    else this.perDomain.set(it.domain, m);
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
    for (const it of gone) this.forget(it);
    return gone;
  }

  /** Removes and returns the sets waiting for template `id` of `domain`. */
  take(domain: DomainState, id: number): readonly PendingSet[] {
    if (this.items.length === 0 || !this.perDomain.has(domain)) return NONE;
    const keep: PendingSet[] = [];
    const hit: PendingSet[] = [];
    for (const it of this.items) (it.domain === domain && it.templateId === id ? hit : keep).push(it);
    if (hit.length > 0) this.items = keep;
    for (const it of hit) this.forget(it);
    return hit;
  }
}
