import { isAbsolute, resolve } from 'node:path';
import { MysqlSqlClient } from './mysql-sql-client.js';
import { PostgresSqlClient } from './postgres-sql-client.js';
import { parseDatabaseUrl, type SqlClient, type SqlTimeouts } from './sql-client.js';
import { SqliteSqlClient } from './sqlite-sql-client.js';

/** Opens a client for a database URL; `sqlite:` paths are relative to `baseDir`; `timeouts` bound the pooled servers' operations. */
export function openSqlClient(url: string, baseDir: string, timeouts?: SqlTimeouts): SqlClient {
  const target = parseDatabaseUrl(url);
  switch (target.dialect) {
    case 'sqlite': {
      const path = target.path === ':memory:' || isAbsolute(target.path) ? target.path : resolve(baseDir, target.path);
      return new SqliteSqlClient(path);
    }
    case 'mysql':
      return new MysqlSqlClient(target.url, { timeouts });
    case 'postgres':
      return new PostgresSqlClient(target.url, { timeouts });
  }
}
