/** RadiusStore on SQLite over FreeRADIUS's sqlite schema. */
import type { SqlClient } from '../sql/sql-client.js';
import { netsvcTables, reportIndexes } from './netsvc-tables.js';
import { SqlRadiusStore, type IndexSpec, type RadiusStoreOptions, type TableSpec } from './sql-radius-store.js';

/**
 * SQLite: FreeRADIUS 3.2 stores radacct times as epoch seconds (INTEGER) and
 * radpostauth.authdate as its local time in TEXT. Writers are serialised by
 * `BEGIN IMMEDIATE`, which is also the per-user lock. FreeRADIUS waits only
 * 200 ms for a locked database before it rejects a login, so every write here
 * is one short transaction of a few statements.
 */
export class SqliteRadiusStore extends SqlRadiusStore {
  protected readonly lockClause = '';

  constructor(db: SqlClient, options?: RadiusStoreOptions) {
    if (db.dialect !== 'sqlite') throw new Error(`SqliteRadiusStore needs a sqlite client, got ${db.dialect}`);
    super(db, options);
  }

  protected tableSpecs(): TableSpec[] {
    return netsvcTables('sqlite');
  }

  protected indexSpecs(): IndexSpec[] {
    return reportIndexes('sqlite');
  }

  protected async insertId(db: SqlClient, sql: string, params: unknown[]): Promise<number> {
    const res = await db.execute(sql, params);
    return Number(res.insertId);
  }

  protected acctTimeParam(ms: number): unknown {
    return Math.floor(ms / 1000);
  }

  protected acctTimeMs(value: unknown): number | undefined {
    if (value === null || value === undefined || value === '') return undefined;
    if (typeof value === 'number' || /^\d+$/.test(String(value))) return Number(value) * 1000;
    // A row written by another tool as text: read it as wall clock.
    const t = Date.parse(`${String(value).slice(0, 19).replace(' ', 'T')}Z`);
    return Number.isNaN(t) ? undefined : t;
  }

  protected acctTimeText(value: unknown): string | null {
    if (value === null || value === undefined || value === '') return null;
    if (typeof value === 'number' || /^\d+$/.test(String(value))) return this.wall(Number(value) * 1000);
    return String(value).slice(0, 19);
  }

  protected authdateParam(ms: number): unknown {
    return this.wall(ms);
  }

  protected authdateText(value: unknown): string {
    return value === null || value === undefined ? '' : String(value).slice(0, 19);
  }
}
