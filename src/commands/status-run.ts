/** `netsvc status`: the flow collector's (and the syslog receiver's) counters of the running instance, from its /metrics. */
import {
  COUNTER_NAMES,
  zeroCounters,
  type CounterName,
  type ExporterCounters,
} from '../../collector/decode/collector-counters.js';
import type { Config } from '../config.js';
import { FLOW_METRIC_PREFIX, flowMetricName, SYSLOG_METRIC_PREFIX } from '../metric-names.js';
import { StatusError } from './command-errors.js';

/** One sample of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Per-source counters as `status --json` prints them. */
export interface SourceStatus {
  received: number;
  queueDrops: number;
  sinkErrors: number;
  sinkLostFlows: number;
  total: ExporterCounters;
  exporters: Record<string, ExporterCounters>;
}

/** The embedded syslog receiver's counters, as `status --json` prints them. */
export interface SyslogStatus {
  receivedUdp: number;
  receivedTcp: number;
  /** UDP datagrams the kernel dropped (receive buffer full); absent outside Linux. */
  kernelDrops?: number;
  receiveBuffer?: number;
  stored: number;
  dropped: number;
  queueDepth: number;
  writeErrors: number;
  tcpOpen: number;
  /** TCP connections refused, by reason (address_limit, connection_limit, closing). */
  tcpRejected: Record<string, number>;
  tcpIdleClosed: number;
}

/** The whole `status --json` document. */
export interface StatusReport {
  url: string;
  sources: Record<string, SourceStatus>;
  sockets: Record<
    string,
    { unclaimed: number; queueDepth: number; queueHighWater: number; receiveBuffer: number; kernelDrops?: number }
  >;
  /** Present when the syslog receiver runs. */
  syslog?: SyslogStatus;
  /** Each entity's hotspot and logviewer database, from the instance's /health (absent when it has none). */
  databases?: Array<{ entity: string; area: string; kind?: string; state: string }>;
}

/** Parses Prometheus exposition text (the subset prom-client writes). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    for (let l = re.exec(m[3] ?? ''); l; l = re.exec(m[3] ?? '')) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    out.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return out;
}

/** Builds the report from the samples of a scrape. */
export function statusFromSamples(url: string, samples: readonly Sample[]): StatusReport {
  const byMetric = new Map<string, CounterName>(COUNTER_NAMES.map((c) => [flowMetricName(c), c]));
  const report: StatusReport = { url, sources: {}, sockets: {} };
  const source = (name: string): SourceStatus =>
    (report.sources[name] ??= {
      received: 0,
      queueDrops: 0,
      sinkErrors: 0,
      sinkLostFlows: 0,
      total: zeroCounters(),
      exporters: {},
    });
  const socket = (listen: string): StatusReport['sockets'][string] =>
    (report.sockets[listen] ??= { unclaimed: 0, queueDepth: 0, queueHighWater: 0, receiveBuffer: 0 });
  for (const s of samples) {
    if (s.name.startsWith(SYSLOG_METRIC_PREFIX)) {
      syslogSample(
        (report.syslog ??= {
          receivedUdp: 0,
          receivedTcp: 0,
          stored: 0,
          dropped: 0,
          queueDepth: 0,
          writeErrors: 0,
          tcpOpen: 0,
          tcpRejected: {},
          tcpIdleClosed: 0,
        }),
        s,
      );
      continue;
    }
    if (!s.name.startsWith(FLOW_METRIC_PREFIX)) continue;
    const counter = byMetric.get(s.name);
    if (counter && s.labels.source !== undefined && s.labels.exporter !== undefined) {
      const src = source(s.labels.source);
      src.total[counter] += s.value;
      (src.exporters[s.labels.exporter] ??= zeroCounters())[counter] = s.value;
      continue;
    }
    const rest = s.name.slice(FLOW_METRIC_PREFIX.length);
    if (s.labels.source !== undefined) {
      const src = source(s.labels.source);
      if (rest === 'received_datagrams_total') src.received = s.value;
      else if (rest === 'queue_drops_total') src.queueDrops = s.value;
      else if (rest === 'sink_errors_total') src.sinkErrors = s.value;
      else if (rest === 'sink_lost_flows_total') src.sinkLostFlows = s.value;
    } else if (s.labels.listen !== undefined) {
      const sock = socket(s.labels.listen);
      if (rest === 'unclaimed_datagrams_total') sock.unclaimed = s.value;
      else if (rest === 'queue_depth') sock.queueDepth = s.value;
      else if (rest === 'queue_high_water') sock.queueHighWater = s.value;
      else if (rest === 'receive_buffer_bytes') sock.receiveBuffer = s.value;
      else if (rest === 'kernel_drops_total') sock.kernelDrops = s.value;
    }
  }
  return report;
}

function syslogSample(r: SyslogStatus, s: Sample): void {
  switch (s.name.slice(SYSLOG_METRIC_PREFIX.length)) {
    case 'received_total':
      if (s.labels.transport === 'udp') r.receivedUdp = s.value;
      else if (s.labels.transport === 'tcp') r.receivedTcp = s.value;
      break;
    case 'kernel_drops_total':
      r.kernelDrops = s.value;
      break;
    case 'receive_buffer_bytes':
      r.receiveBuffer = s.value;
      break;
    case 'stored_total':
      r.stored = s.value;
      break;
    case 'dropped_total':
      r.dropped = s.value;
      break;
    case 'queue_depth':
      r.queueDepth = s.value;
      break;
    case 'write_errors_total':
      r.writeErrors = s.value;
      break;
    case 'tcp_open_connections':
      r.tcpOpen = s.value;
      break;
    case 'tcp_rejected_total':
      if (s.labels.reason !== undefined) r.tcpRejected[s.labels.reason] = s.value;
      break;
    case 'tcp_idle_closed_total':
      r.tcpIdleClosed = s.value;
      break;
  }
}

/** The /metrics URL of the instance the configuration describes (a wildcard host means this machine). */
export function metricsUrl(config: Config): string {
  let host = config.http.host;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '::1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${config.http.port}/metrics`;
}

/** The instance's metrics URL for what the user gave: its base URL (no path) means its /metrics. */
export function metricsUrlOf(given: string): string {
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    return given; // fetch says what is wrong with it
  }
  if (u.pathname === '/' && u.search === '') u.pathname = '/metrics';
  return u.href;
}

/** Fetches and parses the metrics of a running instance (`given`: its /metrics URL, or its base URL). */
export async function fetchStatus(given: string, timeoutMs = 5000): Promise<StatusReport> {
  const url = metricsUrlOf(given);
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new StatusError(
      `cannot reach netsvc at ${url} (is \`netsvc serve\` running?): ${(err as Error).cause ?? (err as Error).message}`,
    );
  }
  if (!res.ok) throw new StatusError(`${url} answered HTTP ${res.status}`);
  const samples = parseMetrics(await res.text());
  // Something else answered (the console's page, a proxy's): an empty report would read as "nothing received".
  if (!samples.some((s) => s.name.startsWith('netsvc_'))) {
    throw new StatusError(
      `${url} did not answer netsvc's metrics (no netsvc_ counters): give the /metrics URL of a running netsvc serve`,
    );
  }
  const report = statusFromSamples(url, samples);
  // The databases' states, from /health beside /metrics (an instance without it just has none).
  const health = await fetch(new URL('health', url), { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  if (health?.ok) {
    // Something else answering /health (a proxy's page, another service) leaves the databases out.
    const body = (await health.json().catch(() => undefined)) as { databases?: unknown } | undefined;
    if (body && typeof body === 'object' && Array.isArray(body.databases)) {
      report.databases = body.databases as StatusReport['databases'];
    }
  }
  return report;
}

const COLUMNS: [string, CounterName][] = [
  ['datagrams', 'packets'],
  ['flows', 'flows'],
  ['bytes', 'bytes'],
  ['packets', 'packetsInFlows'],
  ['malformed', 'malformed'],
  ['unk.ver', 'unknownVersion'],
  ['no tmpl', 'dataWithoutTemplate'],
  ['tmpl+', 'templatesAdded'],
  ['tmpl~', 'templatesUpdated'],
  ['tmpl-', 'templatesWithdrawn'],
  ['seq.gaps', 'sequenceGaps'],
];

/** The report as an aligned table: one row per source total, one per exporter. */
export function formatStatus(r: StatusReport): string {
  const head = ['source', 'exporter', ...COLUMNS.map(([h]) => h), 'q.drops'];
  const rows: string[][] = [head];
  for (const [name, s] of Object.entries(r.sources).sort(([a], [b]) => a.localeCompare(b))) {
    rows.push([name, '(all)', ...COLUMNS.map(([, c]) => String(s.total[c])), String(s.queueDrops)]);
    for (const [addr, c] of Object.entries(s.exporters).sort(([a], [b]) => a.localeCompare(b))) {
      rows.push(['', addr, ...COLUMNS.map(([, k]) => String(c[k])), '']);
    }
  }
  const widths = head.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
  if (Object.keys(r.sources).length === 0) lines.push('(no flow sources reported)');
  for (const [listen, s] of Object.entries(r.sockets)) {
    const drops = s.kernelDrops === undefined ? '' : `, kernel drops ${s.kernelDrops}`;
    lines.push(
      `socket ${listen}: receive buffer ${s.receiveBuffer} B, queue ${s.queueDepth} (max ${s.queueHighWater}), unclaimed ${s.unclaimed}${drops}`,
    );
  }
  const y = r.syslog;
  if (y) {
    const drops = y.kernelDrops === undefined ? '' : `, kernel drops ${y.kernelDrops}`;
    const buffer = y.receiveBuffer === undefined ? '' : ` (receive buffer ${y.receiveBuffer} B)`;
    const refused = Object.values(y.tcpRejected).reduce((a, b) => a + b, 0);
    const why = Object.entries(y.tcpRejected)
      .filter(([, n]) => n > 0)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ');
    lines.push(
      `syslog: received udp ${y.receivedUdp}${buffer}${drops}, tcp ${y.receivedTcp}; stored ${y.stored}, queued ${y.queueDepth}, dropped ${y.dropped}, write errors ${y.writeErrors}`,
    );
    lines.push(`syslog tcp: ${y.tcpOpen} open, ${refused} refused${why ? ` (${why})` : ''}, ${y.tcpIdleClosed} closed idle`);
  }
  for (const d of r.databases ?? []) {
    const advice = d.state === 'ok' ? '' : ' (the cause is in serve\'s log: "database of entity")';
    // An older serve's /health has no kind.
    const kind = typeof d.kind === 'string' ? ` (${d.kind})` : '';
    lines.push(`database ${d.area} ${d.entity}${kind}: ${d.state}${advice}`);
  }
  return lines.join('\n');
}
