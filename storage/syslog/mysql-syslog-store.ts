/**
 * SystemEvents in MySQL/MariaDB, as rsyslog's ommysql writes it. Default
 * collations compare case-insensitively and ignore trailing spaces, so exact
 * matches add a binary comparison after the indexable one.
 */
import type { SqlClient } from '../sql/sql-client.js';
import {
  escapeLike,
  INDEX_NAMES,
  SqlSyslogStore,
  type SqlWhere,
  type SyslogStoreOptions,
  type SystemEventsRow,
} from './sql-syslog-store.js';
import type { IndexReport } from './syslog-store.js';

// InnoDB secondary indexes end with the primary key anyway; ID is named for clarity.
const INDEXES: Array<[string, string]> = [
  [INDEX_NAMES.received, 'ReceivedAt, ID'],
  [INDEX_NAMES.host, 'FromHost, ReceivedAt, ID'],
  [INDEX_NAMES.priority, 'Priority, ReceivedAt, ID'],
  [INDEX_NAMES.tag, 'SysLogTag, ReceivedAt, ID'],
];

/** SyslogStore over a MySQL/MariaDB SystemEvents table. */
export class MysqlSyslogStore extends SqlSyslogStore {
  readonly dialect = 'mysql' as const;
  // MySQL sorts NULL lowest, so DESC already puts rows without ReceivedAt last.
  protected readonly orderBy = 'ReceivedAt DESC, ID DESC';

  constructor(client: SqlClient, options?: SyslogStoreOptions) {
    super(client, options);
    if (client.dialect !== 'mysql') throw new Error(`MysqlSyslogStore needs a mysql client, got ${client.dialect}`);
  }

  /**
   * Deep pages as a deferred join: InnoDB skips the OFFSET rows inside a secondary index
   * (its entries end with the primary key), then reads only the page's rows; a plain
   * OFFSET reads every skipped row, or makes the optimiser sort the whole table.
   */
  protected override exact(cols: string, where: SqlWhere, limit: number, offset: number): Promise<SystemEventsRow[]> {
    if (offset === 0) return super.exact(cols, where, limit, offset);
    return this.client.query<SystemEventsRow>(
      `SELECT ${cols} FROM SystemEvents JOIN (SELECT ID AS k FROM SystemEvents WHERE ${where.sql} ` +
        `ORDER BY ${this.orderBy} LIMIT ? OFFSET ?) page ON page.k = SystemEvents.ID ORDER BY ${this.orderBy}`,
      [...where.params, limit, offset],
    );
  }

  protected override walkSql(cols: string, whereSql: string): string {
    return `SELECT ${cols} FROM SystemEvents FORCE INDEX (PRIMARY) WHERE ID BETWEEN ? AND ? AND ${whereSql} ORDER BY ${this.orderBy} LIMIT ?`;
  }

  protected exactSql(column: string): string {
    return `(${column} = ? AND CAST(${column} AS BINARY) = CAST(? AS BINARY))`;
  }

  protected exactParams(value: string): unknown[] {
    return [value, value];
  }

  protected prefixSql(column: string, value: string): { sql: string; params: unknown[] } {
    const pattern = `${escapeLike(value)}%`;
    return {
      sql: `(${column} LIKE ? ESCAPE '!' AND CAST(${column} AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!')`,
      params: [pattern, pattern],
    };
  }

  protected containsSql(column: string, value: string): { sql: string; params: unknown[] } {
    return { sql: `${column} LIKE ? ESCAPE '!'`, params: [`%${escapeLike(value)}%`] };
  }

  async createIndexes(): Promise<IndexReport> {
    const have = await this.existingIndexes();
    const missing = INDEXES.filter(([name]) => !have.has(name));
    const report: IndexReport = {
      created: missing.map(([name]) => name),
      existing: INDEXES.filter(([name]) => have.has(name)).map(([name]) => name),
    };
    if (missing.length) {
      // One ALTER reads the table once for all indexes; LOCK=NONE lets rsyslog keep inserting meanwhile.
      await this.client.execute(
        `ALTER TABLE SystemEvents ${missing.map(([name, cols]) => `ADD INDEX ${name} (${cols})`).join(', ')}, ALGORITHM=INPLACE, LOCK=NONE`,
      );
      await this.client.query('ANALYZE TABLE SystemEvents');
    }
    this.forgetTableInfo();
    return report;
  }

  async dropIndexes(): Promise<string[]> {
    const have = await this.existingIndexes();
    const present = INDEXES.filter(([name]) => have.has(name)).map(([name]) => name);
    if (present.length) await this.client.execute(`ALTER TABLE SystemEvents ${present.map((n) => `DROP INDEX ${n}`).join(', ')}`);
    this.forgetTableInfo();
    return present;
  }
}
