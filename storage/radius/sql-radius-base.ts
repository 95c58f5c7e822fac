/**
 * The ground floor of SqlRadiusStore (sql-radius-store.ts): options, the
 * dialect hooks each `*-radius-store.ts` fills in, the helpers every floor
 * above uses (wall-clock times, the error classification of `guarded`, the
 * retried transaction), health and the schema (migrate, indexes).
 *
 * The store is built in floors, one file each, every one an abstract class
 * extending the one below: base → users (sql-radius-users.ts) → profiles and
 * attributes (sql-radius-attributes.ts) → reports (sql-radius-reports.ts) →
 * SqlRadiusStore. They share the per-user lock and helpers as protected
 * members, which plain functions could only reach through a wider interface.
 */
import type { StoreHealth } from '../store-health.js';
import { DateTime } from 'luxon';
import { SqlInputError, SqlUnavailableError, type SqlClient } from '../sql/sql-client.js';
import {
  INFO_FIELDS,
  RadiusStoreError,
  type IndexReport,
  type MigrateReport,
  type PageRequest,
  type UserSummary,
} from './radius-store.js';
import { freeradiusSchemaStatements } from './schema-files.js';

/** Options every RadiusStore takes. */
export interface RadiusStoreOptions {
  /**
   * IANA zone of wall-clock times: MariaDB radacct/radpostauth values (FreeRADIUS
   * writes its local time there), netsvc's own dates, and every time printed.
   */
  timeZone?: string;
  /** The reject group of disabled users (daloRADIUS's name by default). */
  disabledGroup?: string;
  now?: () => number;
}

/** Default reject group: daloRADIUS's, so both tools agree on who is disabled. */
export const DEFAULT_DISABLED_GROUP = 'daloRADIUS-Disabled-Users';

/** One extra index of `netsvc db index radius`. */
export interface IndexSpec {
  name: string;
  table: string;
  columns: string;
  /** Full CREATE INDEX statement in the dialect. */
  ddl: string;
}

/** A netsvc table: its name and the statements that create it. */
export interface TableSpec {
  name: string;
  ddl: string[];
}

// Authentication attributes belong to the user record, not to its access attributes.
export const AUTH_ATTRIBUTES = ['Cleartext-Password', 'Auth-Type'];
export const isAuthAttribute = (name: string): boolean =>
  AUTH_ATTRIBUTES.some((a) => a.toLowerCase() === name.toLowerCase()) || /-password$/i.test(name);

/** FreeRADIUS's tables the hotspot area reads or writes. */
const FREERADIUS_TABLES = [
  'radcheck',
  'radreply',
  'radgroupcheck',
  'radgroupreply',
  'radusergroup',
  'radacct',
  'radpostauth',
  'nas',
];
/** Node socket errors (mysql2 and pg pass them on as they are): the server cannot be reached at all. */

/** What the client is told when the database refused one of its values; no parameter is named, the database does not say which. */
const INPUT_REFUSED: Record<SqlInputError['reason'], string> = {
  encoding: 'Invalid input: a value holds a character the RADIUS database cannot store.',
  out_of_range: 'Invalid input: a value is out of the range the RADIUS database accepts.',
  malformed: 'Invalid input: a value is not in a form the RADIUS database accepts.',
};

export const INFO_COLUMNS = INFO_FIELDS.join(', ');
export const WALL = 'yyyy-LL-dd HH:mm:ss';
// Deadlocks can happen between unrelated users on MariaDB gap locks; such a transaction is simply run again.
const MAX_ATTEMPTS = 4;

/** Thrown inside a transaction to have it run again: it met a row another writer committed meanwhile, which the next run finds. */
export class RetryTransaction extends Error {
  override readonly name = 'RetryTransaction';
}

/** The refusal of a name that is no profile. */
export function profileNotFound(name: string): RadiusStoreError {
  return new RadiusStoreError('profile_not_found', `Profile '${name}' not found.`);
}

export type Row = Record<string, unknown>;

export interface InfoRow extends Row {
  id: number;
  username: string;
  usertype: string | null;
  createddate: unknown;
  createdby: string;
  updateddate: unknown;
  updatedby: string | null;
}

export interface AuthState {
  usertype: UserSummary['usertype'];
  password: string | null;
  profiles: string[];
  disabled: boolean;
}

/** Collects WHERE conditions and their parameters in order. */
export class Conditions {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]): void {
    this.parts.push(sql);
    this.params.push(...params);
  }
  in(column: string, values: readonly unknown[]): void {
    this.add(`${column} IN (${values.map(() => '?').join(', ')})`, ...values);
  }
  get where(): string {
    return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
  }
}

export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
export const num = (v: unknown): number => (v === null || v === undefined || v === '' ? 0 : Number(v));
export const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const offsetOf = (p: PageRequest): number => (p.page - 1) * p.perPage;

/** The shared ground: dialect hooks, helpers, error classification, health and schema. */
export abstract class SqlRadiusBase {
  protected readonly timeZone: string;
  protected readonly disabledGroup: string;
  protected readonly now: () => number;

  constructor(
    protected readonly db: SqlClient,
    options: RadiusStoreOptions = {},
  ) {
    this.timeZone = options.timeZone ?? 'UTC';
    this.disabledGroup = options.disabledGroup ?? DEFAULT_DISABLED_GROUP;
    this.now = options.now ?? Date.now;
    if (!DateTime.local().setZone(this.timeZone).isValid) throw new Error(`unknown time zone: ${this.timeZone}`);
  }

  // ---------------------------------------------------------------- dialect

  /** Appended to the SELECT that locks a user row. */
  protected abstract readonly lockClause: string;
  /** netsvc's own tables. */
  protected abstract tableSpecs(): TableSpec[];
  /** The extra report indexes. */
  protected abstract indexSpecs(): IndexSpec[];
  /** Whether the report index exists; the client reads the schema (PostgreSQL's store also drops an unusable one). */
  protected async indexExists(name: string, table: string): Promise<boolean> {
    return (await this.db.indexes(table)).some((i) => i.name === name);
  }
  /** Runs an INSERT and answers the new row's id. */
  protected abstract insertId(db: SqlClient, sql: string, params: unknown[]): Promise<number>;
  /** Value compared with radacct start/stop times for an instant (epoch ms). */
  protected abstract acctTimeParam(ms: number): unknown;
  /** radacct time as read → `YYYY-MM-DD HH:MM:SS` in the store's zone. */
  protected abstract acctTimeText(value: unknown): string | null;
  /** radacct time as read → epoch ms. */
  protected abstract acctTimeMs(value: unknown): number | undefined;
  /** Value compared with radpostauth.authdate for an instant. */
  protected abstract authdateParam(ms: number): unknown;
  protected abstract authdateText(value: unknown): string;
  /** False when the address column cannot hold `ip` at all (PostgreSQL inet), so nothing can match. */
  protected ipComparable(_ip: string): boolean {
    return true;
  }
  /** Key under which two user names are the same user (MariaDB compares case-insensitively). */
  protected nameKey(name: string): string {
    return name;
  }
  /** `LIKE` that ignores case on every dialect. */
  protected readonly ilike: string = 'LIKE';

  // ---------------------------------------------------------------- helpers

  /** Wall-clock text of an instant in the store's zone. */
  protected wall(ms: number): string {
    return DateTime.fromMillis(ms, { zone: this.timeZone }).toFormat(WALL);
  }

  /**
   * The exclusive end of the second `to` names (upper bounds are inclusive at one-second
   * resolution), or undefined when there is no bound: no `to`, or an end past the year 9999,
   * later than anything stored, which MariaDB would compare as nothing and PostgreSQL refuse.
   */
  protected endOfSecond(to: number | undefined): number | undefined {
    if (to === undefined) return undefined;
    const end = Math.floor(to / 1000) * 1000 + 1000;
    const past = (t: DateTime) => t.year > 9999;
    return past(DateTime.fromMillis(end, { zone: this.timeZone })) || past(DateTime.fromMillis(end, { zone: 'UTC' }))
      ? undefined
      : end;
  }

  /** Text of a netsvc datetime column as read (`YYYY-MM-DD HH:MM:SS`). */
  protected dateText(value: unknown): string | null {
    if (value === null || value === undefined) return null;
    return String(value).slice(0, 19);
  }

  /**
   * Runs one operation of the RadiusStore interface. A database that cannot
   * serve now (the client's SqlUnavailableError: down, restarting, hung, full)
   * or that lacks tables (never migrated) becomes RadiusStoreError
   * `unavailable` / `storage_full` / `schema_missing`, so the API can answer
   * 503 without knowing drivers; missing tables are found by probing the
   * schema, not by reading driver messages. A value the database refused
   * (SqlInputError) becomes `invalid`. Any other driver error (a bug) goes on
   * as it is.
   */
  protected async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw await this.classified(err);
    }
  }

  protected async classified(err: unknown): Promise<unknown> {
    if (err instanceof RadiusStoreError) return err;
    const unreachable = (cause: unknown) =>
      new RadiusStoreError(
        'unavailable',
        `the RADIUS database cannot be reached: ${(cause as Error)?.message ?? String(cause)}`,
        { cause },
      );
    if (err instanceof SqlUnavailableError) {
      if (err.reason === 'disk_full')
        return new RadiusStoreError('storage_full', `the RADIUS database has no space left: ${err.message}`, { cause: err });
      return unreachable(err);
    }
    // The client's value, refused where the API did not foresee it: a 400, the driver's words (which may quote the value) kept in `cause`.
    if (err instanceof SqlInputError) return new RadiusStoreError('invalid', INPUT_REFUSED[err.reason], { cause: err });
    let missing: string[];
    try {
      missing = await this.missingTables();
    } catch {
      return unreachable(err);
    }
    if (!missing.length) return err;
    return new RadiusStoreError(
      'schema_missing',
      `the RADIUS database lacks table(s) ${missing.join(', ')}: run netsvc db migrate --create-peer-tables (FreeRADIUS's tables from the schema netsvc ships, then netsvc's)`,
      { cause: err },
    );
  }

  async health(): Promise<StoreHealth> {
    let missing: string[];
    try {
      missing = await this.missingTables();
    } catch (err) {
      return { state: 'unreachable', detail: (err as Error).message };
    }
    return missing.length ? { state: 'schema_missing', detail: `missing table(s) ${missing.join(', ')}` } : { state: 'ok' };
  }

  /** FreeRADIUS's and netsvc's tables that the database does not have. */
  protected async missingTables(): Promise<string[]> {
    const missing: string[] = [];
    for (const name of [...FREERADIUS_TABLES, ...this.tableSpecs().map((t) => t.name)]) {
      if (!(await this.db.tableExists(name))) missing.push(name);
    }
    return missing;
  }

  protected async tx<T>(fn: (db: SqlClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(fn);
      } catch (err) {
        if (attempt < MAX_ATTEMPTS && (err instanceof RetryTransaction || this.db.isRetryable(err))) continue;
        throw err;
      }
    }
  }

  // ---------------------------------------------------------------- schema

  async migrate(options: { createFreeradiusTables?: boolean } = {}): Promise<MigrateReport> {
    let createdFreeradiusTables = false;
    if (!(await this.db.tableExists('radcheck'))) {
      if (!options.createFreeradiusTables) {
        throw new RadiusStoreError('schema_missing', "FreeRADIUS's tables are missing (no radcheck)");
      }
      for (const stmt of freeradiusSchemaStatements(this.db.dialect)) await this.db.execute(stmt);
      createdFreeradiusTables = true;
    }
    const createdTables: string[] = [];
    for (const spec of this.tableSpecs()) {
      if (await this.db.tableExists(spec.name)) continue;
      for (const stmt of spec.ddl) await this.db.execute(stmt);
      createdTables.push(spec.name);
    }
    return { createdFreeradiusTables, createdTables };
  }

  async createIndexes(): Promise<IndexReport[]> {
    const out: IndexReport[] = [];
    for (const spec of this.indexSpecs()) {
      const exists = await this.indexExists(spec.name, spec.table);
      if (!exists) await this.db.execute(spec.ddl);
      out.push({ name: spec.name, table: spec.table, columns: spec.columns, created: !exists });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
