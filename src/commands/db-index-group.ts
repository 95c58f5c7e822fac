/** The `db index` command group that `db index syslog` and `db index radius` hang under. */
import type { Command } from 'commander';
import { withGlobalOptions } from './context.js';

/** The `db index` group under `db`, created by whichever area registers first. */
export function dbIndexGroup(db: Command): Command {
  return (
    db.commands.find((c) => c.name() === 'index') ??
    withGlobalOptions(db.command('index')).description('create indexes that speed up queries on the tables netsvc reads')
  );
}
