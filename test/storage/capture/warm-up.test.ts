import { describe, expect, it } from 'vitest';
import { createCodec } from '../../../storage/capture/codec.js';
import { warmUpEncoding } from '../../../storage/capture/warm-up.js';

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
});
