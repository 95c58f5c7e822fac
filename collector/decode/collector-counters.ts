/**
 * Per-exporter decode counters: "everything that moves gets a counter".
 *
 * Plain numeric fields on one object per exporter address, so the hot path
 * increments a property and the metrics layer (prom-client, `netsvc status`)
 * reads them without the decoder knowing about either.
 */

/** Counter names, in the order a status table prints them. */
export const COUNTER_NAMES = [
  'packets', // datagrams handed to the decoder
  'flows', // flow rows produced
  'bytes', // sum of (sampling-scaled) bytes of the flows produced
  'packetsInFlows', // sum of (sampling-scaled) packets of the flows produced
  'malformed', // datagrams dropped because something in them did not fit
  'unknownVersion', // datagrams whose version word is not 5, 9 or 10
  'dataWithoutTemplate', // data sets that arrived before (or without) their template
  'templatesAdded',
  'templatesUpdated', // a template id re-announced with a different layout
  'templatesWithdrawn',
  'templatesExpired',
  'optionsRecords', // options data records read (sampling, system init time)
  'recordsWithoutAddress', // data records with counters but no IPv4/IPv6 address: kept, with the unspecified address
  'recordsNotFlows', // data records with neither an address nor a byte/packet counter: skipped
  'recordsInMalformed', // data records decoded from a datagram or held set found malformed further on: taken back
  'setsReserved', // sets with a reserved id (v9 2–255; IPFIX 0, 1, 4–255): skipped unread
  'sequenceGaps', // times the sequence number jumped forward
  'sequenceMissing', // units the jumps skipped (v5: flows, v9: packets, IPFIX: records)
  'pendingBuffered', // data sets held for a template not seen yet
  'pendingDecoded', // held data sets decoded once their template arrived
  'pendingExpired', // held data sets dropped because they waited too long
  'pendingDropped', // held data sets dropped because the buffer was full
  'templatesRefused', // templates not stored: too many fields, or the exporter's template budget spent
  'templatesEvicted', // templates forgotten to respect a cap (least recently announced first)
  'domainsEvicted', // observation domains forgotten to respect a cap (least recently used first)
  'timestampsClamped', // flow times outside the plausible window, replaced by the export time
  'samplingRefused', // sampling intervals above the bound, not applied
  'sectionsUnreadable', // sampled-packet records dropped: their packet section (IE 313/315) held no IP header netsvc could read, and the template has no addresses
  'reverseFlows', // flow rows made from the return direction of two-way records (RFC 5103 biflows, ASA NSEL responder counts); included in `flows`
] as const;

/** One counter name. */
export type CounterName = (typeof COUNTER_NAMES)[number];

/** The counters of one exporter (or the total over all of them). */
export type ExporterCounters = Record<CounterName, number>;

/** Exporter counter sets kept apart, at most; later addresses share one set. */
export const MAX_EXPORTER_COUNTERS = 4096;

/** The label of the counter set shared by exporters beyond the cap. */
export const OTHER_EXPORTERS = 'other';

/** Makes a zeroed counter set. */
export function zeroCounters(): ExporterCounters {
  const c = {} as ExporterCounters;
  for (const name of COUNTER_NAMES) c[name] = 0;
  return c;
}

/** Counters kept per exporter address, plus a running total. */
export class CollectorCounters {
  /** Sum over every exporter. */
  readonly total: ExporterCounters = zeroCounters();
  private readonly byExporter = new Map<string, ExporterCounters>();

  /**
   * `maxExporters` bounds the counter sets, the shared one included (and so the Prometheus series):
   * spoofed or scanning senders must not grow them without end.
   */
  constructor(private readonly maxExporters = MAX_EXPORTER_COUNTERS) {}

  /** The counters of one exporter, created on first use; beyond `maxExporters` addresses, the shared `other` set. */
  exporter(address: string): ExporterCounters {
    let c = this.byExporter.get(address);
    if (c === undefined) {
      // One place is kept for the shared set, so there are never more than maxExporters.
      const key = this.byExporter.size >= this.maxExporters - 1 ? OTHER_EXPORTERS : address;
      c = this.byExporter.get(key);
      if (c === undefined) {
        c = zeroCounters();
        this.byExporter.set(key, c);
      }
    }
    return c;
  }

  /** Adds `n` to one counter of an exporter and to the total. */
  add(exporter: ExporterCounters, name: CounterName, n = 1): void {
    exporter[name] += n;
    this.total[name] += n;
  }

  /** One datagram received from an exporter (named fields: `add`'s store by counter name cost more, per datagram, than the rest of the bookkeeping). */
  addPacket(exporter: ExporterCounters): void {
    exporter.packets++;
    this.total.packets++;
  }

  /** A datagram's decoded flows, their bytes and packets (named fields, as addPacket). */
  addFlows(exporter: ExporterCounters, flows: number, bytes: number, packets: number): void {
    const t = this.total;
    exporter.flows += flows;
    exporter.bytes += bytes;
    exporter.packetsInFlows += packets;
    t.flows += flows;
    t.bytes += bytes;
    t.packetsInFlows += packets;
  }

  /** Exporter addresses seen so far. */
  exporters(): string[] {
    return [...this.byExporter.keys()];
  }

  /** A copy of every exporter's counters and the total, for status output. */
  snapshot(): { total: ExporterCounters; exporters: Record<string, ExporterCounters> } {
    const exporters: Record<string, ExporterCounters> = {};
    for (const [addr, c] of this.byExporter) exporters[addr] = { ...c };
    return { total: { ...this.total }, exporters };
  }
}
