/** IPFIX (RFC 7011) decoder: being written; IPFIX datagrams count as malformed until then. */
import type { DecodeEnv } from './decoder.js';
import type { FlowBatch } from './flow-batch.js';

/** Decodes one IPFIX message; false when malformed. */
export function decodeIpfix(_buf: Buffer, _env: DecodeEnv, _out: FlowBatch): boolean {
  return false;
}
