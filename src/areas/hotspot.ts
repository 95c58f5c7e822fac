/** Opening each entity's RadiusStore from the configuration, and the hotspot area built on them (CLI and serve share it). */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../api/context.js';
import { createHotspotRoutes } from '../../api/routes/hotspot/index.js';
import { defaultCatalogue } from '../../storage/radius/attribute-catalogue.js';
import { openRadiusStore } from '../../storage/radius/open-radius-store.js';
import type { RadiusStore } from '../../storage/radius/radius-store.js';
import type { RadiusStoreOptions } from '../../storage/radius/sql-radius-store.js';
import { sqlTimeouts, type Config } from '../config.js';
import { radiusEntities } from './hotspot-entities.js';
import type { DatabaseCheck } from '../database-health.js';
import { redactUrl } from '../../storage/sql/sql-client.js';
import { Lifecycle } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { OutageLog } from '../outage-log.js';

/** Store options the configuration implies: its time zone and the reject group. */
export function radiusStoreOptions(config: Config, now: () => number = Date.now): RadiusStoreOptions {
  return { timeZone: config.timezone, disabledGroup: config.hotspot.disabledGroup, now };
}

/**
 * The store of one entity's RADIUS database. `serve` bounds every operation
 * by the configured time-outs (`bounded`); the CLI's migrations run unbounded.
 */
export function openEntityRadiusStore(config: Config, url: string, now?: () => number, bounded = false): RadiusStore {
  return openRadiusStore(url, config.dataDir, radiusStoreOptions(config, now), bounded ? sqlTimeouts(config) : undefined);
}

/** The hotspot area as `serve` runs it: one store per entity with a RADIUS database, and its routes. */
export interface HotspotService {
  routes: OpenAPIHono<AppEnv>;
  /** Each entity's RADIUS database, for the health checks. */
  databases: DatabaseCheck[];
  close(): Promise<void>;
}

/**
 * Opens every entity's RADIUS store and builds the hotspot routes. An
 * embedded `sqlite:` database is migrated on the spot (FreeRADIUS's schema
 * included), so `netsvc serve` works with no configuration; MariaDB and
 * PostgreSQL databases are left to `netsvc db migrate`.
 */
export async function startHotspot(config: Config, runtime: { logger: Logger; now: () => number }): Promise<HotspotService> {
  // Every store is recorded as it opens: a failure closes the opened ones in reverse, and so does close().
  const parts = new Lifecycle({
    onCloseError: (part, err) => runtime.logger.error({ err, part }, 'closing a hotspot store failed'),
  });
  const stores = new Map<string, RadiusStore>();
  for (const [entity, url] of radiusEntities(config)) {
    const store = await parts.open(
      `RADIUS store ${entity}`,
      () => openEntityRadiusStore(config, url, runtime.now, true),
      (s) => s.close(),
    );
    stores.set(entity, store);
    if (url.startsWith('sqlite:')) await parts.run(() => store.migrate({ createFreeradiusTables: true }));
  }
  const outages = new OutageLog(runtime.logger, runtime.now);
  const routes = createHotspotRoutes({
    storeOf: (entity) => stores.get(entity),
    catalogue: defaultCatalogue(),
    timezone: config.timezone,
    maxPerPage: config.hotspot.maxPerPage,
    onStoreError: (entity, err) => outages.report(entity, { entity, code: err.code }, err, 'RADIUS database unusable'),
  });
  runtime.logger.info({ entities: [...stores.keys()] }, 'hotspot stores open');
  const urls = new Map(radiusEntities(config));
  return {
    routes,
    databases: [...stores].map(([entity, store]) => ({
      entity,
      area: 'hotspot',
      database: redactUrl(urls.get(entity)!),
      check: () => store.health(),
    })),
    close: () => parts.close(),
  };
}
