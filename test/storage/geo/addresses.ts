/** Address columns for the geo tests, built as the decoders build them (FlowBatch.setV4/setV6). */
import { FlowBatch } from '../../../common/flow-batch.js';
import { v6Bytes } from './mmdb-writer.js';

/** Host-order u32 of a dotted quad. */
export function v4Number(dotted: string): number {
  return dotted.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}

/** An address column holding `addrs` (dotted quads as IPv4-mapped, anything with ':' as IPv6), one row each. */
export function addressColumn(addrs: readonly string[]): Uint8Array {
  const b = new FlowBatch(addrs.length);
  for (const a of addrs) {
    const i = b.addRow();
    if (a.includes(':')) b.setV6('srcAddr', i, v6Bytes(a), 0);
    else b.setV4('srcAddr', i, v4Number(a));
  }
  return b.srcAddr;
}
