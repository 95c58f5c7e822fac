/** `netsvc status`'s registration; the work is in status-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';

/** Registers `status`. */
export function registerStatusCommand(program: Command, ctx: CliContext): void {
  withGlobalOptions(program.command('status'))
    .description("print the flow collector's and the syslog receiver's counters of the running instance (from its /metrics)")
    .option(
      '--url <url>',
      "the instance's metrics URL, or its base URL (default: http://<http.host>:<http.port>/metrics from the configuration)",
    )
    .option('--json', 'print the counters as JSON')
    .action(async (opts: { url?: string; json?: boolean }, cmd: Command) => {
      // A URL of the user's may be https: (or redirect there); the configuration's is netsvc's own, plain HTTP.
      if (opts.url !== undefined) await ctx.beforeTls();
      const { fetchStatus, formatStatus, metricsUrl } = await import('./status-run.js');
      const url = opts.url ?? metricsUrl(await ctx.config(cmd));
      const report = await fetchStatus(url);
      ctx.out(opts.json ? JSON.stringify(report, null, 2) : formatStatus(report));
    });
}
