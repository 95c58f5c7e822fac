/** `netsvc dump`'s registration; the work is in dump-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { DumpOptions } from './dump-run.js';

/** Registers `netsvc dump`. */
export function registerDumpCommand(program: Command, ctx: CliContext): Command {
  return withGlobalOptions(program.command('dump'))
    .description('print capture-file flows like nfdump -r, or totals like nfdump -I (--stats)')
    .argument('<file|source>', 'a capture file path, or a flow source name (all its hours)')
    .option('--from <time>', 'received time from (YYYY/MM/DD HH:mm in the configured zone, or ISO 8601)')
    .option('--to <time>', 'received time to, inclusive to the minute given')
    .option('--csv', 'CSV with a header line')
    .option('--json', 'JSON array of records (or a JSON object with --stats)')
    .option('--limit <n>', 'print at most n flows')
    .option('--stats', 'totals like nfdump -I instead of records')
    .option('--filter <expr>', "only the flows an nfdump filter selects, e.g. 'proto tcp and dst port 443'")
    .action(async (target: string, opts: DumpOptions, cmd: Command) => {
      const config = await ctx.config(cmd);
      const { runDump } = await import('./dump-run.js');
      // A filter may name AS numbers and countries: the same tables as `top` and the API.
      const geo = opts.filter
        ? (await import('../../storage/geo/open-geo-lookup.js')).openGeoLookup(config.geo, config.dataDir)
        : undefined;
      runDump(
        target,
        opts,
        config.dataDir,
        config.timezone,
        (s) => ctx.out(s),
        (s) => ctx.err(s),
        geo,
      );
    });
}
