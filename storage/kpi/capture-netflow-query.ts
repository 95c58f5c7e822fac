/**
 * NetflowQuery over the capture files, the KPI cache and the capture
 * writer's open-hour aggregates.
 *
 * A KPI window is cut into its hours. An hour wholly inside the window comes
 * from the cache when its sealed file is cached and unchanged; the open hour
 * from the aggregates of its file kept by OpenHours (the KPI worker under
 * serve); anything else (a partly covered hour, a sealed hour not cached
 * yet) from a scan of its file. Totals add up; the
 * three top lists are merged exactly by top-merge.ts whatever mix of origins
 * the hours have, so `hourly_cache` and `fallback` give the same numbers.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import ipaddr from 'ipaddr.js';
import { exactCount, formatAddress } from '../../common/flow-batch.js';
import type { FlowAggregatesView, KeyKind, KeyStats } from '../capture/aggregate.js';
import { INTERVAL_SEC, type CaptureFileError } from '../capture/format.js';
import { hourEndOf, hourStartOf, parseCaptureName, sealedName, sourceDir } from '../capture/file-names.js';
import { newestFlows, newReadStats, scanFlows, type CaptureFileInfo, type ReadStats } from '../capture/reader.js';
import { AGGREGATE_COLUMNS, HourAggregate, keyTableSource, portSource } from './hour-aggregate.js';
import { BYTES, FLOWS, type Metric, type RankedRows } from './key-table.js';
import { KEY_WIDTH, type Dimension, type KpiCache, type ProtocolRow } from './kpi-cache.js';
import type { AddressTop, FlowRow, KpiFigures, LatestFile, NetflowQuery, PortTop, QueryCounters } from './netflow-query.js';
import type { OpenHours, OpenHourSnapshot } from './open-hour-aggregator.js';
import { mergeTop, type RankedSource } from './top-merge.js';
import type { Log } from '../../common/log.js';
import { LogThrottle } from '../../common/log-throttle.js';

/** A deeper level of an open hour was asked for after the hour moved on from its snapshot. */
class StaleOpenHour extends Error {
  override readonly name = 'StaleOpenHour';
}

/** What the query service reads from. */
export interface CaptureNetflowQueryOptions {
  dataDir: string;
  timezone: string;
  sources: readonly string[];
  cache: KpiCache;
  /** The running aggregates of an open hour (the capture writer's `aggregatesFor`, in-process). */
  openHour?: (source: string, hourStart: number) => FlowAggregatesView | undefined;
  /** Open hours' aggregates read from their files, kept elsewhere (serve: the KPI worker); used when `openHour` has none. */
  openHours?: OpenHours;
  now: () => number;
  log?: Log;
}

const TOP_N = 10;
/** Blocks scanned between yields to the event loop. */
const YIELD_EVERY = 16;
const FLOW_COLUMNS = [
  'received',
  'start',
  'end',
  'srcAddr',
  'dstAddr',
  'srcPort',
  'dstPort',
  'proto',
  'tcpFlags',
  'packets',
  'bytes',
  'packetsRest',
  'bytesRest',
] as const;
const DIMENSIONS: ReadonlyArray<{ dim: Dimension; metric: Metric; kind: KeyKind }> = [
  { dim: 'src', metric: BYTES, kind: 'srcIp' },
  { dim: 'dst', metric: BYTES, kind: 'dstIp' },
  { dim: 'port', metric: FLOWS, kind: 'dstPort' },
];

/** The figures of one hour of a window, whatever they came from. */
interface HourPart {
  hourStart: number;
  live: boolean;
  flows: number;
  bytes: number;
  packets: number;
  rstFlows: number;
  protocols: ProtocolRow[];
  ranked: Partial<Record<Dimension, RankedSource>>;
}

function addressKey(text: string): Uint8Array {
  const a = ipaddr.parse(text);
  const bytes = a.kind() === 'ipv4' ? (a as ipaddr.IPv4).toIPv4MappedAddress().toByteArray() : a.toByteArray();
  return Uint8Array.from(bytes);
}

function keyBytes(kind: KeyKind, key: string | number): Uint8Array {
  if (kind === 'dstPort') return Uint8Array.of((Number(key) >> 8) & 0xff, Number(key) & 0xff);
  return addressKey(String(key));
}

function rowsOf(kind: KeyKind, entries: Array<{ key: string | number } & KeyStats>): RankedRows {
  const w = KEY_WIDTH[kind === 'dstPort' ? 'port' : 'src'];
  const rows: RankedRows = {
    keyWidth: w,
    length: entries.length,
    keys: new Uint8Array(entries.length * w),
    vals: new Float64Array(entries.length * 3),
  };
  entries.forEach((e, i) => {
    rows.keys.set(keyBytes(kind, e.key), i * w);
    rows.vals[i * 3] = e.bytes;
    rows.vals[i * 3 + 1] = e.packets;
    rows.vals[i * 3 + 2] = e.flows;
  });
  return rows;
}

/**
 * A RankedSource over the writer's aggregates: its own top 257 as level 0
 * (the 257th gives the bound), and every other key as level 1. Level 1 is
 * "all keys not in level 0", so its tie order never matters.
 */
function viewSource(view: FlowAggregatesView, kind: KeyKind, metric: Metric): RankedSource {
  const by: keyof KeyStats = metric === BYTES ? 'bytes' : metric === FLOWS ? 'flows' : 'packets';
  let first: Array<{ key: string | number } & KeyStats> | undefined;
  return {
    level(level) {
      first ??= view.top(kind, by, 257);
      if (level === 0) {
        const head = first.slice(0, 256);
        if (head.length === 0) return undefined;
        return { rows: rowsOf(kind, head), next: first[256]?.[by] ?? 0 };
      }
      if (level > 1 || first.length <= 256) return undefined;
      const taken = new Set(first.slice(0, 256).map((e) => e.key));
      const rest: Array<{ key: string | number } & KeyStats> = [];
      view.forEach(kind, (key, stats) => {
        if (!taken.has(key)) rest.push({ key, ...stats });
      });
      return { rows: rowsOf(kind, rest), next: 0 };
    },
  };
}

function addressTops(rows: RankedRows): AddressTop[] {
  const out: AddressTop[] = [];
  for (let i = 0; i < rows.length; i++) {
    out.push({
      ip: formatAddress(rows.keys, i),
      bytes: rows.vals[i * 3]!,
      packets: rows.vals[i * 3 + 1]!,
      flows: rows.vals[i * 3 + 2]!,
    });
  }
  return out;
}

function portTops(rows: RankedRows): PortTop[] {
  const out: PortTop[] = [];
  for (let i = 0; i < rows.length; i++) {
    out.push({
      port: (rows.keys[i * 2]! << 8) | rows.keys[i * 2 + 1]!,
      bytes: rows.vals[i * 3]!,
      packets: rows.vals[i * 3 + 1]!,
      flows: rows.vals[i * 3 + 2]!,
    });
  }
  return out;
}

/** The query service; see the module comment. */
export class CaptureNetflowQuery implements NetflowQuery {
  private readonly stats: ReadStats = newReadStats();
  private readonly warnThrottle: LogThrottle;
  private readonly names = new Map<string, ReturnType<typeof parseCaptureName>>();

  constructor(private readonly opts: CaptureNetflowQueryOptions) {
    // A damaged file would otherwise log once per query.
    this.warnThrottle = new LogThrottle(10_000, opts.now);
  }

  get counters(): QueryCounters {
    const s = this.stats;
    return {
      corruptFiles: s.corruptFiles,
      corruptBlocks: s.corruptBlocks,
      blocksRead: s.blocksRead,
      blocksSkipped: s.blocksSkipped,
    };
  }

  sources(): readonly string[] {
    return this.opts.sources;
  }

  private readonly onError = (err: CaptureFileError): void => {
    if (!this.warnThrottle.allow('damaged')) return;
    this.opts.log?.warn({ err: err.message, code: err.code, path: err.path }, 'damaged capture data skipped by a query');
  };

  /** Files of a source whose hour overlaps [from, to), oldest first; a sealed file wins over a stale open one. */
  private files(source: string, from = -Infinity, to = Infinity): CaptureFileInfo[] {
    const dir = sourceDir(this.opts.dataDir, source);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const byHour = new Map<number, CaptureFileInfo>();
    for (const name of names) {
      const parsed = this.parseName(name);
      if (!parsed || parsed.kind === 'sealing') continue;
      const hourEnd = hourEndOf(parsed.hourStart);
      if (hourEnd <= from || parsed.hourStart >= to) continue;
      const prev = byHour.get(parsed.hourStart);
      if (prev && prev.kind === 'sealed') continue;
      const path = join(dir, name);
      let size: number;
      try {
        size = statSync(path).size;
      } catch {
        continue; // renamed by a seal or removed by retention meanwhile
      }
      byHour.set(parsed.hourStart, { path, name, source, hourStart: parsed.hourStart, hourEnd, kind: parsed.kind, size });
    }
    return [...byHour.values()].sort((a, b) => a.hourStart - b.hourStart);
  }

  /** parseCaptureName, remembered: the same names come back on every query. */
  private parseName(name: string): ReturnType<typeof parseCaptureName> {
    if (this.names.has(name)) return this.names.get(name);
    const parsed = parseCaptureName(name, this.opts.timezone);
    if (this.names.size >= 100_000) this.names.clear();
    this.names.set(name, parsed);
    return parsed;
  }

  latest(source: string): LatestFile {
    const zone = this.opts.timezone;
    const files = this.files(source);
    const now = this.opts.now();
    const newest = files[files.length - 1];
    const oldest = files[0];
    const hourStart = newest ? newest.hourStart : hourStartOf(now, zone);
    const cached =
      newest !== undefined &&
      newest.kind === 'sealed' &&
      this.opts.cache.hours(source, hourStart, hourStart + 1).some((h) => h.file === newest.name && h.fileSize === newest.size);
    return {
      hourStart,
      hourEnd: hourEndOf(hourStart),
      fileName: sealedName(hourStart, zone),
      intervalSec: INTERVAL_SEC,
      cached,
      dataStart: oldest ? oldest.hourStart : hourStart,
      dataEnd: hourEndOf(hourStart),
    };
  }

  private async scanPart(file: CaptureFileInfo, from: number, to: number, live: boolean): Promise<HourPart> {
    const agg = new HourAggregate();
    let blocks = 0;
    for (const batch of scanFlows([file], { from, to, columns: AGGREGATE_COLUMNS, stats: this.stats, onError: this.onError })) {
      agg.add(batch);
      if (++blocks % YIELD_EVERY === 0) await yieldToLoop();
    }
    return {
      hourStart: file.hourStart,
      live,
      flows: agg.flows,
      bytes: agg.bytes,
      packets: agg.packets,
      rstFlows: agg.rstFlows,
      protocols: agg.protocols(),
      ranked: {
        src: keyTableSource(agg.src, BYTES),
        dst: keyTableSource(agg.dst, BYTES),
        port: portSource(agg, FLOWS),
      },
    };
  }

  private cachedPart(
    source: string,
    hour: { hourStart: number; flows: number; bytes: number; packets: number; rstFlows: number },
  ): HourPart {
    const cache = this.opts.cache;
    const ranked: HourPart['ranked'] = {};
    for (const { dim } of DIMENSIONS) ranked[dim] = { level: (k) => cache.level(source, hour.hourStart, dim, k) };
    return { ...hour, live: false, protocols: cache.protocols(source, hour.hourStart), ranked };
  }

  private viewPart(hourStart: number, view: FlowAggregatesView): HourPart {
    const t = view.totals();
    const ranked: HourPart['ranked'] = {};
    for (const { dim, metric, kind } of DIMENSIONS) ranked[dim] = viewSource(view, kind, metric);
    return {
      hourStart,
      live: true,
      flows: t.flows,
      bytes: t.bytes,
      packets: t.packets,
      rstFlows: t.rstFlows,
      protocols: view.protocols(),
      ranked,
    };
  }

  /** The part of an open hour held by OpenHours: level 0 from the snapshot, deeper levels asked for by version. */
  private snapshotPart(hourStart: number, snap: OpenHourSnapshot, openHours: OpenHours): HourPart {
    const ranked: HourPart['ranked'] = {};
    for (const { dim } of DIMENSIONS) {
      ranked[dim] = {
        level: async (k) => {
          if (k === 0) return snap.level0[dim];
          const got = await openHours.level(snap.path, dim, k, snap.version);
          if (got === 'stale') throw new StaleOpenHour();
          return got;
        },
      };
    }
    return {
      hourStart,
      live: true,
      flows: snap.flows,
      bytes: snap.bytes,
      packets: snap.packets,
      rstFlows: snap.rstFlows,
      protocols: snap.protocols,
      ranked,
    };
  }

  async kpi(source: string, from: number, to: number, opts: { useCache?: boolean } = {}): Promise<KpiFigures> {
    // An open hour that moved on between its snapshot and a deeper level of it: ask again.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.kpiOnce(source, from, to, opts);
      } catch (err) {
        if (!(err instanceof StaleOpenHour) || attempt >= 3) throw err;
      }
    }
  }

  private async kpiOnce(source: string, from: number, to: number, opts: { useCache?: boolean }): Promise<KpiFigures> {
    const zone = this.opts.timezone;
    const useCache = opts.useCache !== false;
    const now = this.opts.now();
    const first = hourStartOf(from, zone);
    const files = new Map(this.files(source, from, to).map((f) => [f.hourStart, f]));
    const cached = new Map(useCache ? this.opts.cache.hours(source, first, to).map((h) => [h.hourStart, h]) : []);
    const parts: HourPart[] = [];
    const hours: KpiFigures['hours'] = [];
    let live = false;
    for (let h = first; h < to; h = hourEndOf(h)) {
      const end = hourEndOf(h);
      const lo = Math.max(from, h);
      const hi = Math.min(to, end);
      const whole = lo === h && hi === end;
      const file = files.get(h);
      const view = this.opts.openHour?.(source, h);
      const hit = cached.get(h);
      let part: HourPart | undefined;
      if (whole && !view && file?.kind === 'sealed' && hit && hit.file === file.name && hit.fileSize === file.size) {
        part = this.cachedPart(source, hit);
      } else if (whole && view) {
        part = this.viewPart(h, view);
      } else if (whole && file?.kind === 'current' && this.opts.openHours) {
        const snap = await this.opts.openHours.snapshot(file.path);
        part = snap ? this.snapshotPart(h, snap, this.opts.openHours) : await this.scanPart(file, lo, hi, true);
      } else if (file) {
        part = await this.scanPart(file, lo, hi, true);
      }
      // The hour in progress is live even while it has no flows yet.
      if ((part && part.live) || (now >= h && now < end)) live = true;
      if (part) parts.push(part);
      hours.push({ hourStart: h, bytes: part?.bytes ?? 0, flows: part?.flows ?? 0 });
    }

    const protocols = new Map<number, ProtocolRow>();
    const totals = { flows: 0, bytes: 0, packets: 0, rstFlows: 0 };
    for (const p of parts) {
      totals.flows += p.flows;
      totals.bytes += p.bytes;
      totals.packets += p.packets;
      totals.rstFlows += p.rstFlows;
      for (const r of p.protocols) {
        const acc = protocols.get(r.proto) ?? { proto: r.proto, flows: 0, bytes: 0, packets: 0 };
        acc.flows += r.flows;
        acc.bytes += r.bytes;
        acc.packets += r.packets;
        protocols.set(r.proto, acc);
      }
    }
    const top = (dim: Dimension, metric: Metric): Promise<RankedRows> =>
      mergeTop(
        parts.flatMap((p) => (p.ranked[dim] ? [p.ranked[dim]] : [])),
        metric,
        TOP_N,
        KEY_WIDTH[dim],
      );
    return {
      origin: live ? 'fallback' : 'hourly_cache',
      ...totals,
      protocols: [...protocols.values()].sort((a, b) => b.bytes - a.bytes || a.proto - b.proto),
      topSrc: addressTops(await top('src', BYTES)),
      topDst: addressTops(await top('dst', BYTES)),
      topPorts: portTops(await top('port', FLOWS)),
      hours,
    };
  }

  async flows(source: string, from: number, to: number, limit: number): Promise<FlowRow[]> {
    const files = this.files(source, from, to);
    if (files.length === 0 || limit <= 0) return [];
    const batch = newestFlows(files, { from, to, limit, columns: FLOW_COLUMNS, stats: this.stats, onError: this.onError });
    const c = batch.cols;
    const out: FlowRow[] = [];
    for (let i = 0; i < batch.length; i++) {
      out.push({
        received: c.received[i]!,
        start: c.start[i]!,
        end: c.end[i]!,
        srcIp: formatAddress(batch.srcAddr, i),
        dstIp: formatAddress(batch.dstAddr, i),
        srcPort: c.srcPort[i]!,
        dstPort: c.dstPort[i]!,
        proto: c.proto[i]!,
        tcpFlags: c.tcpFlags[i]!,
        packets: exactCount(c.packets[i]!, c.packetsRest[i]!),
        bytes: exactCount(c.bytes[i]!, c.bytesRest[i]!),
      });
    }
    return out;
  }
}
