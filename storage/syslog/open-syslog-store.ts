/** Opens the SyslogStore a database URL names (`sqlite:`, `mysql://`, `postgres://`). */
import { openSqlClient } from '../sql/open-sql-client.js';
import type { SqlTimeouts } from '../sql/sql-client.js';
import { MysqlSyslogStore } from './mysql-syslog-store.js';
import { PostgresSyslogStore } from './postgres-syslog-store.js';
import type { SqlSyslogStore, SyslogStoreOptions } from './sql-syslog-store.js';
import { SqliteSyslogStore } from './sqlite-syslog-store.js';

/** A store for `url`; `sqlite:` paths are relative to `baseDir`. Nothing is created: see `SqliteSyslogStore.ensureSchema`. */
export function openSyslogStore(
  url: string,
  baseDir: string,
  options?: SyslogStoreOptions,
  timeouts?: SqlTimeouts,
): SqlSyslogStore {
  const client = openSqlClient(url, baseDir, timeouts);
  switch (client.dialect) {
    case 'sqlite':
      return new SqliteSyslogStore(client, options);
    case 'mysql':
      return new MysqlSyslogStore(client, options);
    case 'postgres':
      return new PostgresSyslogStore(client, options);
  }
}
