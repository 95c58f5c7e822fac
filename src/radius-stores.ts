/** Opening each entity's RadiusStore from the configuration (CLI and serve share it). */
import { existsSync } from 'node:fs';
import { openRadiusStore } from '../storage/radius/open-radius-store.js';
import type { RadiusStore } from '../storage/radius/radius-store.js';
import type { RadiusStoreOptions } from '../storage/radius/sql-radius-store.js';
import { resolveSqlitePath, type Config } from './config.js';

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
