/**
 * The smallest subset of a SQL driver the stores need, one implementation per
 * database (Kysely's Driver idea). Statements use `?` placeholders everywhere;
 * the PostgreSQL client numbers them. Statement text never contains input:
 * every value goes through parameters, and no `?` may appear in a literal.
 */
import { DatabaseUrlError, SqlUnavailableError, type SqlInputError } from './sql-errors.js';

// The errors live in sql-errors.ts (the CLI loads them without this module); re-exported for the clients.
export { DatabaseUrlError, SqlInputError, SqlUnavailableError } from './sql-errors.js';
export type { SqlInputReason, SqlUnavailableReason } from './sql-errors.js';

/** Which database a client talks to; stores branch on it for dialect SQL. */
export type Dialect = 'sqlite' | 'mysql' | 'postgres';

/** Outcome of a statement that changes rows. */
export interface ExecResult {
  affectedRows: number;
  /** Auto-increment id of an INSERT (MySQL, SQLite); PostgreSQL callers use RETURNING. */
  insertId?: number;
}

/** What runs parameterised statements: a client, or one connection of it. */
export interface SqlStatements {
  readonly dialect: Dialect;
  /** Runs a statement that returns rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement that changes rows. */
  execute(sql: string, params?: readonly unknown[]): Promise<ExecResult>;
}

/** One index of a table, as its database describes it. */
export interface SqlIndexInfo {
  name: string;
  /** False for an index PostgreSQL cannot use (an interrupted CREATE INDEX CONCURRENTLY left it); always true elsewhere. */
  valid: boolean;
  /** The first column, lower case ('' for an expression). */
  firstColumn: string;
  /** Whether the first column is kept in descending order. */
  descending: boolean;
  /** Whether the first column's NULLs come first in the index's own order (MySQL and SQLite: NULL is the lowest value). */
  nullsFirst: boolean;
}

/**
 * What a client knows of its own dialect beyond running statements: the
 * schema's tables, columns and indexes in the connected database (schema on
 * PostgreSQL), and what a driver error that is neither an outage nor a refused
 * value means. Each client brings its own, as Kysely's dialects bring their
 * introspector, so no store repeats catalogue queries or driver codes.
 * Table names are as unquoted SQL names them: PostgreSQL folds them to lower case.
 */
export interface SqlDialectSupport {
  tableExists(table: string): Promise<boolean>;
  /** The table's column names as stored; none when the table does not exist. */
  columnNames(table: string): Promise<string[]>;
  /** The table's indexes (its primary key among them on MySQL and PostgreSQL); none when the table does not exist. */
  indexes(table: string): Promise<SqlIndexInfo[]>;
  /** The statement broke a unique key (or primary key). */
  isUniqueViolation(err: unknown): boolean;
  /** The database rolled the transaction back on its own (deadlock, serialisation failure, a lock held too long): running it again is safe. */
  isRetryable(err: unknown): boolean;
}

/** A connection (or pool) that runs parameterised statements. */
export interface SqlClient extends SqlStatements, SqlDialectSupport {
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /** Releases every connection. */
  close(): Promise<void>;
}

/** The driver's error as one of the two typed errors the stores branch on, or undefined (a bug: it goes on as it is). */
export type SqlErrorClassifier = (err: unknown) => SqlUnavailableError | SqlInputError | undefined;

/** Time limits of a pooled client, in milliseconds. */
export interface SqlTimeouts {
  /** Opening one connection (TCP and handshake). */
  connectMs: number;
  /** One statement on the server. */
  statementMs: number;
  /** One whole operation, waiting for a pooled connection included: past it the caller gets `timeout`. */
  operationMs: number;
}

/**
 * Limits of a client opened without any: connecting still fails in seconds
 * (not after the OS's TCP time-out), but statements may run as long as they
 * need (the CLI's migrations and index builds). `serve` passes its own.
 */
export const UNBOUNDED_SQL_TIMEOUTS: Readonly<SqlTimeouts> = Object.freeze({
  connectMs: 5000,
  statementMs: Infinity,
  operationMs: Infinity,
});

/**
 * Runs `op` and rejects with SqlUnavailableError `timeout` once `ms` have
 * passed; what the driver does meanwhile is bounded by its own time-outs,
 * and `op` can ask whether the caller has been answered (a transaction then
 * rolls back instead of committing what the caller was told failed).
 * Errors `classify` recognises leave as its typed errors, others as they are.
 */
export async function bounded<T>(
  op: (expired: () => boolean) => Promise<T>,
  ms: number,
  classify: SqlErrorClassifier,
): Promise<T> {
  if (!Number.isFinite(ms)) {
    return op(() => false).catch((err: unknown) => {
      throw classify(err) ?? err;
    });
  }
  let timer: NodeJS.Timeout | undefined;
  let gaveUp = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      gaveUp = true;
      reject(new SqlUnavailableError('timeout', `the database did not answer within ${ms} ms`));
    }, ms);
  });
  // The work goes on after the caller was answered; `expired` lets it give up rather than commit.
  const run = op(() => gaveUp).catch((err: unknown) => {
    throw classify(err) ?? err;
  });
  // The loser of the race must not become an unhandled rejection.
  run.catch(() => undefined);
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Network errors of Node's sockets that mean the server cannot be reached. */
export const UNREACHABLE_ERRNO: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** Parsed form of `sqlite:PATH`, `mysql://…` or `postgres://…`. */
export type DatabaseTarget =
  { dialect: 'sqlite'; path: string } | { dialect: 'mysql'; url: string } | { dialect: 'postgres'; url: string };

/** Tells which database a URL names; `sqlite:` paths are resolved by the caller. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new DatabaseUrlError(`sqlite URL without a path: ${url}`);
    return { dialect: 'sqlite', path };
  }
  if (/^mysql:\/\//.test(url)) return { dialect: 'mysql', url };
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: 'postgres', url };
  throw new DatabaseUrlError(`unsupported database URL (want sqlite:, mysql:// or postgres://): ${redactUrl(url)}`);
}

/** The URL with any password replaced, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** What a pooled driver connection must offer to run one transaction. */
export interface TransactionConnection {
  begin(): Promise<unknown>;
  commit(): Promise<unknown>;
  rollback(): Promise<unknown>;
  /** Returns the connection; with an error, one that must not be reused (the pool drops it). */
  release(err?: unknown): void;
}

/**
 * Runs `fn` on one connection between BEGIN and COMMIT, rolling back when it
 * throws; shared by the pooled clients so their transactions behave the same.
 */
export async function runTransaction<T>(
  conn: TransactionConnection,
  client: SqlStatements,
  support: (statements: SqlStatements) => SqlDialectSupport,
  fn: (tx: SqlClient) => Promise<T>,
  expired: () => boolean = () => false,
): Promise<T> {
  let broken: unknown;
  try {
    await conn.begin();
    // Nested transaction() calls join the open one; the schema is read on the transaction's connection.
    const tx: SqlClient = { ...client, ...support(client), transaction: (f) => f(tx), close: async () => undefined };
    const out = await fn(tx);
    // The caller was already answered 503 (the database was too slow): what it was told failed must not land.
    if (expired()) throw new SqlUnavailableError('timeout', 'the transaction outlived its time-out and was rolled back');
    await conn.commit();
    return out;
  } catch (err) {
    await conn.rollback().catch((rollbackErr: unknown) => {
      // A connection that cannot even roll back is broken: it is not handed out again.
      broken = rollbackErr;
    });
    throw err;
  } finally {
    conn.release(broken);
  }
}

/** One pooled connection lent for a transaction, and the statements it runs. */
export interface CheckedOutConnection {
  ops: TransactionConnection;
  client: SqlStatements;
}

/**
 * What the pooled clients (MariaDB/MySQL, PostgreSQL) share: every operation
 * ends within `timeouts.operationMs`, and the driver's "not now" errors leave
 * as SqlUnavailableError, its refused values as SqlInputError; each subclass
 * brings its pool and its classifiers.
 */
export abstract class PooledSqlClient implements SqlClient {
  abstract readonly dialect: Dialect;
  /** Statements on the pool (one connection each). */
  protected abstract readonly base: SqlStatements;
  protected abstract readonly timeouts: SqlTimeouts;
  /** The driver's error as SqlUnavailableError (the server cannot serve now) or SqlInputError (it refused a value). */
  protected abstract classify(err: unknown): SqlUnavailableError | SqlInputError | undefined;
  /** One connection of the pool, for a transaction. */
  protected abstract checkout(): Promise<CheckedOutConnection>;
  /** The dialect's introspection and error meanings, reading through `statements`. */
  protected abstract supportOf(statements: SqlStatements): SqlDialectSupport;

  tableExists(table: string): Promise<boolean> {
    return this.supportOf(this).tableExists(table);
  }

  columnNames(table: string): Promise<string[]> {
    return this.supportOf(this).columnNames(table);
  }

  indexes(table: string): Promise<SqlIndexInfo[]> {
    return this.supportOf(this).indexes(table);
  }

  isUniqueViolation(err: unknown): boolean {
    return this.supportOf(this).isUniqueViolation(err);
  }

  isRetryable(err: unknown): boolean {
    return this.supportOf(this).isRetryable(err);
  }

  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return bounded(
      () => this.base.query<T>(sql, params),
      this.timeouts.operationMs,
      (e) => this.classify(e),
    );
  }

  execute(sql: string, params?: readonly unknown[]): Promise<ExecResult> {
    return bounded(
      () => this.base.execute(sql, params),
      this.timeouts.operationMs,
      (e) => this.classify(e),
    );
  }

  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return bounded(
      async (expired) => {
        const c = await this.checkout();
        if (expired()) {
          // Lent only after the caller was answered: nothing of it runs.
          c.ops.release();
          throw new SqlUnavailableError('timeout', 'a connection came free only after the time-out');
        }
        return runTransaction(c.ops, c.client, (statements) => this.supportOf(statements), fn, expired);
      },
      this.timeouts.operationMs,
      (e) => this.classify(e),
    );
  }

  async close(): Promise<void> {
    // A server that hangs keeps a pool's end waiting for ever (its goodbye queued behind a stuck
    // statement): a bounded client stops waiting, so a shutdown still reaches the flows.
    await bounded(
      () => this.endPool(),
      this.timeouts.operationMs,
      () => undefined,
    ).catch((err: unknown) => {
      if (!(err instanceof SqlUnavailableError && err.reason === 'timeout')) throw err;
    });
  }

  /** Ends the pool: every connection closed. */
  protected abstract endPool(): Promise<void>;
}
