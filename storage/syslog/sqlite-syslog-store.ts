/**
 * SystemEvents in SQLite: the embedded default, fed by netsvc's own syslog
 * receiver. netsvc owns this file, so `ensureSchema` creates the table and
 * the helpful indexes itself.
 */
import type { SqlClient } from '../sql/sql-client.js';
import { SqliteSqlClient } from '../sql/sqlite-sql-client.js';
import { schemaStatements } from './schema-files.js';
import { escapeLike, INDEX_NAMES, SqlSyslogStore, type SyslogStoreOptions } from './sql-syslog-store.js';
import type { IndexReport } from './syslog-store.js';

const INDEXES: Array<[string, string]> = [
  [INDEX_NAMES.received, 'ReceivedAt, ID'],
  [INDEX_NAMES.host, 'FromHost, ReceivedAt, ID'],
  [INDEX_NAMES.priority, 'Priority, ReceivedAt, ID'],
  [INDEX_NAMES.tag, 'SysLogTag, ReceivedAt, ID'],
];

/** GLOB is SQLite's case-sensitive LIKE; `*`, `?` and `[` are made literal by bracketing them. */
function escapeGlob(value: string): string {
  return value.replace(/[*?[]/g, '[$&]');
}

/**
 * The embedded receiver's own connection to the file at `path`, for its
 * inserts. better-sqlite3 is synchronous, so a write waiting out a
 * busy_timeout on a file another process has locked would hold serve's
 * event loop (HTTP, /metrics, every socket) for as long; with busy_timeout 0
 * the write fails at once (SqlUnavailableError `timeout`) and the receiver
 * keeps the batch queued and retries later. The table must exist
 * (`ensureSchema` on the reading store first).
 */
export function openSqliteEventSink(path: string): SqliteSyslogStore {
  return new SqliteSyslogStore(new SqliteSqlClient(path, { busyTimeoutMs: 0 }));
}

/** SyslogStore over a SQLite SystemEvents table. */
export class SqliteSyslogStore extends SqlSyslogStore {
  readonly dialect = 'sqlite' as const;
  // SQLite sorts NULL lowest, so DESC already puts rows without ReceivedAt last.
  protected readonly orderBy = 'ReceivedAt DESC, ID DESC';

  constructor(client: SqlClient, options?: SyslogStoreOptions) {
    super(client, options);
    if (client.dialect !== 'sqlite') throw new Error(`SqliteSyslogStore needs a sqlite client, got ${client.dialect}`);
  }

  /** Creates SystemEvents (and, with `indexes`, the helpful indexes) when missing. */
  async ensureSchema(options: { indexes?: boolean } = {}): Promise<void> {
    for (const stmt of schemaStatements('sqlite')) await this.client.execute(stmt);
    if (options.indexes ?? true) await this.createIndexes();
    this.forgetTableInfo();
  }

  protected override walkSql(cols: string, whereSql: string): string {
    // NOT INDEXED leaves the rowid (ID) range as the only way in.
    return `SELECT ${cols} FROM SystemEvents NOT INDEXED WHERE ID BETWEEN ? AND ? AND ${whereSql} ORDER BY ${this.orderBy} LIMIT ?`;
  }

  protected exactSql(column: string): string {
    return `${column} = ?`;
  }

  protected exactParams(value: string): unknown[] {
    return [value];
  }

  protected prefixSql(column: string, value: string): { sql: string; params: unknown[] } {
    return { sql: `${column} GLOB ?`, params: [`${escapeGlob(value)}*`] };
  }

  protected containsSql(column: string, value: string): { sql: string; params: unknown[] } {
    return { sql: `${column} LIKE ? ESCAPE '!'`, params: [`%${escapeLike(value)}%`] };
  }

  async createIndexes(): Promise<IndexReport> {
    const have = await this.existingIndexes();
    const report: IndexReport = { created: [], existing: [] };
    for (const [name, columns] of INDEXES) {
      if (have.has(name)) {
        report.existing.push(name);
        continue;
      }
      await this.client.execute(`CREATE INDEX IF NOT EXISTS ${name} ON SystemEvents (${columns})`);
      report.created.push(name);
    }
    if (report.created.length) await this.client.execute('ANALYZE SystemEvents');
    this.forgetTableInfo();
    return report;
  }

  async dropIndexes(): Promise<string[]> {
    const have = await this.existingIndexes();
    const dropped: string[] = [];
    for (const [name] of INDEXES) {
      if (!have.has(name)) continue;
      await this.client.execute(`DROP INDEX IF EXISTS ${name}`);
      dropped.push(name);
    }
    this.forgetTableInfo();
    return dropped;
  }
}
