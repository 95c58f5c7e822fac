/**
 * Start-up warm-up of the capture writer's hot code: block encoding and the
 * open hour's aggregates. Right after a start V8 runs them unoptimised,
 * several times slower, and at a high rate the writer's first blocks then
 * took a core from the flow listeners. Encoding a synthetic block (IPv4 and
 * some IPv6 rows, the protocol and size mix of real traffic) a few times
 * before the first real one lets V8 optimise them. Nothing is written.
 */
import { FlowBatch } from '../../common/flow-batch.js';
import { FlowAggregates, accumulateTotals } from './aggregate.js';
import { encodeBlock } from './block-codec.js';
import type { ByteCodec } from './codec.js';
import { emptyTotals } from './format.js';

/** Encodes and aggregates `rounds` synthetic blocks of `rows` rows with `codec`; returns the bytes encoded. */
export function warmUpEncoding(codec: ByteCodec, nowMs: number, rows = 16_384, rounds = 4): number {
  const b = syntheticFlows(rows, nowMs);
  let bytes = 0;
  for (let r = 0; r < rounds; r++) {
    bytes += encodeBlock(b, 0, rows, codec).block.length;
    new FlowAggregates().add(b, 0, rows);
    accumulateTotals(emptyTotals(), b, 0, rows);
  }
  return bytes;
}

/**
 * `rows` synthetic flows received from `nowMs` on, 16 per millisecond: mostly IPv4 TCP with some
 * UDP and ICMP, every 64th row IPv6, ports, sizes and addresses spread as real traffic spreads
 * them (deterministic). Warm-ups run the hot code over them. `firstRow` > 0 gives rows firstRow …
 * of a longer run, so that a run made in pieces holds the rows one call would have made.
 */
export function syntheticFlows(rows: number, nowMs: number, firstRow = 0): FlowBatch {
  const b = new FlowBatch(rows);
  const c = b.cols;
  b.length = rows;
  for (let r = 0; r < rows; r++) {
    const i = firstRow + r;
    const k = (i * 2_654_435_761) >>> 0; // spread, deterministic
    c.received[r] = nowMs + (i >> 4);
    c.start[r] = c.received[r]! - (k % 60_000);
    c.end[r] = c.start[r]! + (k % 30_000);
    c.proto[r] = i % 7 === 0 ? 17 : i % 29 === 0 ? 1 : 6;
    c.bytes[r] = 40 + (k % 150_000);
    c.packets[r] = 1 + (k % 120);
    c.srcPort[r] = 1024 + (k % 60_000);
    c.dstPort[r] = i % 3 === 0 ? 443 : k % 1024;
    c.tcpFlags[r] = c.proto[r] === 6 ? (k % 64) | 0x10 : 0;
    c.tos[r] = 0;
    c.samplingInterval[r] = 1;
    c.inputIf[r] = k % 8;
    c.outputIf[r] = (k >> 3) % 8;
    c.srcAs[r] = 0;
    c.dstAs[r] = k % 3 === 0 ? 64_500 + (k % 7) : 0;
    if (i % 64 === 63) {
      c.ipVersion[r] = 6;
      for (const col of [b.srcAddr, b.dstAddr])
        for (let j = 0; j < 16; j++) col[r * 16 + j] = j === 0 ? 0x20 : j === 1 ? 0x01 : (k >> j) & 0xff;
      b.nextHop.fill(0, r * 16, r * 16 + 16);
    } else {
      c.ipVersion[r] = 4;
      b.setV4('srcAddr', r, (0x0a000000 + (k % 65_536)) >>> 0);
      b.setV4('dstAddr', r, (0xc0a80000 + (k % 4096)) >>> 0);
      b.setV4('nextHop', r, 0x0a000001);
    }
    b.setV4('exporter', r, 0xc0000201);
  }
  return b;
}
