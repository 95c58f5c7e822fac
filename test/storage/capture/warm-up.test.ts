import { describe, expect, it } from 'vitest';
import { createCodec } from '../../../storage/capture/codec.js';
import { NUMERIC_COLUMNS } from '../../../common/flow-batch.js';
import { syntheticFlows, warmUpEncoding } from '../../../storage/capture/warm-up.js';

describe('capture writer warm-up', () => {
  it('encodes whole blocks of its synthetic rows, compressed, every round', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    const one = warmUpEncoding(createCodec('zstd', 3), now, 4096, 1);
    const raw = warmUpEncoding(createCodec('none'), now, 4096, 1);
    // A block of 4096 rows: far more than a header, and smaller compressed than raw.
    expect(raw).toBeGreaterThan(4096 * 10);
    expect(one).toBeGreaterThan(1000);
    expect(one).toBeLessThan(raw);
    expect(warmUpEncoding(createCodec('zstd', 3), now, 4096, 3)).toBe(one * 3);
  });

  it('makes a run of synthetic rows in pieces that hold the rows one call makes (the query warm-up writes it so)', () => {
    const now = Date.UTC(2026, 10, 24, 12);
    const whole = syntheticFlows(8192, now);
    const pieces = [syntheticFlows(4096, now, 0), syntheticFlows(4096, now, 4096)];
    for (const name of NUMERIC_COLUMNS) {
      const joined = [...pieces[0]!.cols[name], ...pieces[1]!.cols[name]];
      expect(joined, name).toEqual([...whole.cols[name]]);
    }
    expect(Buffer.concat([pieces[0]!.srcAddr, pieces[1]!.srcAddr])).toEqual(Buffer.from(whole.srcAddr));
    // Distinct sources across the pieces, not the first piece's again.
    const sources = new Set<string>();
    for (const p of pieces) for (let i = 0; i < p.length; i++) sources.add(p.srcAddr.subarray(i * 16, i * 16 + 16).join('.'));
    expect(sources.size).toBeGreaterThan(4096);
  });
});
