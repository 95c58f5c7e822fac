/**
 * The one decode path of a flow source: datagram → decoder → batch → sink.
 * The UDP listener and `netsvc import` both drive a SourceIngest, so a pcap
 * import decodes exactly as live traffic does (with the pcap record time as
 * the received time).
 */
import type { ExporterRef } from './decode-env.js';
import { createFlowDecoder, exporterRef, type DecodeOutcome, type FlowDecoder } from './decoder.js';
import { FlowBatch } from '../../common/flow-batch.js';
import type { FlowSink } from '../../common/flow-sink.js';

/** What `SourceIngest.decode` did: the decoder's outcome, or `decoder-error` when the decoder threw (a bug, counted, rows taken back). */
export type IngestOutcome =
  DecodeOutcome | { readonly status: 'decoder-error'; readonly version: number; readonly flows: 0; readonly error: unknown };

/** Settings of one source's ingest. */
export interface SourceIngestOptions {
  /** Flow source name (config key), passed to the sink. */
  source: string;
  sink: FlowSink;
  /** The source's decoder; default a fresh one. */
  decoder?: FlowDecoder;
  /** Rows after which the batch goes to the sink even if more datagrams wait. */
  batchRows?: number;
}

/** Most exporter addresses whose parsed form is cached; beyond it the cache starts over (spoofed floods). */
const MAX_EXPORTER_REFS = 65_536;

/** Decodes the datagrams of one flow source into batches for its sink. */
export class SourceIngest {
  readonly source: string;
  readonly decoder: FlowDecoder;
  readonly sink: FlowSink;
  readonly batchRows: number;
  /** The batch being filled; lent to the sink on flush. */
  readonly batch: FlowBatch;
  /** Datagrams the decoder threw on (a decoder bug): each dropped, never stopping the ingest. */
  decoderErrors = 0;
  private readonly refs = new Map<string, ExporterRef>();

  constructor(opts: SourceIngestOptions) {
    this.source = opts.source;
    this.sink = opts.sink;
    this.decoder = opts.decoder ?? createFlowDecoder();
    this.batchRows = opts.batchRows ?? 8192;
    // Room for a full batch plus one datagram's worth (a 64 KiB IPFIX message holds < 2000 minimal records).
    this.batch = new FlowBatch(this.batchRows + 2048);
  }

  /** The parsed exporter address, built once per address. */
  exporter(address: string): ExporterRef {
    let ref = this.refs.get(address);
    if (ref === undefined) {
      if (this.refs.size >= MAX_EXPORTER_REFS) this.refs.clear();
      ref = exporterRef(address);
      this.refs.set(address, ref);
    }
    return ref;
  }

  /**
   * Decodes one datagram into the batch (counted by the decoder, never
   * thrown). Should the decoder throw anyway, the datagram's rows are taken
   * back and it is counted in `decoderErrors`: one bad datagram must not stop
   * a source's ingest for good.
   */
  decode(payload: Buffer, exporter: ExporterRef, receivedMs: number): IngestOutcome {
    const before = this.batch.length;
    try {
      return this.decoder.decode(payload, exporter, receivedMs, this.batch);
    } catch (error) {
      this.batch.length = Math.min(this.batch.length, before);
      this.decoderErrors++;
      return { status: 'decoder-error', version: payload.length >= 2 ? payload.readUInt16BE(0) : 0, flows: 0, error };
    }
  }

  /** True when the batch should go to the sink now. */
  get full(): boolean {
    return this.batch.length >= this.batchRows;
  }

  /**
   * Hands the batch to the sink (when it has rows) and clears it once the
   * sink is done, also when the sink fails: the caller counts the failure,
   * and the rows are not offered twice.
   */
  flush(): void | Promise<void> {
    if (this.batch.length === 0) return;
    let r: void | Promise<void>;
    try {
      r = this.sink.write(this.source, this.batch);
    } catch (err) {
      this.batch.clear();
      throw err;
    }
    if (!r) {
      this.batch.clear();
      return;
    }
    return r.then(
      () => this.batch.clear(),
      (err: unknown) => {
        this.batch.clear();
        throw err;
      },
    );
  }
}
