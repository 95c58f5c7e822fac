import { describe, expect, it } from 'vitest';
import { CollectorCounters, OTHER_EXPORTERS } from '../../../collector/decode/collector-counters.js';

describe('collector counters', () => {
  it('keeps at most the configured number of exporter sets and folds later senders into one', () => {
    const counters = new CollectorCounters(3);
    for (let i = 1; i <= 50; i++) counters.add(counters.exporter(`198.51.100.${i}`), 'packets');
    // A sender seen before the cap keeps its own set.
    counters.add(counters.exporter('198.51.100.1'), 'packets');
    const snap = counters.snapshot();
    expect(Object.keys(snap.exporters).sort()).toEqual(['198.51.100.1', '198.51.100.2', OTHER_EXPORTERS].sort());
    expect(snap.exporters['198.51.100.1']!.packets).toBe(2);
    expect(snap.exporters[OTHER_EXPORTERS]!.packets).toBe(48);
    expect(snap.total.packets).toBe(51);
  });
});
