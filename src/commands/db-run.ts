/** `netsvc db …`: the service's own tables, and its peers' where asked. */
import type { Command } from 'commander';
import { redactUrl, SqlUnavailableError } from '../../storage/sql/sql-client.js';
import { SyslogStoreError } from '../../storage/syslog/syslog-store.js';
import { openAdminStore } from '../admin-store.js';
import type { Config } from '../config.js';
import { migrateRadiusDatabases } from './db-radius-run.js';
import type { CliContext } from './context.js';

/**
 * rsyslog writes into SystemEvents but never creates it: on an external syslog
 * database the table is created here with `createPeerTables`, else a missing
 * one is reported with both ways to make it. An `sqlite:` database is netsvc's
 * own (the embedded receiver's) and is created as netsvc's tables are.
 */
async function migrateSyslogDatabases(config: Config, out: (line: string) => void, createPeerTables: boolean): Promise<void> {
  const entities = Object.entries(config.entities).filter(([, e]) => e.syslog);
  if (!entities.length) return;
  const { openSyslogStore } = await import('../../storage/syslog/open-syslog-store.js');
  for (const [name, entity] of entities) {
    const url = entity.syslog!;
    const label = `${name} (${redactUrl(url)})`;
    const embedded = url.startsWith('sqlite:');
    const store = openSyslogStore(url, config.dataDir);
    try {
      if (createPeerTables || embedded) {
        out(
          `syslog ${label}: ${(await store.createPeerTables()) ? "rsyslog's SystemEvents tables created" : 'SystemEvents already there'}`,
        );
      } else if (!(await store.hasSystemEvents())) {
        const debian = url.startsWith('mysql') ? 'rsyslog-mysql/install/mysql' : 'rsyslog-pgsql/install/pgsql';
        throw new SyslogStoreError(
          'schema_missing',
          `syslog ${label}: no SystemEvents table (rsyslog does not create it): run netsvc db migrate --create-peer-tables, ` +
            `or load rsyslog's schema (Debian: /usr/share/dbconfig-common/data/${debian})`,
        );
      } else out(`syslog ${label}: SystemEvents already there`);
    } catch (err) {
      if (err instanceof SyslogStoreError) throw err;
      throw new SyslogStoreError(
        err instanceof SqlUnavailableError ? 'unavailable' : 'failed',
        `syslog ${label}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    } finally {
      await store.close();
    }
  }
}

/** The command-line flags of `netsvc db migrate`, as commander gives them. */
export interface DbMigrateFlags {
  createPeerTables?: boolean;
}

/** The action of `netsvc db migrate`. */
export async function dbMigrateAction(ctx: CliContext, opts: DbMigrateFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  // The admin store creates its tables when opened.
  openAdminStore(config).close();
  ctx.out(`admin store ready (${config.admin.database})`);
  const peers = opts.createPeerTables ?? false;
  await migrateRadiusDatabases(config, (line) => ctx.out(line), peers);
  await migrateSyslogDatabases(config, (line) => ctx.out(line), peers);
}
