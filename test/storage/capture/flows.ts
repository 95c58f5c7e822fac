/** Random flows for capture tests: every column varied, IPv4 (mapped) and IPv6 mixed. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from '../../../bench/capture-flows.js';
import { ADDRESS_COLUMNS, FlowBatch, NUMERIC_COLUMNS } from '../../../common/flow-batch.js';

// The storage benchmark's flow generator has the same deterministic PRNG (mulberry32); one copy serves both.
export { prng };

export interface FlowOptions {
  /** First received time (ms); rows follow at `stepMs` intervals. */
  received: number;
  stepMs?: number;
  seed?: number;
  /** Share of IPv6 rows. */
  v6?: number;
}

/** `n` random flows, received times increasing from `opts.received`. */
export function randomFlows(n: number, opts: FlowOptions): FlowBatch {
  const r = prng(opts.seed ?? 1);
  const b = new FlowBatch(n);
  const step = opts.stepMs ?? 10;
  for (let k = 0; k < n; k++) {
    const i = b.addRow();
    const c = b.cols;
    const received = opts.received + Math.floor(k * step);
    c.received[i] = received;
    c.end[i] = received - Math.floor(r() * 30_000);
    c.start[i] = c.end[i]! - Math.floor(r() * 120_000);
    c.bytes[i] = 40 + Math.floor(r() * (r() < 0.01 ? 5e9 : 1e5)); // a few huge flows
    c.packets[i] = 1 + Math.floor(r() * 1000);
    c.srcPort[i] = Math.floor(r() * 65536);
    c.dstPort[i] = [53, 80, 443, 22, 123][Math.floor(r() * 5)]!;
    c.proto[i] = [6, 17, 1, 58, 47, 50, 112][Math.floor(r() * 7)]!;
    c.tcpFlags[i] = Math.floor(r() * 256);
    c.tos[i] = Math.floor(r() * 4) * 8;
    c.samplingInterval[i] = r() < 0.5 ? 1 : 1000;
    c.inputIf[i] = Math.floor(r() * 48);
    c.outputIf[i] = Math.floor(r() * 48);
    c.srcAs[i] = Math.floor(r() * 4294967295);
    c.dstAs[i] = 64512 + Math.floor(r() * 100);
    const v6 = r() < (opts.v6 ?? 0.3);
    c.ipVersion[i] = v6 ? 6 : 4;
    for (const col of ['srcAddr', 'dstAddr', 'nextHop'] as const) {
      if (v6) {
        const a = new Uint8Array(16);
        a[0] = 0x20;
        a[1] = 0x01;
        a[2] = 0x0d;
        a[3] = 0xb8;
        for (let k2 = 4; k2 < 16; k2++) a[k2] = Math.floor(r() * 256);
        b.setV6(col, i, a, 0);
      } else {
        b.setV4(col, i, ((10 << 24) | Math.floor(r() * 0xffffff)) >>> 0);
      }
    }
    b.setV4('exporter', i, r() < 0.5 ? 0x7f000001 : 0xc0000201);
  }
  return b;
}

/** Row `i` of a batch as a plain object (every column), for comparisons. */
export function rowOf(b: FlowBatch, i: number): Record<string, number | string> {
  const o: Record<string, number | string> = {};
  for (const name of NUMERIC_COLUMNS) o[name] = b.cols[name][i]!;
  for (const name of ADDRESS_COLUMNS) o[name] = Buffer.from(b[name].subarray(i * 16, i * 16 + 16)).toString('hex');
  return o;
}

/** All rows of batches as objects. */
export function rowsOf(batches: Iterable<FlowBatch>): Record<string, number | string>[] {
  const out: Record<string, number | string>[] = [];
  for (const b of batches) for (let i = 0; i < b.length; i++) out.push(rowOf(b, i));
  return out;
}

/** Rows as a sorted list of their texts: equal when two lists hold the same rows in any order (sealing orders a block's rows by protocol and port). */
export function inAnyOrder(rows: readonly Record<string, number | string>[]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

/** Rows [from, to) of a batch as a new batch. */
export function slice(b: FlowBatch, from: number, to: number): FlowBatch {
  const out = new FlowBatch(Math.max(1, to - from));
  for (let i = from; i < to; i++) {
    const j = out.addRow();
    for (const name of NUMERIC_COLUMNS) out.cols[name][j] = b.cols[name][i]!;
    for (const name of ADDRESS_COLUMNS) out.copyAddress(name, j, b[name], i);
  }
  return out;
}

/** A fresh temporary data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'netsvc-capture-'));
}

/** A clock tests move by hand. */
export class FakeClock {
  constructor(public t: number) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}
