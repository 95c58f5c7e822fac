import { describe, expect, it } from 'vitest';
import { warmUpDecoding } from '../../../collector/decode/warm-up.js';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { syntheticWorkloads } from '../../../collector/decode/synthetic.js';

describe('decode warm-up', () => {
  it('decodes every synthetic v5, v9 and IPFIX datagram of every round into flows', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    // What one round is worth, decoded the plain way.
    const decoder = createFlowDecoder();
    const batch = new FlowBatch(1 << 16);
    const from = exporterRef('192.0.2.1');
    let perRound = 0;
    for (const w of syntheticWorkloads(now)) {
      expect(w.datagrams.length).toBeGreaterThan(0);
      for (const s of w.setup) decoder.decode(s, from, now, batch);
      for (const d of w.datagrams) {
        const o = decoder.decode(d, from, now, batch);
        expect(o.status).toBe('ok');
        perRound += o.flows;
      }
    }
    expect(perRound).toBeGreaterThan(1000);
    expect(warmUpDecoding(now, 3)).toBe(perRound * 3);
  });

  it('announces, for v9 and IPFIX, a data template and an options template with one sampling record', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    for (const w of syntheticWorkloads(now).filter((x) => x.version !== 5)) {
      const decoder = createFlowDecoder();
      const batch = new FlowBatch(1024);
      for (const s of w.setup) expect(decoder.decode(s, exporterRef('192.0.2.1'), now, batch).status).toBe('ok');
      expect(decoder.counters.snapshot().total).toMatchObject({ templatesAdded: 2, optionsRecords: 1, malformed: 0 });
    }
  });
});
