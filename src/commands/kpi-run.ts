/** `netsvc kpi rebuild [--source S] [--from T] [--to T]`: recompute the hourly KPI cache from the capture files. */
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { hourStartOf } from '../../storage/capture/file-names.js';
import { KpiBuilder, type SyncResult } from '../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
import type { Config } from '../config.js';
import { kpiCachePath } from '../areas/netflow-storage-config.js';
import { parseWhen } from './dump-run.js';
import { UsageError, type CliContext } from './context.js';

/** What `kpi rebuild` did for one source. */
export interface RebuildReport extends SyncResult {
  source: string;
}

/** Options of a rebuild, as parsed from the command line. */
export interface RebuildOptions {
  sources: readonly string[];
  /** Hours whose start is in [from, to) are rebuilt. */
  from?: number;
  to?: number;
  onProgress?: (done: number, total: number, source: string) => void;
}

/** Rebuilds the cache for the given sources and hours; hours outside the range are left alone. */
export async function rebuildKpi(config: Config, opts: RebuildOptions): Promise<RebuildReport[]> {
  const cache = new SqliteKpiCache(kpiCachePath(config));
  try {
    // No yielding: nothing else runs in this process, so scans go at full speed.
    const builder = new KpiBuilder({ cache, dataDir: config.dataDir, timezone: config.timezone, yieldEvery: 0 });
    const out: RebuildReport[] = [];
    for (const source of opts.sources) {
      const r = await builder.sync(source, {
        from: opts.from,
        to: opts.to,
        force: true,
        onProgress: (done, total) => opts.onProgress?.(done, total, source),
      });
      out.push({ source, ...r });
    }
    return out;
  } finally {
    cache.close();
  }
}

/** The command-line flags of `kpi`, as commander gives them. */
export interface KpiRebuildFlags {
  source?: string;
  from?: string;
  to?: string;
  json?: boolean;
}

/** The action of `netsvc kpi rebuild`. */
export async function kpiRebuildAction(ctx: CliContext, opts: KpiRebuildFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  const all = Object.keys(config.flowSources);
  if (opts.source !== undefined && !all.includes(opts.source)) {
    throw new UsageError(`unknown flow source '${opts.source}' (configured: ${all.join(', ')})`);
  }
  const zone = config.timezone;
  const from = opts.from === undefined ? undefined : hourStartOf(parseWhen(opts.from, zone, false), zone);
  // The hour holding the --to time is included.
  const to = opts.to === undefined ? undefined : hourStartOf(parseWhen(opts.to, zone, false), zone) + 1;
  if (from !== undefined && to !== undefined && to <= from) throw new UsageError('--to is before --from');
  const bar =
    process.stderr.isTTY && !opts.json
      ? new SingleBar({
          format: 'kpi rebuild {source} [{bar}] {value}/{total} hours',
          hideCursor: true,
          clearOnComplete: true,
        })
      : undefined;
  let current = '';
  const reports = await rebuildKpi(config, {
    sources: opts.source ? [opts.source] : all,
    from,
    to,
    onProgress: (done, total, source) => {
      if (!bar) return;
      if (source !== current) {
        if (current) bar.stop();
        current = source;
        bar.start(total, 0, { source });
      }
      bar.update(done, { source });
    },
  });
  bar?.stop();
  if (opts.json) {
    ctx.out(JSON.stringify(reports, null, 2));
    return;
  }
  for (const r of reports) {
    ctx.out(`${r.source}: ${r.built} hours rebuilt, ${r.dropped} dropped (file gone), ${r.failed} unreadable`);
  }
}
