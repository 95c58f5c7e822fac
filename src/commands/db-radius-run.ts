/** `netsvc db migrate` for the hotspot area, and `netsvc db index radius`. */
import type { Command } from 'commander';
import { RadiusStoreError } from '../../storage/radius/radius-store.js';
import { redactUrl } from '../../storage/sql/sql-client.js';
import type { Config } from '../config.js';
import { radiusDatabaseMissing, radiusEntities } from '../areas/hotspot-entities.js';
import { UsageError, type CliContext } from './context.js';

/**
 * Creates netsvc's hotspot tables in every entity's RADIUS database. An
 * `sqlite:` database that has no FreeRADIUS tables yet (the embedded default)
 * gets them from FreeRADIUS's own schema.sql, which netsvc ships; on MariaDB
 * and PostgreSQL only with `createPeerTables` (`--create-peer-tables`), since
 * there FreeRADIUS's schema is usually the operator's to load.
 */
export async function migrateRadiusDatabases(
  config: Config,
  out: (line: string) => void,
  createPeerTables = false,
): Promise<void> {
  const { openEntityRadiusStore } = await import('../areas/hotspot.js');
  for (const [name, url] of radiusEntities(config)) {
    const store = openEntityRadiusStore(config, url);
    const label = `${name} (${redactUrl(url)})`;
    try {
      const report = await store.migrate({ createFreeradiusTables: createPeerTables || url.startsWith('sqlite:') });
      const parts = [
        report.createdFreeradiusTables ? "FreeRADIUS tables created from FreeRADIUS's schema.sql" : '',
        report.createdTables.length ? `created ${report.createdTables.join(', ')}` : 'netsvc tables already there',
      ].filter(Boolean);
      out(`radius ${label}: ${parts.join('; ')}`);
    } catch (err) {
      const missing = err instanceof RadiusStoreError && err.code === 'schema_missing';
      const fix = missing
        ? ": run netsvc db migrate --create-peer-tables to create them from FreeRADIUS 3.2's schema, which netsvc ships " +
          `(storage/radius/schema/), or load FreeRADIUS's own (Debian: /etc/freeradius/3.0/mods-config/sql/main/${url.startsWith('mysql') ? 'mysql' : 'postgresql'}/schema.sql) and run netsvc db migrate again`
        : '';
      throw new RadiusStoreError(
        err instanceof RadiusStoreError ? err.code : 'unavailable',
        `radius ${label}: ${(err as Error).message}${fix}`,
        { cause: err },
      );
    } finally {
      await store.close();
    }
  }
}

/** The command-line flags of `netsvc db index radius`, as commander gives them. */
export interface DbIndexRadiusFlags {
  entity?: string;
}

/** The action of `netsvc db index radius`. */
export async function dbIndexRadiusAction(ctx: CliContext, opts: DbIndexRadiusFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  const entities = radiusEntities(config).filter(([name]) => !opts.entity || name === opts.entity);
  if (opts.entity && !entities.length)
    throw new UsageError(`entity '${opts.entity}' has no radius database in the configuration`);
  const { openEntityRadiusStore } = await import('../areas/hotspot.js');
  for (const [name, url] of entities) {
    const label = `${name} (${redactUrl(url)})`;
    if (radiusDatabaseMissing(config, url)) {
      ctx.out(`${label}: no database yet; run netsvc db migrate first`);
      continue;
    }
    const store = openEntityRadiusStore(config, url);
    try {
      const started = Date.now();
      const report = await store.createIndexes();
      const made = report.filter((r) => r.created).map((r) => r.name);
      const there = report.filter((r) => !r.created).map((r) => r.name);
      ctx.out(
        `${label}: created ${made.length ? made.join(', ') : 'nothing'}` +
          (there.length ? `; already there: ${there.join(', ')}` : '') +
          ` (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    } catch (err) {
      throw new RadiusStoreError('invalid', `${label}: ${(err as Error).message}`);
    } finally {
      await store.close();
    }
  }
}
