import mysql from 'mysql2/promise';
import {
  PooledSqlClient,
  SqlInputError,
  SqlUnavailableError,
  UNBOUNDED_SQL_TIMEOUTS,
  UNREACHABLE_ERRNO,
  type CheckedOutConnection,
  type ExecResult,
  type SqlDialectSupport,
  type SqlIndexInfo,
  type SqlStatements,
  type SqlTimeouts,
} from './sql-client.js';

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

/** mysql2's and the server's error codes that mean "not now", by reason. */
const UNAVAILABLE_CODES: ReadonlyMap<string, SqlUnavailableError['reason']> = new Map([
  // The connection is gone: server shut down or restarted, session killed, handshake refused.
  ['PROTOCOL_CONNECTION_LOST', 'unreachable'],
  ['PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR', 'unreachable'],
  ['PROTOCOL_ENQUEUE_AFTER_QUIT', 'unreachable'],
  ['ER_SERVER_SHUTDOWN', 'unreachable'],
  ['ER_CONNECTION_KILLED', 'unreachable'],
  ['ER_CON_COUNT_ERROR', 'unreachable'],
  ['ER_TOO_MANY_USER_CONNECTIONS', 'unreachable'],
  // No answer in time (mysql2's per-query timeout, MariaDB's max_statement_time).
  ['PROTOCOL_SEQUENCE_TIMEOUT', 'timeout'],
  ['ER_STATEMENT_TIMEOUT', 'timeout'],
  // No room left.
  ['ER_RECORD_FILE_FULL', 'disk_full'],
  ['ER_DISK_FULL', 'disk_full'],
]);

/** The driver's error as SqlUnavailableError when it means the server cannot serve now. */
export function classifyMysqlError(err: unknown): SqlUnavailableError | undefined {
  if (err instanceof SqlUnavailableError) return err;
  if (!(err instanceof Error)) return undefined;
  const code = String((err as { code?: unknown }).code);
  const reason = UNAVAILABLE_CODES.get(code) ?? (UNREACHABLE_ERRNO.has(code) ? 'unreachable' : undefined);
  return reason ? new SqlUnavailableError(reason, `MariaDB/MySQL: ${err.message}`, { cause: err }) : undefined;
}

/**
 * Server errors a value bound by the caller causes (strict mode makes most of
 * them errors, not warnings): a character the column's or comparison's
 * character set cannot hold (a 4-byte character against a utf8mb3 or latin1
 * column), a number or date past its column, a text too long for it, a text
 * that is no value of the column's type.
 */
const INPUT_CODES: ReadonlyMap<string, SqlInputError['reason']> = new Map([
  ['ER_TRUNCATED_WRONG_VALUE_FOR_FIELD', 'encoding'],
  ['ER_INVALID_CHARACTER_STRING', 'encoding'],
  ['ER_CANT_AGGREGATE_2COLLATIONS', 'encoding'],
  ['ER_CANT_AGGREGATE_3COLLATIONS', 'encoding'],
  ['ER_CANT_AGGREGATE_NCOLLATIONS', 'encoding'],
  ['ER_WARN_DATA_OUT_OF_RANGE', 'out_of_range'],
  ['ER_DATA_OUT_OF_RANGE', 'out_of_range'],
  ['ER_DATETIME_FUNCTION_OVERFLOW', 'out_of_range'],
  ['ER_DATA_TOO_LONG', 'out_of_range'],
  ['ER_TRUNCATED_WRONG_VALUE', 'malformed'],
  ['ER_WRONG_VALUE', 'malformed'],
  ['ER_WRONG_VALUE_FOR_TYPE', 'malformed'],
]);

/** The server's refusal of a bound value as SqlInputError, else undefined. */
export function mysqlInputError(err: unknown): SqlInputError | undefined {
  if (err instanceof SqlInputError) return err;
  if (!(err instanceof Error)) return undefined;
  const code = String((err as { code?: unknown }).code);
  const reason = INPUT_CODES.get(code);
  return reason ? new SqlInputError(reason, `MariaDB/MySQL: ${err.message} (${code})`, { cause: err }) : undefined;
}

async function run(conn: Queryable, sql: string, params: readonly unknown[], timeoutMs: number): Promise<unknown> {
  try {
    // The timeout closes the connection of a statement that gets no answer (a hung server).
    const [res] = await conn.query(Number.isFinite(timeoutMs) ? { sql, timeout: timeoutMs } : { sql }, params as unknown[]);
    return res;
  } catch (err) {
    throw withoutValues(err);
  }
}

function wrap(conn: Queryable, timeoutMs: number): SqlStatements {
  return {
    dialect: 'mysql',
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      return (await run(conn, sql, params, timeoutMs)) as T[];
    },
    async execute(sql: string, params: readonly unknown[] = []): Promise<ExecResult> {
      const header = (await run(conn, sql, params, timeoutMs)) as mysql.ResultSetHeader;
      return { affectedRows: header.affectedRows ?? 0, insertId: header.insertId };
    },
  };
}

/**
 * MariaDB/MySQL's catalogue (information_schema, in the connected database)
 * and its error numbers: 1062 duplicate key, 1213 deadlock (InnoDB rolled
 * the transaction back, so running it again is safe).
 */
export function mysqlDialectSupport(db: SqlStatements): SqlDialectSupport {
  const errno = (err: unknown) => (err as { errno?: number } | undefined)?.errno;
  return {
    async tableExists(table) {
      const rows = await db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?',
        [table],
      );
      return Number(rows[0]?.n) > 0;
    },
    async columnNames(table) {
      const rows = await db.query<{ name: string }>(
        'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
        [table],
      );
      return rows.map((r) => r.name);
    },
    async indexes(table) {
      const rows = await db.query<{ name: string; col: string | null; coll: string | null }>(
        'SELECT INDEX_NAME AS name, COLUMN_NAME AS col, COLLATION AS coll FROM information_schema.STATISTICS ' +
          'WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND SEQ_IN_INDEX = 1',
        [table],
      );
      return rows.map((r): SqlIndexInfo => ({
        name: r.name,
        valid: true,
        firstColumn: (r.col ?? '').toLowerCase(),
        descending: r.coll === 'D',
        nullsFirst: r.coll !== 'D',
      }));
    },
    isUniqueViolation: (err) => errno(err) === 1062,
    isRetryable: (err) => errno(err) === 1213,
  };
}

/**
 * MySQL/MariaDB through a mysql2 pool; datetimes come back as strings, as
 * stored. Every operation ends within `timeouts.operationMs`; a database that
 * is down, restarting, hung or full fails it with SqlUnavailableError.
 */
export class MysqlSqlClient extends PooledSqlClient {
  readonly dialect = 'mysql' as const;
  private readonly pool: mysql.Pool;
  protected readonly base: SqlStatements;
  protected readonly timeouts: SqlTimeouts;

  constructor(url: string, options: { connectionLimit?: number; timeouts?: SqlTimeouts } = {}) {
    super();
    this.timeouts = options.timeouts ?? UNBOUNDED_SQL_TIMEOUTS;
    this.pool = mysql.createPool({
      uri: url,
      connectTimeout: this.timeouts.connectMs,
      connectionLimit: options.connectionLimit ?? 10,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      timezone: 'Z',
      charset: 'utf8mb4',
    });
    this.base = wrap(this.pool, this.timeouts.statementMs);
  }

  protected classify(err: unknown): SqlUnavailableError | SqlInputError | undefined {
    return classifyMysqlError(err) ?? mysqlInputError(err);
  }

  protected supportOf(statements: SqlStatements): SqlDialectSupport {
    return mysqlDialectSupport(statements);
  }

  protected async checkout(): Promise<CheckedOutConnection> {
    const conn = await this.pool.getConnection();
    const ops = {
      begin: () => conn.beginTransaction(),
      commit: () => conn.commit(),
      rollback: () => conn.rollback(),
      // A connection that failed to roll back is closed rather than lent again.
      release: (err?: unknown) => (err === undefined ? conn.release() : conn.destroy()),
    };
    return { ops, client: wrap(conn, this.timeouts.statementMs) };
  }

  protected async endPool(): Promise<void> {
    await this.pool.end();
  }
}
