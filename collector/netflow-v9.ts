/** NetFlow v9 (RFC 3954) decoder: being written; v9 datagrams count as malformed until then. */
import type { DecodeEnv } from './decoder.js';
import type { FlowBatch } from './flow-batch.js';

/** Decodes one v9 datagram; false when malformed. */
export function decodeV9(_buf: Buffer, _env: DecodeEnv, _out: FlowBatch): boolean {
  return false;
}
