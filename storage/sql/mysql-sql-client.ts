import mysql from 'mysql2/promise';
import { runTransaction, type ExecResult, type SqlClient } from './sql-client.js';

type Queryable = Pick<mysql.Pool, 'query'>;

/**
 * mysql2 binds `?` values into the statement text on the client and keeps
 * that text in `err.sql`; a failed INSERT of a password would carry it into
 * the logs. Errors leave this client without it.
 */
function withoutValues(err: unknown): unknown {
  if (err && typeof err === 'object' && 'sql' in err) delete (err as { sql?: unknown }).sql;
  return err;
}

async function run(conn: Queryable, sql: string, params: readonly unknown[]): Promise<unknown> {
  try {
    const [res] = await conn.query(sql, params as unknown[]);
    return res;
  } catch (err) {
    throw withoutValues(err);
  }
}

function wrap(conn: Queryable): Omit<SqlClient, 'transaction' | 'close'> {
  return {
    dialect: 'mysql',
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return (await run(conn, sql, params)) as T[];
    },
    async execute(sql: string, params: readonly unknown[] = []): Promise<ExecResult> {
      const header = (await run(conn, sql, params)) as mysql.ResultSetHeader;
      return { affectedRows: header.affectedRows ?? 0, insertId: header.insertId };
    },
  };
}

/** MySQL/MariaDB through a mysql2 pool; datetimes come back as strings, as stored. */
export class MysqlSqlClient implements SqlClient {
  readonly dialect = 'mysql' as const;
  private readonly pool: mysql.Pool;
  private readonly base: Omit<SqlClient, 'transaction' | 'close'>;

  constructor(url: string, options: { connectionLimit?: number } = {}) {
    this.pool = mysql.createPool({
      uri: url,
      connectionLimit: options.connectionLimit ?? 10,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      timezone: 'Z',
      charset: 'utf8mb4',
    });
    this.base = wrap(this.pool);
  }

  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.base.query<T>(sql, params);
  }

  execute(sql: string, params?: readonly unknown[]): Promise<ExecResult> {
    return this.base.execute(sql, params);
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const conn = await this.pool.getConnection();
    const ops = { begin: () => conn.beginTransaction(), commit: () => conn.commit(), rollback: () => conn.rollback(), release: () => conn.release() };
    return runTransaction(ops, wrap(conn), fn);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
