import { describe, expect, it } from 'vitest';
import { DEFAULT_VALUE_LIMITS } from '../../../collector/decode/decoder.js';
import { openSourceDecoder } from '../../../collector/listen/source-decoder.js';

describe('a flow source decoder', () => {
  it('takes its plausible-value bounds from the source config, and the defaults for those not set', () => {
    const set = openSourceDecoder(
      'a',
      { listen: '127.0.0.1:0', minFlowTime: '2000-01-01', maxFutureSec: 60, maxSamplingInterval: 4096 },
      {},
      () => 0,
    );
    expect(set.decoder.config.limits).toEqual({
      minTimeMs: Date.UTC(2000, 0, 1),
      maxFutureMs: 60_000,
      maxSamplingInterval: 4096,
    });
    const unset = openSourceDecoder('b', { listen: '127.0.0.1:0' }, {}, () => 0);
    expect(unset.decoder.config.limits).toEqual(DEFAULT_VALUE_LIMITS);
  });
});
