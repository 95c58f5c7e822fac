/** `netsvc db index syslog`: the indexes that keep logviewer searches fast on large SystemEvents tables. */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { redactUrl, SqlUnavailableError } from '../../storage/sql/sql-client.js';
import { SyslogStoreError } from '../../storage/syslog/syslog-store.js';
import { resolveSqlitePath } from '../config-paths.js';
import { UsageError, type CliContext } from './context.js';

/** The command-line flags of `netsvc db index syslog`, as commander gives them. */
export interface DbIndexSyslogFlags {
  entity?: string;
  drop?: boolean;
}

/** The action of `netsvc db index syslog`. */
export async function dbIndexSyslogAction(ctx: CliContext, opts: DbIndexSyslogFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  const entities = Object.entries(config.entities).filter(([name, e]) => e.syslog && (!opts.entity || name === opts.entity));
  if (opts.entity && entities.length === 0)
    throw new UsageError(`entity '${opts.entity}' has no syslog database in the configuration`);
  const { openSyslogStore } = await import('../../storage/syslog/open-syslog-store.js');
  for (const [name, entity] of entities) {
    const url = entity.syslog!;
    const label = `${name} (${redactUrl(url)})`;
    if (url.startsWith('sqlite:') && !existsSync(resolveSqlitePath(url, config.dataDir))) {
      ctx.out(`${label}: no database yet; the embedded receiver creates it with these indexes`);
      continue;
    }
    const store = openSyslogStore(url, config.dataDir);
    try {
      if (opts.drop) {
        const dropped = await store.dropIndexes();
        ctx.out(`${label}: dropped ${dropped.length ? dropped.join(', ') : 'nothing'}`);
      } else {
        const started = Date.now();
        const report = await store.createIndexes();
        const took = ((Date.now() - started) / 1000).toFixed(1);
        ctx.out(
          `${label}: created ${report.created.length ? report.created.join(', ') : 'nothing'}` +
            (report.existing.length ? `; already there: ${report.existing.join(', ')}` : '') +
            ` (${took} s)`,
        );
      }
    } catch (err) {
      throw new SyslogStoreError(
        err instanceof SqlUnavailableError ? 'unavailable' : 'failed',
        `${label}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    } finally {
      await store.close();
    }
  }
}
