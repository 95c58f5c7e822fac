/** `netsvc db …`: the service's own tables. */
import type { Command } from 'commander';
import { openAdminStore } from '../admin-store.js';
import { migrateRadiusDatabases } from './db-radius.js';
import { withGlobalOptions, type CliContext } from './context.js';

/** Registers `db migrate` (and is where `db index …` commands attach). */
export function registerDbCommands(program: Command, ctx: CliContext): Command {
  const db = withGlobalOptions(program.command('db')).description("create or update netsvc's own tables");
  withGlobalOptions(db.command('migrate'))
    .description("create netsvc's own tables (never alters FreeRADIUS's or rsyslog's)")
    .action(async (_opts: unknown, cmd: Command) => {
      const config = ctx.config(cmd);
      // The admin store creates its tables when opened.
      openAdminStore(config).close();
      ctx.out(`admin store ready (${config.admin.database})`);
      await migrateRadiusDatabases(config, (line) => ctx.out(line));
    });
  return db;
}
