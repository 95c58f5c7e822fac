/**
 * SystemEvents in PostgreSQL, as rsyslog's ompgsql writes it. The schema's
 * unquoted names are folded to lower case (`systemevents.receivedat`); the
 * SQL here is unquoted too, so it folds the same way.
 */
import type { SqlClient } from '../sql/sql-client.js';
import { escapeLike, INDEX_NAMES, SqlSyslogStore, type SyslogStoreOptions, type TableInfo } from './sql-syslog-store.js';
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

  protected async introspect(): Promise<TableInfo> {
    const cols = await this.client.query<{ name: string }>(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'systemevents'",
    );
    if (cols.length === 0) throw new Error('relation "systemevents" does not exist');
    // indoption bit 0 = DESC, bit 1 = NULLS FIRST: 1 (DESC NULLS LAST) scans forward, 2 (ASC NULLS FIRST)
    // backward, both in the DESC NULLS LAST order the queries use.
    const timeIdx = await this.client.query(
      'SELECT 1 AS ok FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] ' +
        "WHERE i.indrelid = to_regclass('systemevents') AND a.attname = 'receivedat' AND i.indisvalid AND i.indoption[0] IN (1, 2)",
    );
    return {
      hasProcessId: cols.some((c) => c.name === 'processid'),
      hasTimeIndex: timeIdx.length > 0,
    };
  }

  private async existingIndexes(): Promise<Map<string, boolean>> {
    const rows = await this.client.query<{ name: string; valid: boolean }>(
      'SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ' +
        "WHERE i.indrelid = to_regclass('systemevents')",
    );
    return new Map(rows.map((r) => [r.name, r.valid]));
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
