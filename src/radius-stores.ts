/** Opening each entity's RadiusStore from the configuration, and the hotspot area built on them (CLI and serve share it). */
import { existsSync } from 'node:fs';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../api/context.js';
import { createHotspotRoutes } from '../api/routes/hotspot.js';
import { defaultCatalogue } from '../storage/radius/attribute-catalogue.js';
import { openRadiusStore } from '../storage/radius/open-radius-store.js';
import type { RadiusStore } from '../storage/radius/radius-store.js';
import type { RadiusStoreOptions } from '../storage/radius/sql-radius-store.js';
import { resolveSqlitePath, type Config } from './config.js';
import type { Logger } from './log.js';

/** Store options the configuration implies: its time zone and the reject group. */
export function radiusStoreOptions(config: Config, now: () => number = Date.now): RadiusStoreOptions {
  return { timeZone: config.timezone, disabledGroup: config.hotspot.disabledGroup, now };
}

/** Entities that have a RADIUS database, by name. */
export function radiusEntities(config: Config): Array<[string, string]> {
  return Object.entries(config.entities).flatMap(([name, e]) => (e.radius ? [[name, e.radius] as [string, string]] : []));
}

/** True when the URL is an `sqlite:` file that does not exist yet. */
export function radiusDatabaseMissing(config: Config, url: string): boolean {
  return url.startsWith('sqlite:') && !url.endsWith(':memory:') && !existsSync(resolveSqlitePath(url, config.dataDir));
}

/** The store of one entity's RADIUS database. */
export function openEntityRadiusStore(config: Config, url: string, now?: () => number): RadiusStore {
  return openRadiusStore(url, config.dataDir, radiusStoreOptions(config, now));
}

/** The hotspot area as `serve` runs it: one store per entity with a RADIUS database, and its routes. */
export interface HotspotService {
  routes: OpenAPIHono<AppEnv>;
  close(): Promise<void>;
}

/**
 * Opens every entity's RADIUS store and builds the hotspot routes. An
 * embedded `sqlite:` database is migrated on the spot (FreeRADIUS's schema
 * included), so `netsvc serve` works with no configuration; MariaDB and
 * PostgreSQL databases are left to `netsvc db migrate`.
 */
export async function startHotspot(config: Config, runtime: { logger: Logger; now: () => number }): Promise<HotspotService> {
  const stores = new Map<string, RadiusStore>();
  try {
    for (const [entity, url] of radiusEntities(config)) {
      const store = openEntityRadiusStore(config, url, runtime.now);
      stores.set(entity, store);
      if (url.startsWith('sqlite:')) await store.migrate({ createFreeradiusTables: true });
    }
  } catch (err) {
    for (const s of stores.values()) await s.close();
    throw err;
  }
  const routes = createHotspotRoutes({
    storeOf: (entity) => stores.get(entity),
    catalogue: defaultCatalogue(),
    timezone: config.timezone,
    maxPerPage: config.hotspot.maxPerPage,
    onStoreError: (entity, err) => runtime.logger.warn({ entity, err }, 'RADIUS database unusable'),
  });
  runtime.logger.info({ entities: [...stores.keys()] }, 'hotspot stores open');
  return {
    routes,
    async close() {
      for (const s of stores.values()) await s.close();
    },
  };
}
