/**
 * Start-up warm-up of the decode path. Right after a start V8 runs the
 * decoders unoptimised, several times slower than later, and at a high rate
 * that first second was where most datagrams were lost. Decoding synthetic
 * v5, v9 and IPFIX datagrams (synthetic.ts) through a throwaway SourceIngest
 * before the sockets are bound lets V8 optimise everything but the per-
 * template record decoders, which are compiled when an exporter's template
 * arrives. Pure: no sockets, files or clock (the caller passes the time).
 */
import { SourceIngest } from './ingest.js';
import { syntheticWorkloads } from './synthetic.js';

/** Decodes `rounds` passes over the synthetic workloads into a batch that is thrown away; returns the flows decoded. */
export function warmUpDecoding(nowMs: number, rounds = 200): number {
  const ingest = new SourceIngest({ source: 'warm-up', sink: { write() {} }, batchRows: 60_000 });
  const from = ingest.exporter('192.0.2.1');
  let flows = 0;
  for (const w of syntheticWorkloads(nowMs)) {
    for (const s of w.setup) ingest.decode(s, from, nowMs);
    for (let r = 0; r < rounds; r++) {
      for (const d of w.datagrams) {
        flows += ingest.decode(d, from, nowMs).flows;
        if (ingest.full) void ingest.flush();
      }
    }
  }
  return flows;
}
