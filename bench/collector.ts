/**
 * `npm run bench -- collector [--seconds N] [--only NAME,…]`: the collector's
 * benchmarks, one table per section.
 *
 * A section is `{ name, title, run(args) → rows }`; add one to SECTIONS (for
 * example UDP ingest side by side with nfcapd) and it is run and printed like
 * the others. Rows are plain records; the columns are the keys of the first
 * row, in order.
 */
import { benchDecode } from './collector-decode.js';
import { benchIngest, parseIngestArgs, summarizeIngest } from './collector-ingest.js';

/** One table row: column name → value (numbers are formatted with separators). */
export type BenchRow = Record<string, string | number>;

/** Parsed command-line options shared by all sections. */
export interface CollectorBenchArgs {
  /** Measuring time per case. */
  seconds: number;
  /** Sections to run (all when empty). */
  only: string[];
  /** Arguments not understood here, for sections with options of their own. */
  rest: string[];
}

/** One benchmark section of the collector suite. */
export interface BenchSection {
  readonly name: string;
  readonly title: string;
  run(args: CollectorBenchArgs): Promise<BenchRow[]>;
}

const decodeSection: BenchSection = {
  name: 'decode',
  title: 'Decode throughput (one core, no I/O)',
  async run(args) {
    return benchDecode({ secondsPerCase: args.seconds }).map((r) => ({
      workload: r.name,
      'flows/datagram': Math.round(r.flowsPerDatagram * 10) / 10,
      'datagrams/s': Math.round(r.datagramsPerSecond),
      'flows/s': Math.round(r.flowsPerSecond),
      'M flows/s': (r.flowsPerSecond / 1e6).toFixed(2),
    }));
  },
};

const ingestSection: BenchSection = {
  name: 'ingest',
  title: 'End-to-end UDP ingest, softflowd v9 replayed by a separate sender (8 MiB receive buffers)',
  async run(args) {
    const opts = parseIngestArgs(args.rest);
    const results = await benchIngest(opts);
    if (opts.repeat > 1) {
      // Rounds alternate the collectors; a line per rate and collector gives the median and every round.
      return summarizeIngest(results).map((r) => ({
        'datagrams/s': r.rate,
        collector: r.collector,
        rounds: r.rounds,
        'flows sent': r.flowsSent,
        'median loss %': r.medianLossPercent.toFixed(2),
        'loss % by round': r.lossPercents.map((x) => x.toFixed(2)).join(' / '),
        'kernel drops (median)': r.medianKernelDrops,
        'queue drops (median)': r.medianQueueDrops ?? '-',
        'main stall ms (max)': r.maxStallMs ?? '-',
        'CPU µs/datagram (median)': r.medianCpuUsPerDatagram ?? '-',
      }));
    }
    return results.map((r) => ({
      'datagrams/s': r.rate,
      collector: r.collector,
      'sent/s': r.sentPerSecond,
      'flows sent': r.flowsSent,
      'flows received': r.flowsReceived,
      'loss %': r.lossPercent.toFixed(2),
      'kernel drops': r.kernelDrops,
      'queue drops': r.queueDrops ?? '-',
      'main stall ms': r.maxStallMs ?? '-',
      'CPU µs/datagram': r.cpuUsPerDatagram ?? '-',
    }));
  },
};

/** The sections `run` knows, in print order. */
export const SECTIONS: BenchSection[] = [decodeSection, ingestSection];

/** Parses `--seconds N`, `--only a,b`; keeps the rest for sections. */
export function parseArgs(args: string[]): CollectorBenchArgs {
  const out: CollectorBenchArgs = { seconds: 2, only: [], rest: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--seconds' && args[i + 1] !== undefined) {
      const n = Number(args[++i]);
      if (!(n > 0)) throw new Error(`--seconds must be a positive number, got ${args[i]}`);
      out.seconds = n;
    } else if (a === '--only' && args[i + 1] !== undefined) {
      out.only = args[++i]!.split(',').filter(Boolean);
    } else {
      out.rest.push(a);
    }
  }
  return out;
}

/** Formats rows as an aligned text table. */
export function formatTable(rows: BenchRow[]): string {
  if (rows.length === 0) return '(no rows)';
  const cols = Object.keys(rows[0]!);
  const cell = (v: string | number | undefined): string => (typeof v === 'number' ? v.toLocaleString('en-US') : (v ?? ''));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]): string =>
    vals.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

/** Entry point called by bench/run.ts. */
export async function run(args: string[]): Promise<void> {
  const parsed = parseArgs(args);
  const chosen = parsed.only.length === 0 ? SECTIONS : SECTIONS.filter((s) => parsed.only.includes(s.name));
  for (const s of chosen) {
    console.log(`\n${s.title}`);
    console.log(formatTable(await s.run(parsed)));
  }
}
