/**
 * SystemEvents in PostgreSQL, as rsyslog's ompgsql writes it. The schema's
 * unquoted names are folded to lower case (`systemevents.receivedat`); the
 * SQL here is unquoted too, so it folds the same way.
 */
import type { SqlClient } from '../sql/sql-client.js';
import { escapeLike, INDEX_NAMES, SqlSyslogStore, type SyslogStoreOptions } from './sql-syslog-store.js';
import type { IndexReport } from './syslog-store.js';

// DESC NULLS LAST matches the ORDER BY, so a forward index scan yields the page;
// varchar_pattern_ops lets the tag index serve the `prog[%` prefix under any collation.
const INDEXES: Array<[string, string]> = [
  [INDEX_NAMES.received, 'ReceivedAt DESC NULLS LAST, ID DESC'],
  [INDEX_NAMES.host, 'FromHost, ReceivedAt DESC NULLS LAST, ID DESC'],
  [INDEX_NAMES.priority, 'Priority, ReceivedAt DESC NULLS LAST, ID DESC'],
  [INDEX_NAMES.tag, 'SysLogTag varchar_pattern_ops, ReceivedAt DESC NULLS LAST, ID DESC'],
];

/** SyslogStore over a PostgreSQL SystemEvents table. */
export class PostgresSyslogStore extends SqlSyslogStore {
  readonly dialect = 'postgres' as const;
  // PostgreSQL sorts NULL highest; rows without ReceivedAt go last as on the other databases.
  protected readonly orderBy = 'ReceivedAt DESC NULLS LAST, ID DESC';

  constructor(client: SqlClient, options?: SyslogStoreOptions) {
    super(client, options);
    if (client.dialect !== 'postgres') throw new Error(`PostgresSyslogStore needs a postgres client, got ${client.dialect}`);
  }

  protected override walkSql(cols: string, whereSql: string): string {
    // OFFSET 0 keeps the sort out of the subquery, so it is planned as an ID range scan alone.
    return (
      `SELECT * FROM (SELECT ${cols} FROM SystemEvents WHERE ID BETWEEN ? AND ? AND ${whereSql} OFFSET 0) w ` +
      'ORDER BY receivedat DESC NULLS LAST, id DESC LIMIT ?'
    );
  }

  protected exactSql(column: string): string {
    return `${column} = ?`;
  }

  protected exactParams(value: string): unknown[] {
    return [value];
  }

  protected prefixSql(column: string, value: string): { sql: string; params: unknown[] } {
    return { sql: `${column} LIKE ? ESCAPE '!'`, params: [`${escapeLike(value)}%`] };
  }

  protected containsSql(column: string, value: string): { sql: string; params: unknown[] } {
    return { sql: `${column} ILIKE ? ESCAPE '!'`, params: [`%${escapeLike(value)}%`] };
  }

  async createIndexes(): Promise<IndexReport> {
    const have = await this.existingIndexes();
    const report: IndexReport = { created: [], existing: [] };
    for (const [name, columns] of INDEXES) {
      const valid = have.get(name);
      if (valid === true) {
        report.existing.push(name);
        continue;
      }
      // A CONCURRENTLY build that was interrupted leaves an invalid index behind; rebuild it.
      if (valid === false) await this.client.execute(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      // CONCURRENTLY: rsyslog keeps inserting while the index is built.
      await this.client.execute(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON SystemEvents (${columns})`);
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
      await this.client.execute(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      dropped.push(name);
    }
    this.forgetTableInfo();
    return dropped;
  }
}
