import { describe, expect, it } from 'vitest';
import { FlowBatch, formatAddress } from '../../../common/flow-batch.js';
import { FlowAggregates } from '../../../storage/capture/aggregate.js';
import { randomFlows } from './flows.js';

function bruteForce(b: FlowBatch, col: 'srcAddr' | 'dstAddr'): Map<string, { bytes: number; packets: number; flows: number }> {
  const m = new Map<string, { bytes: number; packets: number; flows: number }>();
  for (let i = 0; i < b.length; i++) {
    const k = formatAddress(b[col], i);
    const e = m.get(k) ?? { bytes: 0, packets: 0, flows: 0 };
    e.bytes += b.cols.bytes[i]!;
    e.packets += b.cols.packets[i]!;
    e.flows += 1;
    m.set(k, e);
  }
  return m;
}

describe('flow aggregates', () => {
  it('keeps one entry per address, IPv4-mapped and IPv6 alike, with exact sums', () => {
    // few distinct addresses so keys repeat: hosts drawn from small pools
    const b = randomFlows(20_000, { received: 0, seed: 11, v6: 0.4 });
    for (let i = 0; i < b.length; i++) {
      b.setV4('srcAddr', i, 0x0a000000 + (i % 700));
      if (b.cols.ipVersion[i] === 6) {
        const a = Uint8Array.from([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (i % 300) >> 8, (i % 300) & 0xff]);
        b.setV6('dstAddr', i, a, 0);
      }
    }
    // an address that is one bit away from IPv4-mapped must stay its own key
    b.setV6('srcAddr', 0, Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 10, 0, 0, 0]), 0);
    const agg = new FlowAggregates();
    agg.add(b, 0, 5000);
    agg.add(b, 5000);
    for (const [kind, col] of [
      ['srcIp', 'srcAddr'],
      ['dstIp', 'dstAddr'],
    ] as const) {
      const expected = bruteForce(b, col);
      const got = new Map<string, unknown>();
      agg.forEach(kind, (k, s) => got.set(String(k), s));
      expect(got).toEqual(expected);
      expect(agg.size(kind)).toBe(expected.size);
    }
    expect(agg.top('srcIp', 'flows', 3).map((e) => e.key)).not.toContain('::1:ffff:a00:0');
  });

  it('ranks top lists by the measure asked for, ties broken by the other measures', () => {
    const b = new FlowBatch(4);
    const add = (v4: number, bytes: number, packets: number, port: number): void => {
      const i = b.addRow();
      b.setV4('srcAddr', i, v4);
      b.setV4('dstAddr', i, 1);
      b.cols.bytes[i] = bytes;
      b.cols.packets[i] = packets;
      b.cols.proto[i] = 6;
      b.cols.dstPort[i] = port;
    };
    add(1, 100, 1, 443);
    add(2, 100, 5, 443);
    add(3, 50, 9, 53);
    add(3, 10, 1, 80);
    const agg = new FlowAggregates();
    agg.add(b);
    expect(agg.top('srcIp', 'bytes', 3).map((e) => e.key)).toEqual(['0.0.0.2', '0.0.0.1', '0.0.0.3']);
    expect(agg.top('srcIp', 'flows', 1)).toEqual([{ key: '0.0.0.3', bytes: 60, packets: 10, flows: 2 }]);
    expect(agg.top('dstPort', 'flows', 10).map((e) => e.key)).toEqual([443, 53, 80]);
    expect(agg.protocols()).toEqual([{ proto: 6, bytes: 260, packets: 16, flows: 4 }]);
  });
});
