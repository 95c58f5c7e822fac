/**
 * The flow decoder: one entry point for NetFlow v5, v9 and IPFIX datagrams.
 *
 * Pure over its inputs: the datagram, who sent it, when it was received, and
 * the template store it owns. No sockets, files or clocks inside; the UDP
 * listener, the pcap import and the tests all call the same `decode`.
 *
 * Usage:
 * ```ts
 * import { createFlowDecoder, exporterRef } from './decoder.js';
 * import { FlowBatch } from '../../common/flow-batch.js';
 *
 * const decoder = createFlowDecoder({ samplingOverride: { '192.0.2.1': 100 } });
 * const batch = new FlowBatch(4096);
 * const from = exporterRef('192.0.2.1'); // build once per exporter, reuse
 * const outcome = decoder.decode(datagram, from, Date.now(), batch);
 * if (outcome.status !== 'ok') { ... } // already counted in decoder.counters
 * // batch.length rows are ready; hand the columns to the writer, then batch.clear()
 * decoder.expire(Date.now()); // now and then: drops stale templates and held data
 * decoder.counters.snapshot(); // per-exporter counters for /metrics and `netsvc status`
 * ```
 * A malformed datagram adds no row of its own: rows appended for it are taken
 * back before `decode` returns. Held data that a template earlier in it
 * released stays (it came from valid datagrams), and so does its sequence
 * number, read from the header before anything else.
 *
 * Wiring notes: a flow source's `sampling` config is `samplingOverride`;
 * to keep templates across restarts, build the store with
 * `new TemplatePersistence({ path, now, ttlMs }).load()` (template-persistence.ts),
 * pass it as the second argument, and `save(decoder.templates)` now and then
 * and at shutdown.
 */
import ipaddr from 'ipaddr.js';
import { CollectorCounters, zeroCounters, type ExporterCounters } from './collector-counters.js';
import type { FlowBatch } from '../../common/flow-batch.js';
import { decodeIpfix } from './ipfix.js';
import { decodeV5Datagram, readV5Header } from './netflow-v5.js';
import { decodeV9 } from './netflow-v9.js';
import { trackSequence, type DecodeEnv, type ExporterRef, type ValueLimits } from './decode-env.js';
import { PendingBuffer } from './pending-buffer.js';
import { TemplateCache, type TemplateLimits } from './template-cache.js';

/** Result of one `decode` call. */
export type DecodeStatus = 'ok' | 'malformed' | 'unknown-version';

/** What `decode` did with one datagram. */
export interface DecodeOutcome {
  readonly status: DecodeStatus;
  /** Version word read from the datagram (0 when too short to have one). */
  readonly version: number;
  /** Rows appended to the batch, including held data decoded because its template came now. */
  readonly flows: number;
  /**
   * The decoder read past the end of a buffer (a RangeError: every length
   * from the wire is checked before use, so this is a bug); the datagram was
   * dropped as malformed. The fuzz test hunts for it.
   */
  readonly readPastEnd?: true;
}

/** Settings of a decoder (all have defaults). */
export interface FlowDecoderConfig {
  /** A template not re-announced for this long is forgotten (0 = never). */
  templateTtlMs: number;
  /** Data sets held at most, over all exporters, while waiting for their template. */
  pendingMaxSets: number;
  /** Held data older than this (by received time) is dropped and counted. */
  pendingMaxAgeMs: number;
  /** Bytes of held data at most, over all exporters. */
  pendingMaxBytes: number;
  /** Data sets held at most for one exporter address. */
  pendingMaxSetsPerExporter: number;
  /** Bounds of the template store (see TemplateLimits); unset ones take their defaults. */
  templateLimits: Partial<TemplateLimits>;
  /** Exporter address → sampling interval that overrides whatever the exporter says. */
  samplingOverride: Readonly<Record<string, number>>;
  /** Plausible values (times, sampling intervals). */
  limits: ValueLimits;
}

/** Defaults: flow times from 1990 to one day after receipt, sampling intervals up to 2^24. */
export const DEFAULT_VALUE_LIMITS: Readonly<ValueLimits> = Object.freeze({
  minTimeMs: Date.UTC(1990, 0, 1),
  maxFutureMs: 86_400_000,
  maxSamplingInterval: 2 ** 24,
});

/** Defaults: templates kept 1 h after their last announcement, up to 1024 held sets for 60 s. */
export const DEFAULT_DECODER_CONFIG: Readonly<FlowDecoderConfig> = Object.freeze({
  templateTtlMs: 3_600_000,
  pendingMaxSets: 1024,
  pendingMaxAgeMs: 60_000,
  pendingMaxBytes: 8 * 1024 * 1024,
  pendingMaxSetsPerExporter: 256,
  templateLimits: {},
  samplingOverride: {},
  limits: DEFAULT_VALUE_LIMITS,
});

/** A stateful decoder (templates, options data, sequence numbers, counters) for any number of exporters. */
export interface FlowDecoder {
  /**
   * Decodes one datagram into `out`; never throws on datagram content. The
   * datagram is only valid during the call (the listener's may be a view into
   * a shared ring): whatever is kept beyond it is copied.
   */
  decode(datagram: Buffer, exporter: ExporterRef, receivedMs: number, out: FlowBatch): DecodeOutcome;
  /** Drops expired templates and held data as of `nowMs`, counting them. */
  expire(nowMs: number): void;
  /** Drops every held data set, counted as `pendingExpired`: for the end of an import, when no template is coming. */
  dropHeld(): void;
  readonly counters: CollectorCounters;
  readonly templates: TemplateCache;
  readonly config: Readonly<FlowDecoderConfig>;
}

/** Thrown by nothing outside this module: marks a datagram as malformed while decoding it. */
export class MalformedDatagram extends Error {
  override readonly name = 'MalformedDatagram';
}

/** Builds the 16-byte form of an exporter address once, for reuse on every datagram it sends. */
export function exporterRef(address: string): ExporterRef {
  const parsed = ipaddr.process(address);
  const bytes16 = new Uint8Array(16);
  if (parsed.kind() === 'ipv4') {
    bytes16[10] = 0xff;
    bytes16[11] = 0xff;
    bytes16.set(parsed.toByteArray(), 12);
  } else {
    bytes16.set(parsed.toByteArray(), 0);
  }
  return { address: parsed.toString(), bytes16 };
}

/** Creates a decoder; `templates` lets a caller pass a store loaded from disk. */
export function createFlowDecoder(config: Partial<FlowDecoderConfig> = {}, templates?: TemplateCache): FlowDecoder {
  const cfg: Readonly<FlowDecoderConfig> = Object.freeze({ ...DEFAULT_DECODER_CONFIG, ...config });
  for (const [addr, n] of Object.entries(cfg.samplingOverride)) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`samplingOverride for ${addr} must be an integer ≥ 1`);
  }
  const store = templates ?? new TemplateCache({ ttlMs: cfg.templateTtlMs, limits: cfg.templateLimits });
  const pending = new PendingBuffer({
    maxSets: cfg.pendingMaxSets,
    maxAgeMs: cfg.pendingMaxAgeMs,
    maxBytes: cfg.pendingMaxBytes,
    maxSetsPerExporter: cfg.pendingMaxSetsPerExporter,
  });
  const counters = new CollectorCounters();
  store.onBound = (address, event, n) => counters.add(counters.exporter(address), event, n);
  // Overrides keyed by the normalised address text, as ExporterRef carries it.
  const overrides = new Map<string, number>();
  for (const [addr, n] of Object.entries(cfg.samplingOverride)) {
    overrides.set(ipaddr.isValid(addr) ? ipaddr.process(addr).toString() : addr, n);
  }

  // One env for every datagram (decoding is synchronous and never re-entered): a fresh
  // object and array per datagram were a good part of the decode thread's garbage.
  const scratchEnv: { -readonly [K in keyof DecodeEnv]: DecodeEnv[K] } = {
    templates: store,
    pending,
    counters,
    exporterCounters: zeroCounters(), // each datagram's exporter's, set before use
    exporter: { address: '', bytes16: new Uint8Array(16) },
    receivedMs: 0,
    overrideInterval: 0,
    released: [],
    reverseRows: 0,
    limits: cfg.limits,
  };

  const expirePending = (nowMs: number): void => {
    // Asked on every datagram: an index loop, no iterator object.
    const gone = pending.expire(nowMs);
    for (let i = 0; i < gone.length; i++) counters.add(counters.exporter(gone[i]!.domain.address), 'pendingExpired');
  };

  function decode(datagram: Buffer, exporter: ExporterRef, receivedMs: number, out: FlowBatch): DecodeOutcome {
    const ec = counters.exporter(exporter.address);
    counters.addPacket(ec);
    expirePending(receivedMs);
    if (datagram.length < 2) {
      counters.add(ec, 'malformed');
      return { status: 'malformed', version: 0, flows: 0 };
    }
    const version = datagram.readUInt16BE(0);
    const startRow = out.length;
    const env = scratchEnv;
    env.exporterCounters = ec;
    env.exporter = exporter;
    env.receivedMs = receivedMs;
    env.overrideInterval = overrides.get(exporter.address) ?? 0;
    env.released.length = 0;
    env.reverseRows = 0;
    let ok: boolean;
    let readPastEnd = false;
    try {
      if (version === 5) ok = decodeV5(datagram, env, out);
      else if (version === 9) ok = decodeV9(datagram, env, out);
      else if (version === 10) ok = decodeIpfix(datagram, env, out);
      else {
        counters.add(ec, 'unknownVersion');
        return { status: 'unknown-version', version, flows: 0 };
      }
    } catch (err) {
      // A decoder bug must not stop the listener: the datagram is dropped
      // like a malformed one (and the fuzz test hunts for these).
      if (!(err instanceof MalformedDatagram) && !(err instanceof RangeError)) throw err;
      readPastEnd = err instanceof RangeError;
      ok = false;
    }
    if (!ok) {
      // Only this datagram's own rows go: held data its templates released came from earlier, valid datagrams.
      const decoded = out.length;
      out.length = keepReleased(out, startRow, env.released);
      counters.add(ec, 'malformed');
      // The rows taken back less the reverse rows among them: records, not rows.
      if (decoded - out.length > env.reverseRows) counters.add(ec, 'recordsInMalformed', decoded - out.length - env.reverseRows);
      countFlows(ec, startRow, out);
      const outcome = { status: 'malformed', version, flows: out.length - startRow } as const;
      return readPastEnd ? { ...outcome, readPastEnd } : outcome;
    }
    if (env.reverseRows > 0) counters.add(ec, 'reverseFlows', env.reverseRows);
    const flows = countFlows(ec, startRow, out);
    return { status: 'ok', version, flows };
  }

  /** Counts rows from `startRow` on as decoded flows of `ec`; returns how many. */
  function countFlows(ec: ExporterCounters, startRow: number, out: FlowBatch): number {
    const flows = out.length - startRow;
    if (flows > 0) {
      let bytes = 0;
      let packets = 0;
      const b = out.cols.bytes;
      const p = out.cols.packets;
      for (let i = startRow; i < out.length; i++) {
        bytes += b[i]!;
        packets += p[i]!;
      }
      counters.addFlows(ec, flows, bytes, packets);
    }
    return flows;
  }

  function decodeV5(buf: Buffer, env: DecodeEnv, out: FlowBatch): boolean {
    const header = readV5Header(buf);
    if (header === undefined) return false;
    // v5 has no domain id; engine type/id play that role for sequence numbers.
    const domain = store.domain(env.exporter.address, 5, (header.engineType << 8) | header.engineId, env.receivedMs);
    trackSequence(domain, header.sequence, header.count, env);
    decodeV5Datagram(buf, header, env, out);
    return true;
  }

  return {
    decode,
    expire(nowMs: number): void {
      expirePending(nowMs);
      for (const [addr, n] of store.expire(nowMs)) counters.add(counters.exporter(addr), 'templatesExpired', n);
    },
    dropHeld(): void {
      expirePending(Number.POSITIVE_INFINITY);
    },
    counters,
    templates: store,
    config: cfg,
  };
}

/** Moves the rows of the `released` ranges down to `startRow`, in order; returns the batch's new length. */
function keepReleased(out: FlowBatch, startRow: number, released: readonly number[]): number {
  let to = startRow;
  for (let i = 0; i + 1 < released.length; i += 2) {
    const from = Math.max(released[i]!, to);
    const end = Math.min(released[i + 1]!, out.length);
    if (end <= from) continue;
    if (from !== to) out.moveRows(from, to, end - from);
    to += end - from;
  }
  return to;
}
