/** `netsvc db`'s registration; the work is in db-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { DbMigrateFlags } from './db-run.js';

/** Registers `db migrate` (and is where `db index …` commands attach). */
export function registerDbCommands(program: Command, ctx: CliContext): Command {
  const db = withGlobalOptions(program.command('db')).description("create or update netsvc's own tables");
  withGlobalOptions(db.command('migrate'))
    .description(
      "create netsvc's own tables in every entity's databases (FreeRADIUS's and rsyslog's columns are never altered); " +
        "the embedded SQLite databases get FreeRADIUS's and rsyslog's tables too",
    )
    .option(
      '--create-peer-tables',
      "also create FreeRADIUS's tables (radcheck, radacct, …) and rsyslog's (SystemEvents) on MariaDB/PostgreSQL where they are missing, " +
        'from the schema files netsvc ships (FreeRADIUS 3.2, rsyslog 8.2302)',
    )
    .action(async (opts: DbMigrateFlags, cmd: Command) => {
      const { dbMigrateAction } = await import('./db-run.js');
      await dbMigrateAction(ctx, opts, cmd);
    });
  return db;
}
