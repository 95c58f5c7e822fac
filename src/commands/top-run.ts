/**
 * `netsvc top`: the top-N groups of a flow source's matching flows, printed
 * the way `nfdump -s <dim>/<metric> -n N` prints them (and for up to three
 * dimensions at once), or as CSV or JSON for scripts.
 */
import { DimensionError, keyRecord, parseDimensions, type Dimension } from '../../storage/flow-query/dimensions.js';
import { FlowAnalytics } from '../../storage/flow-query/flow-analytics.js';
import { openGeoLookup } from '../../storage/geo/open-geo-lookup.js';
import { MAX_TOP, type Counts, type Metric, type TopAnswer } from '../../storage/flow-query/top-n.js';
import type { Config } from '../config.js';
import { DumpError } from './command-errors.js';
import { UsageError } from './context.js';
import { queryUsageError } from './query-options.js';
import { csvField, parseWhen, timeFormatter } from './dump-run.js';

export interface TopOptions {
  by: string;
  metric?: string;
  filter?: string;
  from?: string;
  to?: string;
  n?: string;
  source?: string;
  csv?: boolean;
  json?: boolean;
}

const METRICS: readonly Metric[] = ['bytes', 'packets', 'flows'];

/** `12( 0.1)`: a count and its share of the total, as nfdump prints it. */
function withShare(n: number, total: number): string {
  const pct = total > 0 ? (100 * n) / total : 0;
  return `${n}(${pct.toFixed(1).padStart(4)})`;
}

function scaled(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(Math.round(n));
}

function rates(c: Counts, seconds: number): { pps: string; bps: string; bpp: string } {
  const s = seconds > 0 ? seconds : 0;
  return {
    pps: scaled(s ? c.packets / s : 0),
    bps: scaled(s ? (8 * c.bytes) / s : 0),
    bpp: String(c.packets ? Math.round(c.bytes / c.packets) : 0),
  };
}

/** The text table: one header, one line per group, `other`, and nfdump's summary line. */
function textLines(t: TopAnswer, dims: readonly Dimension[], metric: Metric, n: number, zone: string): string[] {
  const fmt = timeFormatter(zone);
  const names = dims.map((d) => d.name);
  const cells = t.rows.map((r) => {
    const seconds = (r.last! - r.first!) / 1000;
    return [
      fmt(r.first!),
      seconds.toFixed(3),
      ...r.key.map((k, i) => (k === '' && names[i]!.endsWith('country') ? '--' : String(k))),
      withShare(r.flows, t.total.flows),
      withShare(r.packets, t.total.packets),
      withShare(r.bytes, t.total.bytes),
      ...Object.values(rates(r, seconds)),
    ];
  });
  const header = ['Date first seen', 'Duration', ...names, 'Flows(%)', 'Packets(%)', 'Bytes(%)', 'pps', 'bps', 'bpp'];
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => row[c]!.length)));
  const line = (row: string[]): string => row.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join('  ');
  const out = [`Top ${n} ${names.join(', ')} ordered by ${metric}:`, line(header), ...cells.map(line)];
  if (t.other.flows > 0) {
    out.push(
      `other: ${t.groups - t.rows.length} more groups, flows ${withShare(t.other.flows, t.total.flows)}, packets ${withShare(t.other.packets, t.total.packets)}, bytes ${withShare(t.other.bytes, t.total.bytes)}`,
    );
  }
  out.push(
    `Summary: total flows: ${t.total.flows}, total bytes: ${t.total.bytes}, total packets: ${t.total.packets}, avg bpp: ${t.total.packets ? Math.round(t.total.bytes / t.total.packets) : 0}`,
  );
  return out;
}

/** The answer as JSON (`{rows, other, total, groups}`), CSV, or nfdump's table. */
function answerLines(
  t: TopAnswer,
  opts: TopOptions,
  dims: readonly Dimension[],
  metric: Metric,
  n: number,
  zone: string,
): string[] {
  if (opts.json) {
    const row = (key: ReadonlyArray<string | number>, c: Counts) => ({
      ...keyRecord(dims, key),
      flows: c.flows,
      packets: c.packets,
      bytes: c.bytes,
    });
    return [
      JSON.stringify({ rows: t.rows.map((r) => row(r.key, r)), other: t.other, total: t.total, groups: t.groups }, null, 2),
    ];
  }
  if (opts.csv) {
    return [
      [...dims.map((d) => d.name), 'flows', 'packets', 'bytes'].join(','),
      ...t.rows.map((r) => [...r.key, r.flows, r.packets, r.bytes].map(csvField).join(',')),
    ];
  }
  return textLines(t, dims, metric, n, zone);
}

/** Runs `netsvc top`. */
export async function runTop(opts: TopOptions, config: Config, out: (s: string) => void): Promise<void> {
  if (opts.csv && opts.json) throw new UsageError('--csv and --json exclude each other');
  let dims: Dimension[];
  try {
    dims = parseDimensions(opts.by);
  } catch (err) {
    if (err instanceof DimensionError) throw new UsageError(`--by: ${err.message}`);
    throw err;
  }
  const metric = (opts.metric ?? 'bytes') as Metric;
  if (!METRICS.includes(metric)) throw new UsageError(`--metric must be one of ${METRICS.join(', ')}, not '${opts.metric}'`);
  const n = opts.n === undefined ? 10 : /^\d{1,4}$/.test(opts.n) ? Number(opts.n) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_TOP) throw new UsageError(`-n must be an integer from 1 to ${MAX_TOP}`);
  const source = opts.source ?? 'netflow';
  const zone = config.timezone;
  const from = opts.from !== undefined ? parseWhen(opts.from, zone, false) : -Infinity;
  const to = opts.to !== undefined ? parseWhen(opts.to, zone, true) : Infinity;
  if (to <= from) throw new UsageError('--to must be after --from');
  const geo = openGeoLookup(config.geo, config.dataDir);
  const analytics = new FlowAnalytics({
    dataDir: config.dataDir,
    timezone: zone,
    geo: () => geo,
    geoSource: { config: config.geo, dataDir: config.dataDir },
    now: Date.now,
  });
  let t: TopAnswer;
  try {
    // The text table shows each group's first start and duration, as nfdump -s does.
    t = await analytics.top({
      source,
      from,
      to,
      filter: opts.filter,
      by: dims,
      metric,
      limit: n,
      times: !opts.json && !opts.csv,
    });
  } catch (err) {
    throw queryUsageError(err);
  }
  for (const line of answerLines(t, opts, dims, metric, n, zone)) out(line);
  const skipped = analytics.counters.corruptFiles + analytics.counters.corruptBlocks;
  if (skipped > 0) throw new DumpError(`${skipped} damaged capture file(s) or block(s) skipped: the answer leaves them out`);
}
