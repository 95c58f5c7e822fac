/** `netsvc db index syslog`'s registration; the work is in db-index-syslog-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import { dbIndexGroup } from './db-index-group.js';
import type { DbIndexSyslogFlags } from './db-index-syslog-run.js';

/** Registers `db index syslog [--entity NAME] [--drop]` under `db`. */
export function registerDbIndexSyslogCommand(db: Command, ctx: CliContext): void {
  withGlobalOptions(dbIndexGroup(db).command('syslog'))
    .description(
      "index SystemEvents on ReceivedAt, FromHost, Priority and SysLogTag (rsyslog's schema has only the primary key); " +
        'safe to run while rsyslog writes (MariaDB: online ALTER, PostgreSQL: CREATE INDEX CONCURRENTLY)',
    )
    .option('-e, --entity <name>', 'only this entity (default: every entity with a syslog database)')
    .option('--drop', 'remove the indexes this command created')
    .action(async (opts: DbIndexSyslogFlags, cmd: Command) => {
      const { dbIndexSyslogAction } = await import('./db-index-syslog-run.js');
      await dbIndexSyslogAction(ctx, opts, cmd);
    });
}
