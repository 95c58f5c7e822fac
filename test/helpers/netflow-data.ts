/**
 * Capture files with known content for netflow tests: real export datagrams
 * (the flow-oracle fixtures) decoded by the collector and written by the
 * capture writer, with received times moved into chosen hours; and nfdump's
 * own answers for the same datagrams (reference.json, flows.csv).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFlowDecoder, exporterRef } from '../../collector/decode/decoder.js';
import { FlowBatch } from '../../common/flow-batch.js';
import { CaptureWriter } from '../../storage/capture/writer.js';
import { CaptureNetflowQuery } from '../../storage/kpi/capture-netflow-query.js';
import { localOpenHours, OpenHourAggregator } from '../../storage/kpi/open-hour-aggregator.js';
import { KpiBuilder } from '../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
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

const HOUR_MS = 3_600_000;
/** First of the three hours `threeHourCapture` fills: 2026-03-25 08:00 UTC. */
export const H1 = Date.parse('2026-03-25T08:00:00Z');
/** Second hour, 09:00 UTC. */
export const H2 = H1 + HOUR_MS;
/** Third hour, 10:00 UTC, still open when the capture is handed over. */
export const H3 = H2 + HOUR_MS;

/** Capture files of source `netflow` over three hours, with the KPI cache and the query service over them. */
export interface ThreeHourCapture {
  dir: string;
  writer: CaptureWriter;
  cache: SqliteKpiCache;
  builder: KpiBuilder;
  /** Over sources `netflow` and `lentor`, in UTC. */
  query: CaptureNetflowQuery;
  /** The fake clock of writer and query: 10:30 once set up. */
  now: () => number;
  /** Closes writer and cache and removes the directory. */
  close(): Promise<void>;
}

/**
 * Writes fixture `a` received from 08:10, `b` from 09:10 and `c` from 10:05 (UTC)
 * for source `netflow` in a new temporary directory (`prefix…`), then moves the
 * clock to 10:30: 08:00 and 09:00 are sealed and in the KPI cache (built by the
 * hourSealed listener, as in the service), 10:00 is the open hour.
 */
export async function threeHourCapture(
  prefix: string,
  [a, b, c]: [FlowFixture, FlowFixture, FlowFixture],
): Promise<ThreeHourCapture> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let clock = H1;
  const now = () => clock;
  // As serve runs them: the writer keeps no per-key aggregates; the open hour's come from its file.
  const writer = new CaptureWriter({
    dataDir: dir,
    timezone: 'UTC',
    timer: false,
    now,
    flushIntervalMs: 1000,
    blockRows: 256,
    aggregates: false,
  });
  const cache = new SqliteKpiCache(join(dir, 'kpi.sqlite'));
  const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
  writer.onHourSealed((e) => builder.onSealed(e).then(() => undefined));
  await writer.start();
  writeFixture(writer, 'netflow', a, H1 + 10 * 60_000);
  writeFixture(writer, 'netflow', b, H2 + 10 * 60_000);
  writeFixture(writer, 'netflow', c, H3 + 5 * 60_000);
  clock = H3 + 30 * 60_000;
  await writer.tick(); // seals 08:00 and 09:00
  writer.flush();
  const query = new CaptureNetflowQuery({
    dataDir: dir,
    timezone: 'UTC',
    sources: ['netflow', 'lentor'],
    cache,
    openHours: localOpenHours(new OpenHourAggregator({ now })),
    now,
  });
  return {
    dir,
    writer,
    cache,
    builder,
    query,
    now,
    async close() {
      await writer.close();
      cache.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
