/** `netsvc quota`'s registration; the work is in quota-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { QuotaAddFlags, QuotaListFlags } from './quota-run.js';

/** Registers `quota add` and `quota list`. */
export function registerQuotaCommands(program: Command, ctx: CliContext): void {
  const quota = withGlobalOptions(program.command('quota')).description(
    'hotspot quota purchases (GET /hotspot/quota-purchase-report)',
  );
  const entityOpt = (c: Command) =>
    withGlobalOptions(c).option('-e, --entity <name>', 'entity whose RADIUS database to use (default: the only one, or default)');

  entityOpt(quota.command('add <username>'))
    .description('record a quota purchase of an existing hotspot user (a MAC in any notation finds a MAC user)')
    .requiredOption('--plan <name>', 'plan name, as the report shows it')
    .requiredOption('--amount <decimal>', 'amount paid: a decimal >= 0 with at most two places (5, 5.5, 20.50)')
    .option('--currency <code>', 'ISO 4217 currency code', 'EUR')
    .option('--profiles <a,b>', 'existing profiles the purchase grants, comma-separated (recorded, not attached)')
    .option('--remarks <text>', 'free text, searchable as a substring in the report')
    .option('--time <iso>', 'transaction time, ISO 8601; without an offset in the configured timezone (default: now)')
    .option('--by <name>', 'recorded as create_by (default: the operating-system user)')
    .option('--json', 'print the recorded purchase as JSON')
    .action(async (username: string, opts: QuotaAddFlags, cmd: Command) => {
      const { quotaAddAction } = await import('./quota-run.js');
      await quotaAddAction(ctx, username, opts, cmd);
    });

  entityOpt(quota.command('list'))
    .description('quota purchases, newest first (by transaction time)')
    .option('--username <name>', 'only this user (exact)')
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--json', 'print JSON')
    .action(async (opts: QuotaListFlags, cmd: Command) => {
      const { quotaListAction } = await import('./quota-run.js');
      await quotaListAction(ctx, opts, cmd);
    });
}
