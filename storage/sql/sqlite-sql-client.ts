import Database from 'better-sqlite3';
import type { ExecResult, SqlClient } from './sql-client.js';
import { prepareSqliteFile } from './sqlite-file.js';

type Sqlite = Database.Database;

function bind(params: readonly unknown[]): unknown[] {
  // better-sqlite3 takes no booleans or Dates; map them the way the other drivers store them.
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p instanceof Date ? p.toISOString() : p));
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
    this.db = new Database(path);
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
    return this.db.prepare(sql).all(...bind(params)) as T[];
  }

  private runExecute(sql: string, params: readonly unknown[]): ExecResult {
    const stmt = this.db.prepare(sql);
    if (stmt.reader) {
      stmt.all(...bind(params));
      return { affectedRows: 0 };
    }
    const info = stmt.run(...bind(params));
    return { affectedRows: info.changes, insertId: Number(info.lastInsertRowid) };
  }

  query<T = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.serial(() => this.runQuery<T>(sql, params));
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<ExecResult> {
    return this.serial(() => this.runExecute(sql, params));
  }

  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      // IMMEDIATE takes the write lock up front, so two writers never deadlock on upgrade.
      this.db.exec('BEGIN IMMEDIATE');
      const tx: SqlClient = {
        dialect: 'sqlite',
        query: async <R>(sql: string, params: readonly unknown[] = []) => this.runQuery<R>(sql, params),
        execute: async (sql: string, params: readonly unknown[] = []) => this.runExecute(sql, params),
        transaction: (inner) => inner(tx),
        close: async () => undefined,
      };
      try {
        const out = await fn(tx);
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await this.serial(() => undefined);
    if (this.db.open) this.db.close();
  }
}
