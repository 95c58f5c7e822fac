/**
 * What the netflow page asks the API, read from the URL: the window (a preset ending now, or custom
 * from/to minutes), the filter, the series dimension, the metric and the table's order. Pure, so the
 * browser tests can name groups the way the page does.
 */
import { formatBytes, formatCount } from '../../format.js';

export type Metric = 'bytes' | 'packets' | 'flows';
export type Step = '1m' | '5m' | '1h';

export const PRESETS = [
  { id: '1h', label: '1 hour', ms: 3_600_000 },
  { id: '6h', label: '6 hours', ms: 6 * 3_600_000 },
  { id: '24h', label: '24 hours', ms: 24 * 3_600_000 },
  { id: '7d', label: '7 days', ms: 7 * 24 * 3_600_000 },
] as const;

/** Series dimensions offered ('' = the total alone). */
export const SERIES_DIMENSIONS: ReadonlyArray<{ id: string; label: string }> = [
  { id: '', label: 'Total' },
  { id: 'proto', label: 'Protocol' },
  { id: 'src_ip', label: 'Source address' },
  { id: 'dst_ip', label: 'Destination address' },
  { id: 'dst_port', label: 'Destination port' },
  { id: 'src_as', label: 'Source AS' },
  { id: 'src_country', label: 'Source country' },
  { id: 'exporter', label: 'Exporter' },
];

export const METRICS: ReadonlyArray<{ id: Metric; label: string }> = [
  { id: 'bytes', label: 'Bytes' },
  { id: 'packets', label: 'Packets' },
  { id: 'flows', label: 'Flows' },
];

const MINUTE = 60_000;

/** The window as the API takes it: inclusive minutes `[from, to]` in epoch ms, and their ISO form. */
export interface FlowWindow {
  from: number;
  to: number;
  start: string;
  end: string;
  /** The preset it came from, or undefined for a custom window. */
  preset: string | undefined;
}

/** `2026-11-26T10:05Z`: a minute in UTC, as the URL and the API take it. */
export function isoMinute(ms: number): string {
  return `${new Date(Math.floor(ms / MINUTE) * MINUTE).toISOString().slice(0, 16)}Z`;
}

/** The window the URL names; a preset (default 6 h) ends at the minute of `now`. */
export function windowOf(params: URLSearchParams, now: number): FlowWindow {
  const from = Date.parse(params.get('from') ?? '');
  const to = Date.parse(params.get('to') ?? '');
  if (Number.isFinite(from) && Number.isFinite(to) && to >= from) {
    return { from, to, start: isoMinute(from), end: isoMinute(to), preset: undefined };
  }
  const preset = PRESETS.find((p) => p.id === params.get('range')) ?? PRESETS[1];
  const end = Math.floor(now / MINUTE) * MINUTE;
  const start = end - preset.ms + MINUTE;
  return { from: start, to: end, start: isoMinute(start), end: isoMinute(end), preset: preset.id };
}

/** The step that keeps a window's points few enough to draw and read: 1 min up to 6 h, 5 min up to 2 days, else 1 h. */
export function stepFor(w: FlowWindow): Step {
  const span = w.to - w.from + MINUTE;
  if (span <= 6 * 3_600_000) return '1m';
  if (span <= 48 * 3_600_000) return '5m';
  return '1h';
}

export function metricOf(params: URLSearchParams): Metric {
  const m = params.get('metric');
  return m === 'packets' || m === 'flows' ? m : 'bytes';
}

export function dimensionOf(params: URLSearchParams): string {
  const d = params.get('by') ?? 'proto';
  if (d === 'total') return '';
  return SERIES_DIMENSIONS.some((x) => x.id === d) ? d : 'proto';
}

const PROTOCOLS: Record<number, string> = {
  1: 'ICMP',
  2: 'IGMP',
  6: 'TCP',
  17: 'UDP',
  41: 'IPv6',
  47: 'GRE',
  50: 'ESP',
  51: 'AH',
  58: 'ICMPv6',
  89: 'OSPF',
  132: 'SCTP',
};

/** A protocol number as operators read it: `TCP`, or `proto 253`. */
export function protocolLabel(n: number): string {
  return PROTOCOLS[n] ?? `proto ${n}`;
}

/** How the page names a group of one dimension: a protocol by name, an AS as `AS64500`, the rest as they are. */
export function groupLabel(key: Record<string, string | number>): string {
  const parts = Object.entries(key).map(([dim, v]) => {
    if (dim === 'proto') return protocolLabel(Number(v));
    if (dim === 'src_as' || dim === 'dst_as') return `AS${v}`;
    if ((dim === 'src_country' || dim === 'dst_country') && v === '') return 'unknown';
    return String(v);
  });
  return parts.length ? parts.join(' · ') : 'Total';
}

/** A metric's value as text. */
export function formatMetric(metric: Metric, n: number): string {
  return metric === 'bytes' ? formatBytes(n) : formatCount(n);
}

/** Runs at most `n` loads at once: the analytics routes queue two scans and eight waiting, so the page must not flood them. */
export function limiter(n: number): <T>(run: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(run: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((go) => waiting.push(go));
    running++;
    try {
      return await run();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
