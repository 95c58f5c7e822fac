/** The introspection and error meanings of a dialect, for statements that are not one of the clients (a wrapper, a test's spy). */
import { mysqlDialectSupport } from './mysql-sql-client.js';
import { postgresDialectSupport } from './postgres-sql-client.js';
import type { SqlDialectSupport, SqlStatements } from './sql-client.js';
import { sqliteDialectSupport } from './sqlite-sql-client.js';

/** What the client of `statements.dialect` knows, reading through `statements`. */
export function dialectSupport(statements: SqlStatements): SqlDialectSupport {
  switch (statements.dialect) {
    case 'sqlite':
      return sqliteDialectSupport(statements);
    case 'mysql':
      return mysqlDialectSupport(statements);
    case 'postgres':
      return postgresDialectSupport(statements);
  }
}
