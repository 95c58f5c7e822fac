/**
 * `netsvc dump <file|source> [--from --to] [--csv|--json] [--limit N] [--stats]`:
 * prints capture-file records like `nfdump -r` (one line per flow: blocks in
 * file order, each block's flows in received order), or with `--stats` the
 * totals `nfdump -I` prints. A damaged file is named on stderr and the exit
 * code is 1, after whatever could be read.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DateTime } from 'luxon';
import { formatAddress, type FlowBatch } from '../../common/flow-batch.js';
import { accumulateTotals } from '../../storage/capture/aggregate.js';
import { CaptureFileError, emptyTotals, type ColumnName, type FileTotals } from '../../storage/capture/format.js';
import { parseCaptureName } from '../../storage/capture/file-names.js';
import { listCaptureFiles, newReadStats, scanFlows, type CaptureFileInfo } from '../../storage/capture/reader.js';
import { CaptureFile } from '../../storage/capture/capture-file.js';
import { compileFilter, type CompiledFilter } from '../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../storage/flow-query/filter-parse.js';
import type { GeoLookup } from '../../storage/geo/geo-lookup.js';
import { queryUsageError } from './query-options.js';
import { DumpError } from './command-errors.js';
import { UsageError } from './context.js';

const PROTO_NAMES: Record<number, string> = { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 47: 'GRE', 50: 'ESP', 58: 'ICMP6', 112: 'VRRP' };

/** Six-position TCP flags `UAPRSF`, `.` for unset (nfdump 1.6 style, as the API shows them). */
export function flagString(flags: number): string {
  const names = 'UAPRSF';
  let s = '';
  for (let i = 0; i < 6; i++) s += flags & (1 << (5 - i)) ? names[i] : '.';
  return s;
}

/** Parses `YYYY/MM/DD HH:mm[:ss]`, `YYYY-MM-DD HH:mm[:ss]` (in `zone`) or ISO 8601; `end` makes a minute inclusive. */
export function parseWhen(text: string, zone: string, end: boolean): number {
  const t = text.trim();
  const m = /^(\d{4})[/-](\d{2})[/-](\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(t);
  if (m) {
    const dt = DateTime.fromObject(
      { year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: +(m[4] ?? 0), minute: +(m[5] ?? 0), second: +(m[6] ?? 0) },
      { zone },
    );
    if (!dt.isValid)
      throw new UsageError(
        `invalid time '${text}' (${dt.invalidExplanation ?? dt.invalidReason}): use YYYY/MM/DD HH:mm, YYYY-MM-DD or ISO 8601`,
      );
    // An end given to the minute covers that minute (as the netflow API's windows do); a date covers the day.
    const extra = !end ? 0 : m[6] !== undefined ? 1000 : m[4] !== undefined ? 60_000 : 86_400_000;
    return dt.toMillis() + extra;
  }
  const iso = DateTime.fromISO(t, { zone });
  if (!iso.isValid) throw new UsageError(`invalid time '${text}': use YYYY/MM/DD HH:mm, YYYY-MM-DD or ISO 8601`);
  return iso.toMillis();
}

/** Formats ms since epoch in a zone as `YYYY-MM-DD HH:MM:SS.mmm`, caching the zone offset per hour. */
export function timeFormatter(zone: string): (ms: number) => string {
  const offsets = new Map<number, number>();
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return (ms) => {
    const hour = Math.floor(ms / 3_600_000);
    let off = offsets.get(hour);
    if (off === undefined) {
      off = DateTime.fromMillis(ms, { zone }).offset;
      offsets.set(hour, off);
    }
    const d = new Date(ms + off * 60_000);
    const msec = String(d.getUTCMilliseconds()).padStart(3, '0');
    return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${msec}`;
  };
}

function portText(proto: number, port: number, dst: boolean): string {
  if (dst && (proto === 1 || proto === 58)) return `${port >> 8}.${port & 0xff}`;
  return String(port);
}

function endpoint(addr: string, port: string): string {
  return addr.includes(':') ? `${addr}.${port}` : `${addr}:${port}`;
}

/** A CSV field, quoted when it holds a quote, comma or line break. */
export function csvField(v: string | number): string {
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const CSV_HEADER = [
  'received',
  'start',
  'end',
  'duration',
  'proto',
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'flags',
  'packets',
  'bytes',
  'tos',
  'ip_version',
  'sampling_interval',
  'input_if',
  'output_if',
  'src_as',
  'dst_as',
  'next_hop',
  'exporter',
] as const;

function recordOf(b: FlowBatch, i: number, fmt: (ms: number) => string): Record<(typeof CSV_HEADER)[number], string | number> {
  const c = b.cols;
  const proto = c.proto[i]!;
  return {
    received: fmt(c.received[i]!),
    start: fmt(c.start[i]!),
    end: fmt(c.end[i]!),
    duration: ((c.end[i]! - c.start[i]!) / 1000).toFixed(3),
    proto: PROTO_NAMES[proto] ?? String(proto),
    src_ip: formatAddress(b.srcAddr, i),
    src_port: portText(proto, c.srcPort[i]!, false),
    dst_ip: formatAddress(b.dstAddr, i),
    dst_port: portText(proto, c.dstPort[i]!, true),
    flags: flagString(c.tcpFlags[i]!),
    packets: c.packets[i]!,
    bytes: c.bytes[i]!,
    tos: c.tos[i]!,
    ip_version: c.ipVersion[i]!,
    sampling_interval: c.samplingInterval[i]!,
    input_if: c.inputIf[i]!,
    output_if: c.outputIf[i]!,
    src_as: c.srcAs[i]!,
    dst_as: c.dstAs[i]!,
    next_hop: formatAddress(b.nextHop, i),
    exporter: formatAddress(b.exporter, i),
  };
}

/** What `dump` was asked to read. */
export interface DumpOptions {
  from?: string;
  to?: string;
  csv?: boolean;
  json?: boolean;
  limit?: string;
  stats?: boolean;
  /** nfdump filter syntax: only the flows it selects. */
  filter?: string;
}

/** The compiled `--filter` (AS and country from `geo`, as `top` and the API have them), or a usage error. */
function dumpFilter(text: string | undefined, geo: GeoLookup | undefined): CompiledFilter | undefined {
  if (text === undefined) return undefined;
  try {
    return compileFilter(parseFilter(text), { geo });
  } catch (e) {
    throw queryUsageError(e);
  }
}

/**
 * Rows of `b` the filter keeps (all without one); with `byTime`, in received order. A block
 * that sealing wrote holds its rows by protocol and port (capture/block-order.ts), and dump
 * prints what `nfdump -r` prints, the flows as they arrived. Flows received in the same
 * millisecond (one datagram's) stay in the block's order: their order of arrival is not kept.
 */
function selected(
  b: FlowBatch,
  filter: CompiledFilter | undefined,
  scratch: { idx: Uint32Array },
  byTime: boolean,
): { idx: Uint32Array; n: number } {
  if (scratch.idx.length < b.length) scratch.idx = new Uint32Array(b.length);
  let n = b.length;
  if (!filter) for (let i = 0; i < b.length; i++) scratch.idx[i] = i;
  else n = filter.select(b, 0, b.length, scratch.idx);
  if (!byTime) return { idx: scratch.idx, n };
  const rec = b.cols.received;
  const idx = scratch.idx.subarray(0, n);
  let ordered = true;
  for (let k = 1; k < n && ordered; k++) ordered = rec[idx[k]!]! >= rec[idx[k - 1]!]!;
  if (!ordered) idx.sort((x, y) => rec[x]! - rec[y]! || x - y);
  return { idx: scratch.idx, n };
}

/** Resolves `<file|source>` to the files to read: a path, or every hour of a flow source. */
function filesOf(target: string, dataDir: string, zone: string): { files: (string | CaptureFileInfo)[]; ident: string } {
  if (existsSync(target) && statSync(target).isFile()) {
    // A file named as a sealed hour must have its footer: cut off, it is damage, not an open file's torn tail.
    const name = basename(target);
    const parsed = parseCaptureName(name, zone);
    if (parsed?.kind !== 'sealed') return { files: [target], ident: target };
    const info: CaptureFileInfo = {
      path: target,
      name,
      source: basename(dirname(target)),
      // Not narrowed by the name's hour: a file copied from another zone is still read whole; blocks carry their own times.
      hourStart: -Infinity,
      hourEnd: Infinity,
      kind: 'sealed',
      size: statSync(target).size,
    };
    return { files: [info], ident: target };
  }
  if (!/^[A-Za-z0-9_-]+$/.test(target)) throw new UsageError(`no such capture file: ${target}`);
  const files = listCaptureFiles(dataDir, target, zone);
  if (files.length === 0) throw new UsageError(`no capture files for source '${target}' in ${dataDir}/flows/${target}`);
  return { files, ident: target };
}

function statsLines(ident: string, t: FileTotals): string[] {
  const first = t.all.flows ? t.first : 0;
  const last = t.all.flows ? t.last : 0;
  const classes = ['tcp', 'udp', 'icmp', 'other'] as const;
  const lines = [`Ident: ${ident}`, `Flows: ${t.all.flows}`];
  for (const k of classes) lines.push(`Flows_${k}: ${t[k].flows}`);
  lines.push(`Packets: ${t.all.packets}`);
  for (const k of classes) lines.push(`Packets_${k}: ${t[k].packets}`);
  lines.push(`Bytes: ${t.all.bytes}`);
  for (const k of classes) lines.push(`Bytes_${k}: ${t[k].bytes}`);
  lines.push(
    `First: ${Math.floor(first / 1000)}`,
    `Last: ${Math.floor(last / 1000)}`,
    `msec_first: ${first - Math.floor(first / 1000) * 1000}`,
    `msec_last: ${last - Math.floor(last / 1000) * 1000}`,
    `Sequence failures: 0`,
  );
  return lines;
}

function addTotals(into: FileTotals, t: FileTotals): void {
  const had = into.all.flows > 0;
  for (const k of ['all', 'tcp', 'udp', 'icmp', 'other'] as const) {
    into[k].flows += t[k].flows;
    into[k].bytes += t[k].bytes;
    into[k].packets += t[k].packets;
  }
  if (t.all.flows > 0) {
    into.first = had ? Math.min(into.first, t.first) : t.first;
    into.last = had ? Math.max(into.last, t.last) : t.last;
    into.receivedMin = had ? Math.min(into.receivedMin, t.receivedMin) : t.receivedMin;
    into.receivedMax = had ? Math.max(into.receivedMax, t.receivedMax) : t.receivedMax;
  }
  into.rstFlows += t.rstFlows;
}

/** Runs `dump`; returns normally, or throws DumpError after printing when damage was met. */
export function runDump(
  target: string,
  opts: DumpOptions,
  dataDir: string,
  zone: string,
  out: (s: string) => void,
  err: (s: string) => void,
  geo?: GeoLookup,
): void {
  if (opts.csv && opts.json) throw new UsageError('--csv and --json exclude each other');
  const from = opts.from !== undefined ? parseWhen(opts.from, zone, false) : undefined;
  const to = opts.to !== undefined ? parseWhen(opts.to, zone, true) : undefined;
  let limit = Infinity;
  if (opts.limit !== undefined) {
    limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
  }
  const filter = dumpFilter(opts.filter, geo);
  const scratch = { idx: new Uint32Array(0) };
  const { files, ident } = filesOf(target, dataDir, zone);
  const stats = newReadStats();
  const problems: string[] = [];
  const onError = (e: CaptureFileError): void => {
    problems.push(e.message);
    err(`netsvc: damaged capture file: ${e.message} (${e.code})`);
  };

  if (opts.stats) {
    const totals = emptyTotals();
    const windowed = from !== undefined || to !== undefined || filter !== undefined;
    for (const f of files) {
      const path = typeof f === 'string' ? f : f.path;
      let sealedTotals: FileTotals | undefined;
      if (!windowed) {
        // A sealed file carries its totals in the footer: no need to decode a block.
        try {
          const cf = CaptureFile.open(path, { requireSealed: typeof f !== 'string' && f.kind === 'sealed' });
          sealedTotals = cf.totals;
          cf.close();
        } catch (e) {
          if (!(e instanceof CaptureFileError)) throw e;
          onError(e);
          continue;
        }
      }
      if (sealedTotals) {
        addTotals(totals, sealedTotals);
        continue;
      }
      const t = emptyTotals();
      const cols: ColumnName[] = [
        'received',
        'start',
        'end',
        'bytes',
        'packets',
        'proto',
        'tcpFlags',
        ...(filter?.columns ?? []),
      ];
      for (const b of scanFlows([f], { from, to, columns: cols, stats, onError })) {
        if (!filter) {
          accumulateTotals(t, b);
          continue;
        }
        const { idx, n } = selected(b, filter, scratch, false);
        for (let k = 0; k < n; k++) accumulateTotals(t, b, idx[k]!, 1);
      }
      addTotals(totals, t);
    }
    if (opts.json) {
      out(JSON.stringify({ ident, ...totals, problems }, null, 2));
    } else {
      for (const l of statsLines(ident, totals)) out(l);
    }
  } else {
    const fmt = timeFormatter(zone);
    let printed = 0;
    let bytes = 0;
    let packets = 0;
    if (opts.csv) out(CSV_HEADER.join(','));
    else if (opts.json) out('[');
    else
      out(
        `${'Date first seen'.padEnd(23)} ${'Duration'.padStart(9)} Proto ${'Src IP Addr:Port'.padStart(30)}    ${'Dst IP Addr:Port'.padEnd(30)} Flags  ${'Packets'.padStart(8)} ${'Bytes'.padStart(10)}`,
      );
    outer: for (const b of scanFlows(files, { from, to, stats, onError })) {
      const { idx, n } = selected(b, filter, scratch, true);
      for (let k = 0; k < n; k++) {
        const i = idx[k]!;
        if (printed >= limit) break outer;
        const r = recordOf(b, i, fmt);
        if (opts.csv) out(CSV_HEADER.map((k) => csvField(r[k])).join(','));
        else if (opts.json) out(`${printed > 0 ? ',' : ''}${JSON.stringify(r)}`);
        else {
          out(
            `${r.start} ${String(r.duration).padStart(9)} ${String(r.proto).padEnd(5)} ${endpoint(String(r.src_ip), String(r.src_port)).padStart(30)} -> ${endpoint(String(r.dst_ip), String(r.dst_port)).padEnd(30)} ${r.flags} ${String(r.packets).padStart(8)} ${String(r.bytes).padStart(10)}`,
          );
        }
        printed++;
        bytes += b.cols.bytes[i]!;
        packets += b.cols.packets[i]!;
      }
    }
    if (opts.json) out(']');
    else if (!opts.csv) out(`Summary: total flows: ${printed}, total bytes: ${bytes}, total packets: ${packets}`);
  }
  if (problems.length > 0) {
    throw new DumpError(`${problems.length} damaged capture file(s) or block(s) skipped`);
  }
}
