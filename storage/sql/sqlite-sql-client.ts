import type Database from 'better-sqlite3';
import {
  SqlInputError,
  SqlUnavailableError,
  type ExecResult,
  type SqlClient,
  type SqlDialectSupport,
  type SqlIndexInfo,
  type SqlStatements,
} from './sql-client.js';
import { openSqlite, sqliteDriver } from './sqlite-driver.js';
import { prepareSqliteFile } from './sqlite-file.js';

type Sqlite = Database.Database;

function bind(params: readonly unknown[]): unknown[] {
  // better-sqlite3 takes no booleans or Dates; map them the way the other drivers store them.
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p instanceof Date ? p.toISOString() : p));
}

/**
 * SQLite's result codes that mean "not now": no room on the disk (or past
 * max_page_count), the file locked by another writer past busy_timeout, or
 * the file cannot be read or written (I/O error, read-only, gone).
 */
export function classifySqliteError(err: unknown): SqlUnavailableError | undefined {
  if (err instanceof SqlUnavailableError) return err;
  if (!(err instanceof sqliteDriver().SqliteError)) return undefined;
  const code = err.code;
  const reason =
    code === 'SQLITE_FULL'
      ? 'disk_full'
      : code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')
        ? 'timeout'
        : code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')
          ? 'unreachable'
          : undefined;
  return reason ? new SqlUnavailableError(reason, `SQLite: ${err.message} (${code})`, { cause: err }) : undefined;
}

/**
 * SQLite's result codes a bound value causes: a text or blob past
 * SQLITE_MAX_LENGTH, or a value of the wrong type where SQLite insists on one
 * (an INTEGER PRIMARY KEY). SQLite stores any text, NUL bytes included, and
 * compares dates as text, so little else is ever refused.
 */
export function sqliteInputError(err: unknown): SqlInputError | undefined {
  if (err instanceof SqlInputError) return err;
  if (!(err instanceof sqliteDriver().SqliteError)) return undefined;
  const reason = err.code === 'SQLITE_TOOBIG' ? 'out_of_range' : err.code === 'SQLITE_MISMATCH' ? 'malformed' : undefined;
  return reason ? new SqlInputError(reason, `SQLite: ${err.message} (${err.code})`, { cause: err }) : undefined;
}

function classified(err: unknown): unknown {
  return classifySqliteError(err) ?? sqliteInputError(err) ?? err;
}

/**
 * SQLite's catalogue (sqlite_master and the table-valued pragmas) and its
 * result codes: a broken UNIQUE or PRIMARY KEY constraint, and SQLITE_BUSY
 * (the client reports a lock held past busy_timeout as SqlUnavailableError,
 * its cause SQLite's own error), after which the transaction may run again.
 */
export function sqliteDialectSupport(db: SqlStatements): SqlDialectSupport {
  return {
    async tableExists(table) {
      const rows = await db.query<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?", [
        table,
      ]);
      return Number(rows[0]?.n) > 0;
    },
    async columnNames(table) {
      return (await db.query<{ name: string }>('SELECT name FROM pragma_table_info(?)', [table])).map((r) => r.name);
    },
    async indexes(table) {
      const rows = await db.query<{ name: string; col: string | null; descending: number }>(
        'SELECT il.name AS name, xi.name AS col, xi."desc" AS descending FROM pragma_index_list(?) il, pragma_index_xinfo(il.name) xi ' +
          'WHERE xi.seqno = 0',
        [table],
      );
      return rows.map((r): SqlIndexInfo => ({
        name: r.name,
        valid: true,
        firstColumn: (r.col ?? '').toLowerCase(),
        descending: Number(r.descending) === 1,
        nullsFirst: Number(r.descending) !== 1,
      }));
    },
    isUniqueViolation(err) {
      const code = (err as { code?: string } | undefined)?.code;
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
    isRetryable(err) {
      const e = err instanceof SqlUnavailableError ? err.cause : err;
      return String((e as { code?: string } | undefined)?.code).startsWith('SQLITE_BUSY');
    },
  };
}

/**
 * SQLite through better-sqlite3. One connection; since a transaction body is
 * async, statements from outside it wait on a queue until it ends, so nothing
 * interleaves with an open transaction.
 */
export class SqliteSqlClient implements SqlClient {
  readonly dialect = 'sqlite' as const;
  readonly db: Sqlite;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(path: string, options: { busyTimeoutMs?: number } = {}) {
    // Group-readable, not world-readable: RADIUS databases hold cleartext passwords (radcheck, radpostauth).
    prepareSqliteFile(path, 0o640);
    this.db = openSqlite(path);
    this.db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
  }

  private serial<T>(fn: () => Promise<T> | T): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private runQuery<T>(sql: string, params: readonly unknown[]): T[] {
    try {
      return this.db.prepare(sql).all(...bind(params)) as T[];
    } catch (err) {
      throw classified(err);
    }
  }

  private runExecute(sql: string, params: readonly unknown[]): ExecResult {
    try {
      const stmt = this.db.prepare(sql);
      if (stmt.reader) {
        stmt.all(...bind(params));
        return { affectedRows: 0 };
      }
      const info = stmt.run(...bind(params));
      return { affectedRows: info.changes, insertId: Number(info.lastInsertRowid) };
    } catch (err) {
      throw classified(err);
    }
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.serial(() => this.runQuery<T>(sql, params));
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<ExecResult> {
    return this.serial(() => this.runExecute(sql, params));
  }

  tableExists(table: string): Promise<boolean> {
    return sqliteDialectSupport(this).tableExists(table);
  }

  columnNames(table: string): Promise<string[]> {
    return sqliteDialectSupport(this).columnNames(table);
  }

  indexes(table: string): Promise<SqlIndexInfo[]> {
    return sqliteDialectSupport(this).indexes(table);
  }

  isUniqueViolation(err: unknown): boolean {
    return sqliteDialectSupport(this).isUniqueViolation(err);
  }

  isRetryable(err: unknown): boolean {
    return sqliteDialectSupport(this).isRetryable(err);
  }

  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      // IMMEDIATE takes the write lock up front, so two writers never deadlock on upgrade.
      this.exec('BEGIN IMMEDIATE');
      const statements: SqlStatements = {
        dialect: 'sqlite',
        query: async <R>(sql: string, params: readonly unknown[] = []) => this.runQuery<R>(sql, params),
        execute: async (sql: string, params: readonly unknown[] = []) => this.runExecute(sql, params),
      };
      // The schema is read on the transaction's own statements: the queue waits for the transaction to end.
      const tx: SqlClient = {
        ...statements,
        ...sqliteDialectSupport(statements),
        transaction: (inner) => inner(tx),
        close: async () => undefined,
      };
      try {
        const out = await fn(tx);
        this.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.exec('ROLLBACK');
        throw err;
      }
    });
  }

  private exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (err) {
      throw classified(err);
    }
  }

  async close(): Promise<void> {
    await this.serial(() => undefined);
    if (this.db.open) this.db.close();
  }
}
