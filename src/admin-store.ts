/**
 * The admin store and the token signing key, opened from the configuration.
 * Kept apart from the service's wiring (main.ts) so that the `admin` and `db`
 * commands open them without loading the HTTP API and the collectors.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdminStore } from '../storage/admin/admin-store.js';
import { SqliteAdminStore } from '../storage/admin/sqlite-admin-store.js';
import type { Config } from './config.js';
import { resolveSqlitePath } from './config-paths.js';

/** Opens the admin store named by the configuration. */
export function openAdminStore(config: Config): AdminStore {
  return new SqliteAdminStore(resolveSqlitePath(config.admin.database, config.dataDir));
}

/** The token signing key: from the config, else generated once and kept in the data dir. */
export function loadTokenKey(config: Config): Uint8Array {
  if (config.auth.jwtSecret) return new TextEncoder().encode(config.auth.jwtSecret);
  const file = join(config.dataDir, 'jwt.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    // node:crypto only here (serve's first start): an import would load it for every admin command (~3 ms).
    const { randomBytes } = process.getBuiltinModule('node:crypto');
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  }
  return new TextEncoder().encode(readFileSync(file, 'utf8').trim());
}
