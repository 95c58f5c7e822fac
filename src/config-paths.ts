/** Paths the configuration names, resolved without loading its schema. */
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';

/** Resolves a `sqlite:PATH` URL's path against the data directory; other URLs pass through. */
export function resolveSqlitePath(url: string, dataDir: string): string {
  if (!url.startsWith('sqlite:')) throw new ConfigError(`not an sqlite URL: ${url}`);
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(dataDir, path);
}
