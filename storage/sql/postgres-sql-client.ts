import pg from 'pg';
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

// Return timestamps as the text PostgreSQL prints, not as JS Dates in the local zone.
const TIMESTAMP_OIDS = [1082, 1114, 1184];
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const types = {
  getTypeParser(oid: number, format?: string) {
    if (TIMESTAMP_OIDS.includes(oid)) return (v: string) => v;
    if (oid === INT8_OID) return (v: string) => Number(v);
    if (oid === NUMERIC_OID) return (v: string) => v;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Rewrites `?` placeholders to `$1, $2, …`. Statement text never holds a literal `?`. */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type Queryable = Pick<pg.Pool, 'query'>;

/**
 * PostgreSQL's SQLSTATE classes and codes that mean "not now": the server is
 * shutting down or starting (57P01-57P03, the error a restart gives every
 * open session), the connection failed (class 08 but 08P01), too many connections
 * (53300), a statement ran past statement_timeout (57014), or no disk left
 * (53100).
 */
function unavailableState(code: string): SqlUnavailableError['reason'] | undefined {
  if (code === '53100') return 'disk_full';
  if (code === '57014') return 'timeout';
  // Class 08 but 08P01: a protocol violation is a bug of ours (a bind count mismatch), not an outage.
  if ((code.startsWith('08') && code !== '08P01') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300')
    return 'unreachable';
  return undefined;
}

/**
 * The driver's error as SqlUnavailableError when it means the server cannot
 * serve now. A server error carries its SQLSTATE; the pg driver's own errors
 * for a lost or timed-out connection ("Connection terminated unexpectedly",
 * "timeout exceeded when trying to connect", "Query read timeout") carry no
 * code at all, so every plain Error that is not the server's answer counts as
 * unreachable; type errors (a bug binding a value) go on as they are.
 */
export function classifyPostgresError(err: unknown): SqlUnavailableError | undefined {
  if (err instanceof SqlUnavailableError) return err;
  if (!(err instanceof Error)) return undefined;
  const message = `PostgreSQL: ${err.message}`;
  if (err instanceof pg.DatabaseError) {
    const reason = unavailableState(err.code ?? '');
    return reason ? new SqlUnavailableError(reason, message, { cause: err }) : undefined;
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNREACHABLE_ERRNO.has(code))
    return new SqlUnavailableError('unreachable', message, { cause: err });
  if (code === undefined && err.constructor === Error) return new SqlUnavailableError('unreachable', message, { cause: err });
  return undefined;
}

/**
 * SQLSTATEs of class 22 (data exception) that a value bound by the caller
 * causes: a character UTF8 text cannot hold (22021: a NUL byte; 22P05), a
 * number or date past its type (22003 integer out of range, 22008 the year
 * 0, 22001 too long for varchar(n)), a text that is no value of the type
 * (22007 datetime, 22P02 inet, integer). The rest of class 22 (a division by
 * zero, a bad regular expression) would be a bug of the statement.
 */
const INPUT_STATES: ReadonlyMap<string, SqlInputError['reason']> = new Map([
  ['22021', 'encoding'],
  ['22P05', 'encoding'],
  ['22001', 'out_of_range'],
  ['22003', 'out_of_range'],
  ['22008', 'out_of_range'],
  ['22007', 'malformed'],
  ['22P02', 'malformed'],
]);

/** The server's refusal of a bound value as SqlInputError, else undefined. */
export function postgresInputError(err: unknown): SqlInputError | undefined {
  if (err instanceof SqlInputError) return err;
  if (!(err instanceof pg.DatabaseError)) return undefined;
  const reason = INPUT_STATES.get(err.code ?? '');
  return reason ? new SqlInputError(reason, `PostgreSQL: ${err.message} (${err.code})`, { cause: err }) : undefined;
}

function wrap(conn: Queryable): SqlStatements {
  return {
    dialect: 'postgres',
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      const res = await conn.query({ text: numberPlaceholders(sql), values: params as unknown[], types });
      return res.rows as T[];
    },
    async execute(sql: string, params: readonly unknown[] = []): Promise<ExecResult> {
      const res = await conn.query({ text: numberPlaceholders(sql), values: params as unknown[], types });
      return { affectedRows: res.rowCount ?? 0 };
    },
  };
}

/**
 * PostgreSQL's catalogue, in the current schema (unquoted names folded to
 * lower case, as the statements fold them), and its SQLSTATEs: 23505 unique
 * violation, 40P01 deadlock and 40001 serialisation failure (the transaction
 * was rolled back, so running it again is safe).
 */
export function postgresDialectSupport(db: SqlStatements): SqlDialectSupport {
  const code = (err: unknown) => (err as { code?: string } | undefined)?.code;
  return {
    async tableExists(table) {
      const rows = await db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?',
        [table.toLowerCase()],
      );
      return Number(rows[0]?.n) > 0;
    },
    async columnNames(table) {
      const rows = await db.query<{ name: string }>(
        'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
        [table.toLowerCase()],
      );
      return rows.map((r) => r.name);
    },
    async indexes(table) {
      // indoption bit 0: DESC, bit 1: NULLS FIRST. indkey[0] is 0 for an expression (no column joins).
      const rows = await db.query<{ name: string; valid: boolean; col: string | null; opt: number | string | null }>(
        'SELECT c.relname AS name, i.indisvalid AS valid, a.attname AS col, i.indoption[0] AS opt FROM pg_index i ' +
          'JOIN pg_class c ON c.oid = i.indexrelid ' +
          'LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] ' +
          'WHERE i.indrelid = (SELECT t.oid FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace ' +
          "WHERE n.nspname = current_schema() AND t.relname = ? AND t.relkind IN ('r', 'p'))",
        [table.toLowerCase()],
      );
      return rows.map((r): SqlIndexInfo => {
        const opt = Number(r.opt ?? 0);
        return {
          name: r.name,
          valid: r.valid,
          firstColumn: (r.col ?? '').toLowerCase(),
          descending: (opt & 1) !== 0,
          nullsFirst: (opt & 2) !== 0,
        };
      });
    },
    isUniqueViolation: (err) => code(err) === '23505',
    isRetryable: (err) => code(err) === '40P01' || code(err) === '40001',
  };
}

/**
 * PostgreSQL through a pg pool, with the session in UTC. Every operation ends
 * within `timeouts.operationMs`; a database that is down, restarting, hung or
 * full fails it with SqlUnavailableError, and never crashes the process.
 */
export class PostgresSqlClient extends PooledSqlClient {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;
  protected readonly base: SqlStatements;
  protected readonly timeouts: SqlTimeouts;

  constructor(url: string, options: { max?: number; timeouts?: SqlTimeouts } = {}) {
    super();
    this.timeouts = options.timeouts ?? UNBOUNDED_SQL_TIMEOUTS;
    const t = this.timeouts;
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      options: '-c TimeZone=UTC',
      // Covers both opening a connection and waiting for a free one.
      connectionTimeoutMillis: t.connectMs,
      // The server cancels a long statement; the client gives up on a server that does not answer at all.
      ...(Number.isFinite(t.statementMs) ? { statement_timeout: t.statementMs, query_timeout: t.statementMs + 500 } : {}),
    });
    // A client that loses its server emits 'error' whether it is idle in the pool or checked out
    // (a restart terminates every session). Unheard, that event would end the process; the query
    // that was running fails on its own and is classified there.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.base = wrap(this.pool);
  }

  protected classify(err: unknown): SqlUnavailableError | SqlInputError | undefined {
    return classifyPostgresError(err) ?? postgresInputError(err);
  }

  protected supportOf(statements: SqlStatements): SqlDialectSupport {
    return postgresDialectSupport(statements);
  }

  protected async checkout(): Promise<CheckedOutConnection> {
    const client = await this.pool.connect();
    const ops = {
      begin: () => client.query('BEGIN'),
      commit: () => client.query('COMMIT'),
      rollback: () => client.query('ROLLBACK'),
      // With an error the pool drops the connection instead of lending it again.
      release: (err?: unknown) => client.release(err instanceof Error ? err : err === undefined ? undefined : true),
    };
    return { ops, client: wrap(client) };
  }

  protected async endPool(): Promise<void> {
    await this.pool.end();
  }
}
