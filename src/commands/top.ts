/** `netsvc top`: registration only; the work is in top-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';

/** Registers `netsvc top`. */
export function registerTopCommand(program: Command, ctx: CliContext): Command {
  return withGlobalOptions(program.command('top'))
    .description('top-N groups of flows by one to three dimensions, like nfdump -s DIM/METRIC -n N [filter]')
    .requiredOption(
      '--by <dims>',
      'comma-separated dimensions: src_ip, dst_ip, src_port, dst_port, proto, exporter, input_if, output_if, tos, tcp_flags, src_as, dst_as, src_country, dst_country (an address may take a prefix: src_ip/24)',
    )
    .option('--metric <metric>', 'bytes, packets or flows (default bytes)')
    .option('--filter <expr>', "nfdump filter syntax, e.g. 'proto tcp and dst port 443'")
    .option('--from <time>', 'received time from (YYYY/MM/DD HH:mm in the configured zone, or ISO 8601); default: all data')
    .option('--to <time>', 'received time to, inclusive to the minute given')
    .option('-n <n>', 'how many groups (default 10, at most 1000)')
    .option('--source <name>', 'flow source (default netflow)')
    .option('--csv', 'CSV with a header line')
    .option('--json', 'JSON: {"rows": [...], "other": {...}, "total": {...}}')
    .action(async (opts: Record<string, string | boolean | undefined>, cmd: Command) => {
      const config = await ctx.config(cmd);
      const { runTop } = await import('./top-run.js');
      await runTop(opts as never, config, (s) => ctx.out(s));
    });
}
