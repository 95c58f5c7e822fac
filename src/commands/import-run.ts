/** `netsvc import <pcap…>`: decode the export datagrams of capture files offline. */
import { existsSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { createFlowDecoder } from '../../collector/decode/decoder.js';
import { SummarySink, type FlowSink, type FlowSummary } from '../../common/flow-sink.js';
import { importCaptures, type ImportResult } from '../../collector/pcap/pcap-import.js';
import { CaptureWriter } from '../../storage/capture/writer.js';
import type { Config } from '../config.js';
import { sourceDir } from '../../storage/capture/file-names.js';
import { KpiBuilder } from '../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
import { acquireDataDirLock } from '../data-dir-lock.js';
import { captureWriterOptions, kpiCachePath } from '../areas/netflow-storage-config.js';
import { UsageError, type CliContext } from './context.js';

/** The `--json` document of an import: what was read, what was decoded, the totals. */
export interface ImportReport extends Omit<FlowSummary, 'firstReceived' | 'lastReceived'> {
  source: string;
  files: ImportResult['files'];
  /** Datagrams handed to the decoder. */
  datagrams: number;
  /** Received-time range of the flows (the pcap record times), ISO, or null. */
  firstReceived: string | null;
  lastReceived: string | null;
  /** Decoder counters over all exporters, and per exporter address. */
  counters: ImportResult['decoder']['total'];
  exporters: ImportResult['decoder']['exporters'];
  /** What went to the capture files (null with --no-store). */
  stored: StoredReport | null;
}

/** The capture files an import wrote. */
export interface StoredReport {
  /** `<dataDir>/flows/<source>`. */
  dir: string;
  /** Sealed hourly files, in the order they were sealed. */
  files: string[];
  rowsWritten: number;
  writeErrors: number;
  rowsLost: number;
}

/** Options of `runImport`, as the command line gives them. */
export interface ImportCommandOptions {
  port?: number;
  source: string;
  /** Extra sink (the capture writer) the flows also go to. */
  sink?: FlowSink;
  onProgress?: (done: number, total: number) => void;
}

/** Imports the files and builds the report; the command's work without its I/O. */
export async function runImport(config: Config, files: readonly string[], opts: ImportCommandOptions): Promise<ImportReport> {
  const summary = new SummarySink();
  const extra = opts.sink;
  const sink: FlowSink = extra
    ? {
        write(source, batch) {
          summary.write(source, batch);
          return extra.write(source, batch);
        },
      }
    : summary;
  const sourceConfig = config.flowSources[opts.source];
  const decoder = createFlowDecoder({ samplingOverride: { ...sourceConfig?.sampling } });
  const result = await importCaptures(files, {
    source: opts.source,
    sink,
    port: opts.port,
    decoder,
    onProgress: opts.onProgress,
  });
  const s = summary.summary();
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return {
    source: opts.source,
    files: result.files,
    datagrams: result.datagrams,
    flows: s.flows,
    bytes: s.bytes,
    packets: s.packets,
    protocols: s.protocols,
    nfdumpGroups: s.nfdumpGroups,
    firstReceived: iso(s.firstReceived),
    lastReceived: iso(s.lastReceived),
    counters: result.decoder.total,
    exporters: result.decoder.exporters,
    stored: null,
  };
}

/** Imports into the capture files of the source (every hour touched is sealed at the end). */
export async function runImportToStore(
  config: Config,
  files: readonly string[],
  opts: Omit<ImportCommandOptions, 'sink'>,
  log: (line: string) => void,
): Promise<ImportReport> {
  // A running serve (or another import) owns the open files of this data directory: its writer
  // would have them "recovered" and sealed under it, losing live data.
  const lock = acquireDataDirLock(config.dataDir, 'import', 'import into another --data-dir or stop serve first');
  try {
    return await importLocked(config, files, opts, log);
  } finally {
    lock.release();
  }
}

async function importLocked(
  config: Config,
  files: readonly string[],
  opts: Omit<ImportCommandOptions, 'sink'>,
  log: (line: string) => void,
): Promise<ImportReport> {
  const writer = new CaptureWriter({
    ...captureWriterOptions(config),
    // Offline: blocks are flushed by size and every hour is sealed at the end, not by the clock.
    timer: false,
    log: {
      info: () => {},
      warn: (obj, msg) => log(`warning: ${msg} ${JSON.stringify(obj)}`),
      error: (obj, msg) => log(`error: ${msg} ${JSON.stringify(obj)}`),
    },
  });
  const sealed: string[] = [];
  writer.onHourSealed((e) => {
    if (e.source === opts.source) sealed.push(e.path);
  });
  // Every hour the import seals goes into the KPI cache, as with live ingest.
  const kpiCache = new SqliteKpiCache(kpiCachePath(config));
  const kpi = new KpiBuilder({ cache: kpiCache, dataDir: config.dataDir, timezone: config.timezone, yieldEvery: 0 });
  writer.onHourSealed(async (e) => {
    if (!(await kpi.onSealed(e))) log(`warning: sealed hour ${e.path} could not be read back; not in the KPI cache`);
  });
  await writer.start();
  let report: ImportReport;
  try {
    report = await runImport(config, files, { ...opts, sink: writer });
  } finally {
    try {
      await writer.close({ sealAll: true });
      await kpi.idle();
    } finally {
      kpiCache.close();
    }
  }
  const w = writer.counters;
  report.stored = {
    dir: sourceDir(config.dataDir, opts.source),
    files: sealed,
    rowsWritten: w.rowsWritten,
    writeErrors: w.writeErrors,
    rowsLost: w.rowsLost,
  };
  return report;
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new UsageError(`--port must be a UDP port 1-65535, got '${text}'`);
  }
  return Number(text);
}

function humanReport(r: ImportReport): string {
  const lines: string[] = [];
  for (const f of r.files) {
    const problems = [
      f.fileErrors ? 'file damaged or cut off' : '',
      f.truncated ? `${f.truncated} truncated` : '',
      f.malformed ? `${f.malformed} malformed` : '',
      f.fragments ? `${f.fragments} fragments` : '',
      f.unsupportedLinkType ? `${f.unsupportedLinkType} unsupported link type` : '',
    ].filter(Boolean);
    lines.push(
      `${f.file}: ${f.format ?? 'not a capture'}, ${f.records} records, ${f.udpDatagrams} UDP datagrams, ${f.decoded} decoded` +
        (f.otherPort ? `, ${f.otherPort} to other ports` : '') +
        (problems.length ? ` (${problems.join(', ')})` : ''),
    );
  }
  lines.push(`source ${r.source}: ${r.datagrams} datagrams → ${r.flows} flows, ${r.bytes} bytes, ${r.packets} packets`);
  const g = r.nfdumpGroups;
  lines.push(`  flows tcp ${g.tcp.flows}, udp ${g.udp.flows}, icmp ${g.icmp.flows}, other ${g.other.flows}`);
  if (r.firstReceived) lines.push(`  received ${r.firstReceived} … ${r.lastReceived}`);
  if (r.stored) {
    const st = r.stored;
    lines.push(
      `  stored ${st.rowsWritten} flows in ${st.files.length} hourly file(s) under ${st.dir}` +
        (st.writeErrors ? ` (${st.writeErrors} write errors, ${st.rowsLost} flows lost)` : ''),
    );
  }
  const c = r.counters;
  const notable = Object.entries(c).filter(([k, v]) => v > 0 && !['packets', 'flows', 'bytes', 'packetsInFlows'].includes(k));
  if (notable.length) lines.push(`  counters: ${notable.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  return lines.join('\n');
}

/** The command-line flags of `import`, as commander gives them. */
export interface ImportFlags {
  port?: string;
  source: string;
  store: boolean;
  json?: boolean;
}

/** The action of `netsvc import`. */
export async function importAction(ctx: CliContext, files: string[], opts: ImportFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  if (!/^[A-Za-z0-9_-]+$/.test(opts.source)) throw new UsageError(`--source must be a flow source name, got '${opts.source}'`);
  for (const f of files) if (!existsSync(f)) throw new UsageError(`no such file: ${f}`);
  const port = parsePort(opts.port);
  let bar: SingleBar | undefined;
  if (process.stdout.isTTY && process.stderr.isTTY) {
    bar = new SingleBar({ format: 'import [{bar}] {percentage}% | {value}/{total} MiB | ETA {eta}s', hideCursor: true });
  }
  const mib = (n: number): number => Math.round((n / 1048576) * 10) / 10;
  let started = false;
  const importOpts: ImportCommandOptions = {
    port,
    source: opts.source,
    onProgress: bar
      ? (done, total) => {
          if (!started) bar.start(mib(total), 0);
          started = true;
          bar.update(mib(done));
        }
      : undefined,
  };
  let report: ImportReport;
  try {
    report = opts.store
      ? await runImportToStore(config, files, importOpts, (line) => ctx.err(line))
      : await runImport(config, files, importOpts);
  } finally {
    bar?.stop();
  }
  ctx.out(opts.json ? JSON.stringify(report, null, 2) : humanReport(report));
}
