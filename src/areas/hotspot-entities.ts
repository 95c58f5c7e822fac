/** Which entities have a RADIUS database, read from the configuration alone (no database is opened). */
import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { resolveSqlitePath } from '../config-paths.js';

/** Entities that have a RADIUS database, by name. */
export function radiusEntities(config: Config): Array<[string, string]> {
  return Object.entries(config.entities).flatMap(([name, e]) => (e.radius ? [[name, e.radius] as [string, string]] : []));
}

/** True when the URL is an `sqlite:` file that does not exist yet. */
export function radiusDatabaseMissing(config: Config, url: string): boolean {
  return url.startsWith('sqlite:') && !url.endsWith(':memory:') && !existsSync(resolveSqlitePath(url, config.dataDir));
}
