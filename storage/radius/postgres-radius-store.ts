/** RadiusStore on PostgreSQL over FreeRADIUS's postgresql schema. */
import ipaddr from 'ipaddr.js';
import { DateTime } from 'luxon';
import type { SqlClient } from '../sql/sql-client.js';
import { netsvcTables, reportIndexes } from './netsvc-tables.js';
import { SqlRadiusStore, type IndexSpec, type RadiusStoreOptions, type TableSpec } from './sql-radius-store.js';

// What PostgreSQL prints for timestamptz in a UTC session: 2026-11-21 23:30:23.311474+00
const PG_TIMESTAMPTZ = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2})(?::?(\d{2}))?$/;

/** Epoch ms of a timestamptz as PostgreSQL prints it, or undefined. */
export function parsePgTimestamptz(text: string): number | undefined {
  const m = PG_TIMESTAMPTZ.exec(text.trim());
  if (!m) return undefined;
  const iso = `${m[1]}T${m[2]}${m[3] ?? ''}${m[4]}:${m[5] ?? '00'}`;
  const t = DateTime.fromISO(iso, { setZone: true });
  return t.isValid ? t.toMillis() : undefined;
}

/**
 * PostgreSQL: radacct and radpostauth times are `timestamptz` (real instants,
 * printed in the configured zone), addresses are `inet` (a value that is no
 * address cannot be compared at all, so such a filter matches nothing), and
 * empty optional values are NULL where the other schemas store ''.
 */
export class PostgresRadiusStore extends SqlRadiusStore {
  protected readonly lockClause = ' FOR UPDATE';
  protected override readonly ilike = 'ILIKE';

  constructor(db: SqlClient, options?: RadiusStoreOptions) {
    if (db.dialect !== 'postgres') throw new Error(`PostgresRadiusStore needs a postgres client, got ${db.dialect}`);
    super(db, options);
  }

  protected tableSpecs(): TableSpec[] {
    return netsvcTables('postgres');
  }

  protected indexSpecs(): IndexSpec[] {
    return reportIndexes('postgres');
  }

  protected override async indexExists(name: string, table: string): Promise<boolean> {
    const index = (await this.db.indexes(table)).find((i) => i.name === name);
    // An interrupted CREATE INDEX CONCURRENTLY leaves an invalid index behind: build it again.
    if (index && !index.valid) {
      await this.db.execute(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      return false;
    }
    return index !== undefined;
  }

  protected async insertId(db: SqlClient, sql: string, params: unknown[]): Promise<number> {
    const rows = await db.query<{ id: number }>(`${sql} RETURNING id`, params);
    return Number(rows[0]!.id);
  }

  protected override ipComparable(ip: string): boolean {
    return ipaddr.IPv4.isValidFourPartDecimal(ip) || (ip.includes(':') && ipaddr.IPv6.isValid(ip));
  }

  protected acctTimeParam(ms: number): unknown {
    return new Date(ms).toISOString();
  }

  protected acctTimeMs(value: unknown): number | undefined {
    return value === null || value === undefined ? undefined : parsePgTimestamptz(String(value));
  }

  protected acctTimeText(value: unknown): string | null {
    const ms = this.acctTimeMs(value);
    return ms === undefined ? (value === null || value === undefined ? null : String(value)) : this.wall(ms);
  }

  protected authdateParam(ms: number): unknown {
    return new Date(ms).toISOString();
  }

  protected authdateText(value: unknown): string {
    return this.acctTimeText(value) ?? '';
  }
}
