import pg from 'pg';
import { runTransaction, type ExecResult, type SqlClient } from './sql-client.js';

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

function wrap(conn: Queryable): Omit<SqlClient, 'transaction' | 'close'> {
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

/** PostgreSQL through a pg pool, with the session in UTC. */
export class PostgresSqlClient implements SqlClient {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly base: Omit<SqlClient, 'transaction' | 'close'>;

  constructor(url: string, options: { max?: number } = {}) {
    // A server that silently drops packets must fail a request in seconds, not after the OS TCP timeout.
    this.pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, options: '-c TimeZone=UTC', connectionTimeoutMillis: 5000 });
    // An idle client that loses its server must not crash the process.
    this.pool.on('error', () => undefined);
    this.base = wrap(this.pool);
  }

  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.base.query<T>(sql, params);
  }

  execute(sql: string, params?: readonly unknown[]): Promise<ExecResult> {
    return this.base.execute(sql, params);
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const ops = {
      begin: () => client.query('BEGIN'),
      commit: () => client.query('COMMIT'),
      rollback: () => client.query('ROLLBACK'),
      release: () => client.release(),
    };
    return runTransaction(ops, wrap(client), fn);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
