/** Opens the RadiusStore a database URL names (`sqlite:`, `mysql://`, `postgres://`). */
import { openSqlClient } from '../sql/open-sql-client.js';
import type { SqlClient, SqlTimeouts } from '../sql/sql-client.js';
import { MysqlRadiusStore } from './mysql-radius-store.js';
import { PostgresRadiusStore } from './postgres-radius-store.js';
import type { RadiusStore } from './radius-store.js';
import type { RadiusStoreOptions } from './sql-radius-store.js';
import { SqliteRadiusStore } from './sqlite-radius-store.js';

/** The store of the client's dialect; closing the store closes the client. */
export function radiusStoreFor(client: SqlClient, options?: RadiusStoreOptions): RadiusStore {
  switch (client.dialect) {
    case 'sqlite':
      return new SqliteRadiusStore(client, options);
    case 'mysql':
      return new MysqlRadiusStore(client, options);
    case 'postgres':
      return new PostgresRadiusStore(client, options);
  }
}

/** A store for `url`; `sqlite:` paths are relative to `baseDir`. Nothing is created until `migrate()`. */
export function openRadiusStore(url: string, baseDir: string, options?: RadiusStoreOptions, timeouts?: SqlTimeouts): RadiusStore {
  return radiusStoreFor(openSqlClient(url, baseDir, timeouts), options);
}
