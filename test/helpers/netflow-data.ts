/**
 * Capture files with known content for netflow tests: real export datagrams
 * (the flow-oracle fixtures) decoded by the collector and written by the
 * capture writer, with received times moved into chosen hours; and nfdump's
 * own answers for the same datagrams (reference.json, flows.csv).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFlowDecoder, exporterRef } from '../../collector/decoder.js';
import { FlowBatch } from '../../collector/flow-batch.js';
import type { CaptureWriter } from '../../storage/capture/writer.js';
import type { FlowFixture } from './flow-fixtures.js';

/**
 * Decodes a fixture's datagrams and writes them for `source`, the first one
 * received at `firstReceived` and the others at their original spacing.
 * Returns the received time of the last datagram.
 */
export function writeFixture(writer: CaptureWriter, source: string, fixture: FlowFixture, firstReceived: number): number {
  const decoder = createFlowDecoder();
  const batch = new FlowBatch(8192);
  const datagrams = fixture.datagrams();
  const t0 = datagrams[0]!.timeMs;
  let last = firstReceived;
  for (const d of datagrams) {
    last = firstReceived + (d.timeMs - t0);
    decoder.decode(d.payload, exporterRef(d.srcAddr), last, batch);
  }
  writer.write(source, batch);
  return last;
}

/** One record of nfdump's flow list (flows.csv of a fixture). */
export interface NfdumpFlow {
  /** Flow start, seconds with milliseconds. */
  start: number;
  /** `YYYY-MM-DD HH:MM:SS.mmm` in UTC. */
  startUtc: string;
  srcIp: string;
  dstIp: string;
  srcPort: string;
  /** As nfdump prints it: a number, or `type.code` for ICMP. */
  dstPort: string;
  proto: number;
  /** nfdump 1.7's eight positions `CEUAPRSF`. */
  flags: string;
  packets: number;
  bytes: number;
  /** Seconds, three decimals, as printed. */
  duration: string;
}

/** nfdump's flow list for a fixture. */
export function nfdumpFlows(fixture: FlowFixture): NfdumpFlow[] {
  const lines = readFileSync(join(fixture.dir, 'flows.csv'), 'utf8').trim().split('\n').slice(1);
  return lines.map((line) => {
    const [start, startUtc, srcIp, dstIp, srcPort, dstPort, proto, flags, packets, bytes, duration] = line.split(',');
    return {
      start: Number(start),
      startUtc: startUtc!,
      srcIp: srcIp!,
      dstIp: dstIp!,
      srcPort: srcPort!,
      dstPort: dstPort!,
      proto: Number(proto),
      flags: flags!,
      packets: Number(packets),
      bytes: Number(bytes),
      duration: duration!,
    };
  });
}

/** nfdump's reference answers for a fixture (reference.json). */
export interface NfdumpReference {
  totals: { flows: number; bytes: number; packets: number };
  rst: { flows: number; bytes: number; packets: number };
  protocols_by_bytes: Array<{ name: string; number: number; flows: number; packets: number; bytes: number }>;
  top_src_ip_by_bytes: Array<{ ip: string; bytes: number; packets: number; flows: number }>;
  top_dst_ip_by_bytes: Array<{ ip: string; bytes: number; packets: number; flows: number }>;
}

/** Reads a fixture's reference.json. */
export function nfdumpReference(fixture: FlowFixture): NfdumpReference {
  return JSON.parse(readFileSync(join(fixture.dir, 'reference.json'), 'utf8')) as NfdumpReference;
}
