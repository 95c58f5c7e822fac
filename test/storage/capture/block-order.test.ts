import { describe, expect, it } from 'vitest';
import { FlowBatch } from '../../../common/flow-batch.js';
import { sealedRowOrder } from '../../../storage/capture/block-order.js';
import { prng, randomFlows } from './flows.js';

describe('sealedRowOrder', () => {
  it('orders rows by protocol, then destination port, then arrival, over every protocol and port', () => {
    const r = prng(7);
    const b = randomFlows(5000, { received: 0, seed: 3 });
    // Every byte of both fields, not only the generator's few values: both radix passes must count.
    for (let i = 0; i < b.length; i++) {
      b.cols.proto[i] = r() < 0.5 ? [6, 17][i % 2]! : Math.floor(r() * 256);
      b.cols.dstPort[i] = r() < 0.5 ? [443, 53, 4095, 4096][i % 4]! : Math.floor(r() * 65536);
    }
    const order = Array.from(sealedRowOrder(b));
    const expected = Array.from({ length: b.length }, (_, i) => i).sort(
      (x, y) => b.cols.proto[x]! - b.cols.proto[y]! || b.cols.dstPort[x]! - b.cols.dstPort[y]! || x - y,
    );
    expect(order).toEqual(expected);
  });

  it('gives an empty order for an empty batch', () => {
    expect(sealedRowOrder(new FlowBatch(4)).length).toBe(0);
  });
});
