/** `netsvc db index radius`'s registration; the work is in db-radius-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import { dbIndexGroup } from './db-index-group.js';
import type { DbIndexRadiusFlags } from './db-radius-run.js';

/** Registers `db index radius [--entity NAME]` under `db`. */
export function registerDbIndexRadiusCommand(db: Command, ctx: CliContext): void {
  withGlobalOptions(dbIndexGroup(db).command('radius'))
    .description(
      'index radacct by each hotspot report filter then start time (username, calling/called station, NAS, framed IP), ' +
        "open sessions by start time, radpostauth by user and date, radusergroup by group; FreeRADIUS's columns are not changed",
    )
    .option('-e, --entity <name>', 'only this entity (default: every entity with a RADIUS database)')
    .action(async (opts: DbIndexRadiusFlags, cmd: Command) => {
      const { dbIndexRadiusAction } = await import('./db-radius-run.js');
      await dbIndexRadiusAction(ctx, opts, cmd);
    });
}
