import { describe, expect, it } from 'vitest';
import { createFlowDecoder, type FlowDecoder } from '../../../collector/decode/decoder.js';
import { SummarySink } from '../../../common/flow-sink.js';
import { SourceIngest } from '../../../collector/decode/ingest.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';

const v5 = flowFixtures().find((f) => f.name === '1/pmacct-v5')!;

/** A real decoder that throws, after appending its rows, on the datagrams `failOn` picks: a decoder bug. */
function failingDecoder(failOn: (payload: Buffer) => boolean): FlowDecoder {
  const real = createFlowDecoder();
  return {
    ...real,
    counters: real.counters,
    templates: real.templates,
    decode(datagram, exporter, receivedMs, out) {
      const outcome = real.decode(datagram, exporter, receivedMs, out);
      if (failOn(datagram)) throw new TypeError('injected decoder bug');
      return outcome;
    },
  };
}

describe('SourceIngest', () => {
  it('counts a datagram the decoder throws on, drops its rows, and decodes the next ones', () => {
    const payloads = v5.datagrams().map((d) => ({ payload: d.payload, from: d.srcAddr }));
    expect(payloads.length).toBeGreaterThan(1);
    const bad = payloads[0]!.payload;
    const sink = new SummarySink();
    const ingest = new SourceIngest({ source: 'netflow', sink, decoder: failingDecoder((p) => p === bad) });
    const outcomes = payloads.map((d, i) => ingest.decode(d.payload, ingest.exporter(d.from), 1_000 + i));
    expect(outcomes[0]!.status).toBe('decoder-error');
    expect(outcomes.slice(1).every((o) => o.status === 'ok')).toBe(true);
    expect(ingest.decoderErrors).toBe(1);
    // The failed datagram's rows are not in the batch; every other datagram's are.
    const badRows = new SourceIngest({ source: 'x', sink: new SummarySink() });
    badRows.decode(bad, badRows.exporter(payloads[0]!.from), 0);
    expect(ingest.batch.length).toBe(v5.reference().totals.flows - badRows.batch.length);
  });
});
