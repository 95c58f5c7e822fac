/**
 * Import of pcap/pcapng files of export datagrams: each UDP datagram goes
 * through the same SourceIngest as live traffic, with the pcap record time
 * as the received time and the datagram's source address as the exporter,
 * so an import of the same capture always stores the same flows.
 */
import { createReadStream, statSync } from 'node:fs';
import type { CollectorCounters, ExporterCounters } from '../decode/collector-counters.js';
import { createFlowDecoder, type FlowDecoder } from '../decode/decoder.js';
import type { FlowSink } from '../../common/flow-sink.js';
import { SourceIngest } from '../decode/ingest.js';
import { CaptureReader, type CaptureCounters } from './pcap.js';
import { type UdpDatagram } from './packet.js';

/** Settings of one import run. */
export interface ImportOptions {
  /** Flow source the flows are stored under. */
  source: string;
  sink: FlowSink;
  /** Only datagrams sent to this UDP port (default: every UDP datagram). */
  port?: number;
  /** The decoder (e.g. with the source's sampling overrides); default a fresh one. */
  decoder?: FlowDecoder;
  batchRows?: number;
  /** Called as bytes are read: (bytes read so far over all files, total bytes). */
  onProgress?: (done: number, total: number) => void;
}

/** What one file held. */
export interface ImportFileResult extends CaptureCounters {
  file: string;
  format: 'pcap' | 'pcapng' | null;
  /** UDP datagrams not sent to `port`. */
  otherPort: number;
  /** Datagrams handed to the decoder. */
  decoded: number;
}

/** Outcome of an import: per-file capture counters and the decoder's counters. */
export interface ImportResult {
  source: string;
  files: ImportFileResult[];
  /** Datagrams handed to the decoder over all files. */
  datagrams: number;
  decoder: { total: ExporterCounters; exporters: Record<string, ExporterCounters> };
}

/** Reads the files in order and feeds their datagrams to the decoder and the sink. */
export async function importCaptures(files: readonly string[], opts: ImportOptions): Promise<ImportResult> {
  const ingest = new SourceIngest({
    source: opts.source,
    sink: opts.sink,
    decoder: opts.decoder ?? createFlowDecoder(),
    batchRows: opts.batchRows ?? 8192,
  });
  const total = files.reduce((n, f) => n + statSync(f).size, 0);
  let done = 0;
  const results: ImportFileResult[] = [];
  let decodedAll = 0;
  let lastExpire = -Infinity;
  for (const file of files) {
    const reader = new CaptureReader();
    let decoded = 0;
    let otherPort = 0;
    const queue: UdpDatagram[] = [];
    // 1 MiB reads: a chunk's datagrams are decoded before the next is read.
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      const buf = chunk as Buffer;
      reader.push(buf, (d) => queue.push(d));
      for (const d of queue) {
        if (opts.port !== undefined && d.dstPort !== opts.port) {
          otherPort++;
          continue;
        }
        ingest.decode(d.payload, ingest.exporter(d.srcAddr), d.timeMs);
        decoded++;
        // Expiry runs on capture time, as the listener's runs on the clock.
        if (d.timeMs - lastExpire >= 10_000) {
          ingest.decoder.expire(d.timeMs);
          lastExpire = d.timeMs;
        }
        if (ingest.full) await ingest.flush();
      }
      queue.length = 0;
      done += buf.length;
      opts.onProgress?.(done, total);
    }
    reader.end();
    decodedAll += decoded;
    results.push({ file, format: reader.format ?? null, ...reader.counters, otherPort, decoded });
  }
  // Data still waiting for its template will not get it: counted as dropped, not left unsaid.
  ingest.decoder.dropHeld();
  await ingest.flush();
  return { source: opts.source, files: results, datagrams: decodedAll, decoder: snapshot(ingest.decoder.counters) };
}

function snapshot(c: CollectorCounters): ImportResult['decoder'] {
  return c.snapshot();
}
