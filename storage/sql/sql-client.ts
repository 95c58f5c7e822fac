/**
 * The smallest subset of a SQL driver the stores need, one implementation per
 * database (Kysely's Driver idea). Statements use `?` placeholders everywhere;
 * the PostgreSQL client numbers them. Statement text never contains input:
 * every value goes through parameters, and no `?` may appear in a literal.
 */

/** Which database a client talks to; stores branch on it for dialect SQL. */
export type Dialect = 'sqlite' | 'mysql' | 'postgres';

/** Outcome of a statement that changes rows. */
export interface ExecResult {
  affectedRows: number;
  /** Auto-increment id of an INSERT (MySQL, SQLite); PostgreSQL callers use RETURNING. */
  insertId?: number;
}

/** A connection (or pool) that runs parameterised statements. */
export interface SqlClient {
  readonly dialect: Dialect;
  /** Runs a statement that returns rows. */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement that changes rows. */
  execute(sql: string, params?: readonly unknown[]): Promise<ExecResult>;
  /** Runs `fn` in one transaction on one connection; rolls back if it throws. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  /** Releases every connection. */
  close(): Promise<void>;
}

/** A database URL that cannot be used. */
export class DatabaseUrlError extends Error {
  override readonly name = 'DatabaseUrlError';
}

/** Parsed form of `sqlite:PATH`, `mysql://…` or `postgres://…`. */
export type DatabaseTarget =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'mysql'; url: string }
  | { dialect: 'postgres'; url: string };

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
  release(): void;
}

/**
 * Runs `fn` on one connection between BEGIN and COMMIT, rolling back when it
 * throws; shared by the pooled clients so their transactions behave the same.
 */
export async function runTransaction<T>(
  conn: TransactionConnection,
  client: Omit<SqlClient, 'transaction' | 'close'>,
  fn: (tx: SqlClient) => Promise<T>,
): Promise<T> {
  try {
    await conn.begin();
    // Nested transaction() calls join the open one.
    const tx: SqlClient = { ...client, transaction: (f) => f(tx), close: async () => undefined };
    const out = await fn(tx);
    await conn.commit();
    return out;
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    throw err;
  } finally {
    conn.release();
  }
}
