/**
 * Start-up warm-up of the flow queries' hot code (issue 20: a query in a fresh process took 1.5
 * to 2.5 times as long as the same query later). V8 runs a function unoptimised until it has
 * run a while, and a scan's loops (column decoding, filters, group tables, ranking) then cost
 * several times their optimised price; the scan worker thread has its own compiled code. So,
 * once serve listens, a few queries of the kinds operators ask (top-N by a port, an address and
 * the protocol, filtered and not; a first page with its count) run over two small synthetic
 * hours, one sealed and one open, written to a directory of their own, large enough to be
 * shared with the worker thread, which is then warm too. Their answers are thrown away; the
 * directory is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { syntheticFlows } from '../capture/warm-up.js';
import { CaptureWriter } from '../capture/writer.js';
import { parseDimensions } from './dimensions.js';
import { FlowAnalytics } from './flow-analytics.js';
import type { ScanWorkers } from './scan-pool.js';
import { MIN_SPLIT_BLOCKS } from './top-n.js';

/**
 * Rows of a synthetic block: long enough loops for V8 to optimise them while they run, and
 * groups enough for the tables' larger sizes. With 8 192 (82 000 rows in all, a second) the
 * first `src_ip` / `dst port 443` top-N over a 10 M-flow hour took 620–680 ms and the fourth
 * 290–340; with 32 768 (1.8 s), 410–450 and the second 300–400 (bench/README.md, session 20).
 */
const BLOCK_ROWS = 32_768;
/** Runs of the sealed hour's first page with its count in each round (below), about 5 ms each. */
const COUNT_REPEATS = 10;

/** Rows of the live blocks that sealing merges into blocks of BLOCK_ROWS. */
const SMALL_BLOCK_ROWS = BLOCK_ROWS / 8;

/** What a warm-up did. */
export interface QueryWarmUp {
  ms: number;
  queries: number;
  rows: number;
  /** Whether it stopped at the signal before running every query. */
  aborted: boolean;
}

/**
 * Runs the warm-up queries `rounds` times, with the scan worker pool `workers` (the process's
 * by default); stops between queries once `signal` is aborted. The clock is only for the report.
 */
export async function warmUpQueries(
  opts: { workers?: ScanWorkers; rounds?: number; signal?: AbortSignal; clock?: () => number } = {},
): Promise<QueryWarmUp> {
  const clock = opts.clock ?? (() => performance.now());
  const started = clock();
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-query-warm-up-'));
  // A fixed hour: nothing here depends on today's date.
  const hour = Date.UTC(2026, 0, 1, 9);
  const rows = (MIN_SPLIT_BLOCKS + 2) * BLOCK_ROWS;
  let queries = 0;
  const done = (): QueryWarmUp => ({ ms: clock() - started, queries, rows, aborted: opts.signal?.aborted ?? false });
  try {
    if (opts.signal?.aborted) return done();
    // Two hours, so that both kinds of block are read: the first (MIN_SPLIT_BLOCKS blocks)
    // written in small blocks, which sealing merges and orders by protocol and port (read by
    // bisection); the second (two blocks) still open, in arrival order. The writer's clock is in
    // the second hour: closing it seals the first.
    const writer = new CaptureWriter({
      dataDir: dir,
      timezone: 'UTC',
      blockRows: BLOCK_ROWS,
      now: () => hour + 90 * 60_000,
      timer: false,
    });
    await writer.start();
    try {
      // Written a small block at a time, yielding between them: written at once, the 330 000
      // rows held serve's HTTP thread for over half a second (a request then waited that long).
      const sealed = MIN_SPLIT_BLOCKS * BLOCK_ROWS;
      for (let at = 0; at < sealed; at += SMALL_BLOCK_ROWS) {
        writer.write('warm-up', syntheticFlows(SMALL_BLOCK_ROWS, hour + at));
        writer.flush();
        await yieldToLoop();
        if (opts.signal?.aborted) return done();
      }
      // The open hour's rows as one run (as many distinct keys as rows, for the tables' larger
      // sizes), made in pieces; no flush: the writer cuts them into blocks of BLOCK_ROWS itself.
      for (let at = 0; at < rows - sealed; at += SMALL_BLOCK_ROWS) {
        writer.write('warm-up', syntheticFlows(Math.min(SMALL_BLOCK_ROWS, rows - sealed - at), hour + 3_600_000, at));
        await yieldToLoop();
        if (opts.signal?.aborted) return done();
      }
    } finally {
      await writer.close();
    }
    const analytics = new FlowAnalytics({
      dataDir: dir,
      timezone: 'UTC',
      now: () => hour + 3 * 3_600_000,
      scanWorkers: opts.workers,
    });
    const window = { source: 'warm-up', from: hour, to: hour + 2 * 3_600_000 };
    const sealedHour = { ...window, to: hour + 3_600_000 };
    const top = (by: string, filter?: string) => () =>
      analytics.top({ ...window, by: parseDimensions(by), filter, metric: 'bytes', limit: 10 });
    const steps = [
      top('dst_port', 'proto tcp'),
      top('src_ip', 'dst port 443'),
      // A filter few rows pass (5 %): their columns are gathered row by row, not decoded whole.
      top('src_ip', 'proto udp and dst port 443'),
      top('proto'),
      top('dst_ip'),
      top('src_ip,dst_port', 'proto udp or port 53'),
      () => analytics.flows({ ...window, filter: 'port 443', order: 'time', limit: 100 }),
      () => analytics.flows({ ...window, filter: 'proto udp and dst port 443', order: 'time', limit: 100 }),
      () => analytics.flows({ ...window, filter: 'src net 10.0.0.0/16', order: 'bytes', limit: 100 }),
      // The sealed hour alone: the worker thread, which takes the blocks this thread has not
      // reached yet, would otherwise mostly meet the open hour's.
      () => analytics.top({ ...sealedHour, by: parseDimensions('src_ip'), filter: 'dst port 443', metric: 'bytes', limit: 10 }),
      // Its first page with the count, COUNT_REPEATS times: the count's per-block steps (a
      // bisection, the filter's block verdicts) run once per block, and run once, the first real
      // page took up to twice as long as the next (V8 had not optimised them yet).
      ...Array.from(
        { length: COUNT_REPEATS },
        () => () => analytics.flows({ ...sealedHour, filter: 'dst port 443', order: 'time', limit: 100 }),
      ),
    ];
    for (let r = 0; r < (opts.rounds ?? 2); r++) {
      for (const step of steps) {
        if (opts.signal?.aborted) return done();
        await step();
        queries++;
      }
    }
    return done();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
