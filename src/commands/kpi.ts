/** `netsvc kpi`'s registration; the work is in kpi-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { KpiRebuildFlags } from './kpi-run.js';

/** Registers `kpi rebuild`. */
export function registerKpiCommands(program: Command, ctx: CliContext): void {
  const kpi = withGlobalOptions(program.command('kpi')).description('the hourly KPI cache of the netflow API');
  withGlobalOptions(kpi.command('rebuild'))
    .description('recompute the hourly KPI cache from the sealed capture files (also drops hours whose file is gone)')
    .option('--source <name>', 'only this flow source (default: every configured source)')
    .option('--from <time>', 'first hour to rebuild: YYYY/MM/DD HH:mm, YYYY-MM-DD or ISO 8601, in the configured time zone')
    .option('--to <time>', 'last hour to rebuild (inclusive), same forms')
    .option('--json', 'print the report as JSON')
    .action(async (opts: KpiRebuildFlags, cmd: Command) => {
      const { kpiRebuildAction } = await import('./kpi-run.js');
      await kpiRebuildAction(ctx, opts, cmd);
    });
}
