/**
 * The row order of a block that sealing writes (seal.ts): by protocol, then
 * destination port, then arrival. The block keeps its rows and its time
 * range; inside it, rows of one port lie together, so grouping or counting
 * by port or protocol walks its tables in order instead of at random, and
 * those columns compress better.
 */
import type { FlowBatch } from '../../common/flow-batch.js';

const BITS = 12;
const MASK = (1 << BITS) - 1;

/** Row numbers of `batch` in sealed-block order (a stable two-pass radix sort on protocol·65536 + destination port). */
export function sealedRowOrder(batch: FlowBatch): Uint32Array {
  const n = batch.length;
  const proto = batch.cols.proto;
  const port = batch.cols.dstPort;
  const keys = new Uint32Array(n);
  for (let i = 0; i < n; i++) keys[i] = (proto[i]! << 16) | port[i]!; // a byte and 16 bits: 24 bits in all
  const first = new Uint32Array(n);
  const order = new Uint32Array(n);
  const counts = new Uint32Array(MASK + 2);
  // Pass 1, the low 12 bits: arrival order within each bucket.
  for (let i = 0; i < n; i++) counts[(keys[i]! & MASK) + 1]!++;
  for (let b = 1; b <= MASK + 1; b++) counts[b]! += counts[b - 1]!;
  for (let i = 0; i < n; i++) first[counts[keys[i]! & MASK]!++] = i;
  // Pass 2, the high 12 bits, stable over pass 1's order.
  counts.fill(0);
  for (let i = 0; i < n; i++) counts[(keys[i]! >>> BITS) + 1]!++;
  for (let b = 1; b <= MASK + 1; b++) counts[b]! += counts[b - 1]!;
  for (let k = 0; k < n; k++) {
    const i = first[k]!;
    order[counts[keys[i]! >>> BITS]!++] = i;
  }
  return order;
}
