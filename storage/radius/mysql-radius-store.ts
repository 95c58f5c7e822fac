/** RadiusStore on MariaDB/MySQL over FreeRADIUS's mysql schema. */
import { DateTime } from 'luxon';
import type { SqlClient } from '../sql/sql-client.js';
import { netsvcTables, reportIndexes } from './netsvc-tables.js';
import { SqlRadiusStore, type IndexSpec, type RadiusStoreOptions, type TableSpec } from './sql-radius-store.js';

const WALL = 'yyyy-LL-dd HH:mm:ss';

/**
 * MariaDB: radacct times are `datetime` wall clock (FreeRADIUS's FROM_UNIXTIME
 * in the session zone) and radpostauth.authdate FreeRADIUS's local time, so
 * both compare with wall-clock text in the store's zone. User names compare
 * case-insensitively under the default `_ci` collation, as FreeRADIUS sees them.
 */
export class MysqlRadiusStore extends SqlRadiusStore {
  protected readonly lockClause = ' FOR UPDATE';

  constructor(db: SqlClient, options?: RadiusStoreOptions) {
    if (db.dialect !== 'mysql') throw new Error(`MysqlRadiusStore needs a mysql client, got ${db.dialect}`);
    super(db, options);
  }

  protected tableSpecs(): TableSpec[] {
    return netsvcTables('mysql');
  }

  protected indexSpecs(): IndexSpec[] {
    return reportIndexes('mysql');
  }

  protected async insertId(db: SqlClient, sql: string, params: unknown[]): Promise<number> {
    const res = await db.execute(sql, params);
    return Number(res.insertId);
  }

  protected acctTimeParam(ms: number): unknown {
    return this.wall(ms);
  }

  protected acctTimeText(value: unknown): string | null {
    return value === null || value === undefined ? null : String(value).slice(0, 19);
  }

  protected acctTimeMs(value: unknown): number | undefined {
    if (value === null || value === undefined) return undefined;
    const t = DateTime.fromFormat(String(value).slice(0, 19), WALL, { zone: this.timeZone });
    return t.isValid ? t.toMillis() : undefined;
  }

  protected authdateParam(ms: number): unknown {
    return this.wall(ms);
  }

  protected authdateText(value: unknown): string {
    return value === null || value === undefined ? '' : String(value).slice(0, 19);
  }

  protected override nameKey(name: string): string {
    return name.toLowerCase();
  }
}
