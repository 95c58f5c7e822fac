/** Test-side view of FlowBatch rows as plain objects, so assertions read like the reference spec. */
import { createFlowDecoder, exporterRef, type FlowDecoder, type FlowDecoderConfig } from '../../../collector/decode/decoder.js';
import { FlowBatch, formatAddress, NUMERIC_COLUMNS, type NumericColumn } from '../../../common/flow-batch.js';
import { vendor } from './wire.js';

/** One decoded flow. */
export type Row = Record<NumericColumn, number> & { src: string; dst: string; nextHop: string; exporter: string };

/** A row with every column at its zero value (IPv4, interval 1, unspecified addresses), then `r` over it: what a test expects, field by field. */
export function row(r: Partial<Row>): Row {
  const zero = Object.fromEntries(NUMERIC_COLUMNS.map((c) => [c, 0])) as Record<NumericColumn, number>;
  return {
    ...zero,
    ipVersion: 4,
    samplingInterval: 1,
    src: '0.0.0.0',
    dst: '0.0.0.0',
    nextHop: '0.0.0.0',
    exporter: '0.0.0.0',
    ...r,
  };
}

/** Rows of a batch from index `from`. */
export function rows(batch: FlowBatch, from = 0): Row[] {
  const out: Row[] = [];
  for (let i = from; i < batch.length; i++) {
    const r = {
      src: formatAddress(batch.srcAddr, i),
      dst: formatAddress(batch.dstAddr, i),
      nextHop: formatAddress(batch.nextHop, i),
      exporter: formatAddress(batch.exporter, i),
    } as Row;
    for (const name of NUMERIC_COLUMNS) r[name] = batch.cols[name][i]!;
    out.push(r);
  }
  return out;
}

/** Decodes vendor files in order from one exporter; returns the rows, the decoder and each outcome. */
export function decodeFiles(
  files: string[],
  opts: { exporter?: string; receivedMs?: number; config?: Partial<FlowDecoderConfig>; decoder?: FlowDecoder } = {},
) {
  const decoder = opts.decoder ?? createFlowDecoder(opts.config);
  const batch = new FlowBatch(16);
  const from = exporterRef(opts.exporter ?? '192.0.2.10');
  const outcomes = files.map((f) => decoder.decode(vendor(f), from, opts.receivedMs ?? 1_700_000_000_000, batch));
  return { rows: rows(batch), decoder, outcomes, batch, counters: decoder.counters.exporter(from.address) };
}

/** ms since epoch of an ISO time. */
export function ms(iso: string): number {
  return Date.parse(iso);
}
