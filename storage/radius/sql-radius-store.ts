/**
 * What the three RadiusStores share: the SQL over FreeRADIUS's tables and
 * netsvc's own, the per-user write lock, and row mapping. Dialect classes
 * supply DDL, time handling, address comparison and error recognition.
 *
 * Concurrency. FreeRADIUS's tables have no unique keys (radusergroup may hold
 * a membership twice), so every write to one user runs in one transaction
 * that first locks that user's `netsvc_userinfo` row (`FOR UPDATE`; SQLite
 * serialises writers with `BEGIN IMMEDIATE`). Two creates of one name are
 * settled by the unique key on `netsvc_userinfo.username`, whose collation
 * is the database default, so MariaDB's case-insensitive names stay unique
 * the way FreeRADIUS matches them.
 */
import type { StoreHealth } from '../store-health.js';
import { DateTime } from 'luxon';
import { SqlInputError, SqlUnavailableError, type SqlClient } from '../sql/sql-client.js';
import { displayMac, macSpellings, normaliseMac } from './mac.js';
import {
  INFO_FIELDS,
  isUserId,
  RadiusStoreError,
  type Actor,
  type AttributeAction,
  type AttributeRow,
  type AttributeWrite,
  type HistoricalSession,
  type IndexReport,
  type InfoField,
  type LoginAttempt,
  type LoginAttemptFilter,
  type MigrateReport,
  type NewQuotaPurchase,
  type NewUser,
  type OnlineSession,
  type PageRequest,
  type ProfileDescription,
  type ProfileMembership,
  type ProfileRecord,
  type ProfileUserRecord,
  type QuotaPurchase,
  type QuotaPurchaseFilter,
  type RadiusStore,
  type SessionFilter,
  type UserChanges,
  type UserDetail,
  type UserStamp,
  type UserSummary,
  type UserType,
} from './radius-store.js';
import { formatDuration, formatTraffic, MASKED_PASS, maskPassword } from './report-format.js';
import { checkQuotaPurchase, splitProfiles } from './quota-purchase.js';
import { freeradiusSchemaStatements } from './schema-files.js';
import { usernameFor } from './username.js';

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
const AUTH_ATTRIBUTES = ['Cleartext-Password', 'Auth-Type'];
const isAuthAttribute = (name: string): boolean =>
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

const INFO_COLUMNS = INFO_FIELDS.join(', ');
const WALL = 'yyyy-LL-dd HH:mm:ss';
// Deadlocks can happen between unrelated users on MariaDB gap locks; such a transaction is simply run again.
const MAX_ATTEMPTS = 4;

type Row = Record<string, unknown>;

interface InfoRow extends Row {
  id: number;
  username: string;
  usertype: string | null;
  createddate: unknown;
  createdby: string;
  updateddate: unknown;
  updatedby: string | null;
}

interface AuthState {
  usertype: UserSummary['usertype'];
  password: string | null;
  profiles: string[];
  disabled: boolean;
}

/** Collects WHERE conditions and their parameters in order. */
class Conditions {
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

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const num = (v: unknown): number => (v === null || v === undefined || v === '' ? 0 : Number(v));
const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const offsetOf = (p: PageRequest): number => (p.page - 1) * p.perPage;

/** The shared implementation; one subclass per dialect. */
export abstract class SqlRadiusStore implements RadiusStore {
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
  protected abstract tableExists(db: SqlClient, name: string): Promise<boolean>;
  protected abstract indexExists(name: string, table: string): Promise<boolean>;
  protected abstract isUniqueViolation(err: unknown): boolean;
  protected abstract isRetryable(err: unknown): boolean;
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
  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw await this.classified(err);
    }
  }

  private async classified(err: unknown): Promise<unknown> {
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
  private async missingTables(): Promise<string[]> {
    const missing: string[] = [];
    for (const name of [...FREERADIUS_TABLES, ...this.tableSpecs().map((t) => t.name)]) {
      if (!(await this.tableExists(this.db, name))) missing.push(name);
    }
    return missing;
  }

  private async tx<T>(fn: (db: SqlClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(fn);
      } catch (err) {
        if (attempt < MAX_ATTEMPTS && this.isRetryable(err)) continue;
        throw err;
      }
    }
  }

  private async lockUser(db: SqlClient, id: number): Promise<InfoRow> {
    if (!isUserId(id)) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
    const rows = await db.query<InfoRow>(
      `SELECT id, username, usertype, ${INFO_COLUMNS}, createddate, createdby, updateddate, updatedby FROM netsvc_userinfo WHERE id = ?${this.lockClause}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
    return row;
  }

  private isDisabledGroup(name: string): boolean {
    return name.toLowerCase() === this.disabledGroup.toLowerCase();
  }

  private async profileExists(db: SqlClient, name: string): Promise<boolean> {
    if (this.isDisabledGroup(name)) return false;
    const rows = await db.query(
      `SELECT 1 AS x FROM netsvc_profile WHERE groupname = ?
       UNION ALL SELECT 1 FROM radgroupreply WHERE groupname = ?
       UNION ALL SELECT 1 FROM radgroupcheck WHERE groupname = ?
       UNION ALL SELECT 1 FROM radusergroup WHERE groupname = ?
       LIMIT 1`,
      [name, name, name, name],
    );
    return rows.length > 0;
  }

  private async requireProfiles(db: SqlClient, names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (!(await this.profileExists(db, name))) throw new RadiusStoreError('profile_not_found', `Profile '${name}' not found.`);
    }
  }

  /** A name FreeRADIUS already knows (any row of the user tables) belongs to someone, even if netsvc did not make it. */
  private async usernameTaken(db: SqlClient, username: string): Promise<boolean> {
    return (await this.storedUsername(db, username)) !== undefined;
  }

  /** The user's name as stored when any user table has it (compared as the database compares), else undefined. */
  private async storedUsername(db: SqlClient, username: string): Promise<string | undefined> {
    const rows = await db.query<{ username: string }>(
      `SELECT username FROM netsvc_userinfo WHERE username = ?
       UNION ALL SELECT username FROM radcheck WHERE username = ?
       UNION ALL SELECT username FROM radreply WHERE username = ?
       UNION ALL SELECT username FROM radusergroup WHERE username = ?
       LIMIT 1`,
      [username, username, username, username],
    );
    return rows[0] ? str(rows[0].username) : undefined;
  }

  private async ensureRejectGroup(db: SqlClient): Promise<void> {
    const rows = await db.query(`SELECT 1 AS x FROM radgroupcheck WHERE groupname = ? AND attribute = 'Auth-Type'`, [
      this.disabledGroup,
    ]);
    if (!rows.length) {
      await db.execute(`INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES (?, 'Auth-Type', ':=', 'Reject')`, [
        this.disabledGroup,
      ]);
    }
  }

  private async ensureFallThrough(db: SqlClient, group: string): Promise<void> {
    const rows = await db.query(`SELECT value FROM radgroupreply WHERE groupname = ? AND attribute = 'Fall-Through'`, [group]);
    if (!rows.length) {
      await db.execute(`INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES (?, 'Fall-Through', '=', 'Yes')`, [
        group,
      ]);
    }
  }

  private async setDisabled(db: SqlClient, username: string, disabled: boolean): Promise<void> {
    await db.execute(`DELETE FROM radusergroup WHERE username = ? AND groupname = ?`, [username, this.disabledGroup]);
    if (disabled) {
      await this.ensureRejectGroup(db);
      // Priority 0: FreeRADIUS reads groups by ascending priority, so the reject group always applies first.
      await db.execute(`INSERT INTO radusergroup (username, groupname, priority) VALUES (?, ?, 0)`, [
        username,
        this.disabledGroup,
      ]);
    }
  }

  private async replaceProfiles(db: SqlClient, username: string, profiles: readonly string[]): Promise<void> {
    await db.execute(`DELETE FROM radusergroup WHERE username = ? AND groupname <> ?`, [username, this.disabledGroup]);
    let priority = 1;
    for (const profile of profiles) {
      await db.execute(`INSERT INTO radusergroup (username, groupname, priority) VALUES (?, ?, ?)`, [
        username,
        profile,
        priority++,
      ]);
    }
  }

  /** Password, profiles and disabled flag of users, keyed by nameKey(username). */
  private async authStates(db: SqlClient, usernames: readonly string[]): Promise<Map<string, AuthState>> {
    const out = new Map<string, AuthState>();
    if (!usernames.length) return out;
    for (const u of usernames) out.set(this.nameKey(u), { usertype: null, password: null, profiles: [], disabled: false });
    const marks = usernames.map(() => '?').join(', ');
    const checks = await db.query<{ username: string; attribute: string; value: string }>(
      `SELECT username, attribute, value FROM radcheck WHERE username IN (${marks}) AND attribute IN ('Cleartext-Password', 'Auth-Type') ORDER BY id`,
      [...usernames],
    );
    for (const c of checks) {
      const s = out.get(this.nameKey(c.username));
      if (!s) continue;
      if (c.attribute === 'Auth-Type' && str(c.value).toLowerCase() === 'accept') s.usertype = 'Auth-Type';
      if (c.attribute === 'Cleartext-Password') {
        s.password = str(c.value);
        if (s.usertype === null) s.usertype = 'Username-Password';
      }
    }
    const groups = await db.query<{ username: string; groupname: string }>(
      `SELECT username, groupname FROM radusergroup WHERE username IN (${marks}) ORDER BY priority, groupname, id`,
      [...usernames],
    );
    for (const g of groups) {
      const s = out.get(this.nameKey(g.username));
      if (!s) continue;
      if (this.isDisabledGroup(g.groupname)) s.disabled = true;
      else if (!s.profiles.includes(g.groupname)) s.profiles.push(g.groupname);
    }
    return out;
  }

  private summary(row: InfoRow, state: AuthState | undefined): UserSummary {
    return {
      id: Number(row.id),
      username: row.username,
      usertype: state?.usertype ?? null,
      profile: state?.profiles.length ? state.profiles.join(', ') : null,
      firstname: orNull(row.firstname),
      lastname: orNull(row.lastname),
      email: orNull(row.email),
      mobile: orNull(row.mobile),
      gender: orNull(row.gender),
      disabled: state?.disabled ?? false,
    };
  }

  private detail(row: InfoRow, state: AuthState | undefined): UserDetail {
    const info = Object.fromEntries(INFO_FIELDS.map((f) => [f, orNull(row[f])])) as Record<InfoField, string | null>;
    return {
      ...this.summary(row, state),
      ...info,
      password: maskPassword(state?.password),
      createddate: this.dateText(row.createddate) ?? '',
      createdby: str(row.createdby),
      updateddate: this.dateText(row.updateddate),
      updatedby: orNull(row.updatedby),
    };
  }

  private async readDetail(db: SqlClient, id: number): Promise<UserDetail | undefined> {
    if (!isUserId(id)) return undefined;
    const rows = await db.query<InfoRow>(
      `SELECT id, username, usertype, ${INFO_COLUMNS}, createddate, createdby, updateddate, updatedby FROM netsvc_userinfo WHERE id = ?`,
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const states = await this.authStates(db, [row.username]);
    return this.detail(row, states.get(this.nameKey(row.username)));
  }

  private async profileList(db: SqlClient, username: string): Promise<string> {
    const states = await this.authStates(db, [username]);
    return states.get(this.nameKey(username))?.profiles.join(', ') ?? '';
  }

  private async touch(db: SqlClient, id: number, actor: Actor): Promise<void> {
    await db.execute(`UPDATE netsvc_userinfo SET updateddate = ?, updatedby = ? WHERE id = ?`, [
      this.wall(this.now()),
      actor.name,
      id,
    ]);
  }

  // ---------------------------------------------------------------- schema

  async migrate(options: { createFreeradiusTables?: boolean } = {}): Promise<MigrateReport> {
    let createdFreeradiusTables = false;
    if (!(await this.tableExists(this.db, 'radcheck'))) {
      if (!options.createFreeradiusTables) {
        throw new RadiusStoreError('schema_missing', "FreeRADIUS's tables are missing (no radcheck)");
      }
      for (const stmt of freeradiusSchemaStatements(this.db.dialect)) await this.db.execute(stmt);
      createdFreeradiusTables = true;
    }
    const createdTables: string[] = [];
    for (const spec of this.tableSpecs()) {
      if (await this.tableExists(this.db, spec.name)) continue;
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

  // ---------------------------------------------------------------- users

  async listUsers(filter: { id?: number; username?: string }, page: PageRequest): Promise<UserSummary[]> {
    return this.guarded(async () => {
      // No row has an id past the column's range, and PostgreSQL would refuse to compare one.
      if (filter.id !== undefined && !isUserId(filter.id)) return [];
      const c = new Conditions();
      if (filter.id !== undefined) c.add('id = ?', filter.id);
      if (filter.username !== undefined) c.add('username = ?', filter.username);
      const rows = await this.db.query<InfoRow>(
        `SELECT id, username, usertype, ${INFO_COLUMNS}, createddate, createdby, updateddate, updatedby FROM netsvc_userinfo ${c.where} ORDER BY id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.perPage + 1, offsetOf(page)],
      );
      const states = await this.authStates(
        this.db,
        rows.map((r) => r.username),
      );
      return rows.map((r) => this.summary(r, states.get(this.nameKey(r.username))));
    });
  }

  async getUser(id: number): Promise<UserDetail | undefined> {
    return this.guarded(async () => {
      return this.readDetail(this.db, id);
    });
  }

  async createUser(user: NewUser, actor: Actor): Promise<UserStamp> {
    return this.guarded(async () => {
      const username = usernameFor(user.usertype, user.username);
      if (user.usertype === 'user' && !user.password)
        throw new RadiusStoreError('invalid', "Missing required parameter 'password'.", { param: 'password' });
      const taken = (): RadiusStoreError => new RadiusStoreError('username_taken', `Username '${username}' already exists.`);
      const created = this.wall(this.now());
      try {
        return await this.tx(async (db) => {
          if (await this.usernameTaken(db, username)) throw taken();
          await this.requireProfiles(db, user.profiles ?? []);
          const info = INFO_FIELDS.map((f) => user[f] ?? null);
          const id = await this.insertId(
            db,
            `INSERT INTO netsvc_userinfo (username, usertype, ${INFO_COLUMNS}, createddate, createdby) VALUES (?, ?, ${INFO_FIELDS.map(() => '?').join(', ')}, ?, ?)`,
            [username, user.usertype, ...info, created, actor.name],
          );
          if (user.usertype === 'user') {
            await db.execute(`INSERT INTO radcheck (username, attribute, op, value) VALUES (?, 'Cleartext-Password', ':=', ?)`, [
              username,
              user.password,
            ]);
          } else {
            await db.execute(`INSERT INTO radcheck (username, attribute, op, value) VALUES (?, 'Auth-Type', ':=', 'Accept')`, [
              username,
            ]);
          }
          let priority = 1;
          for (const profile of user.profiles ?? []) {
            await db.execute(`INSERT INTO radusergroup (username, groupname, priority) VALUES (?, ?, ?)`, [
              username,
              profile,
              priority++,
            ]);
          }
          if (user.disabled) await this.setDisabled(db, username, true);
          return { id: String(id), username, createdby: actor.name, createddate: created, updatedby: null, updateddate: null };
        });
      } catch (err) {
        if (this.isUniqueViolation(err)) throw taken();
        throw err;
      }
    });
  }

  async updateUser(id: number, changes: UserChanges, actor: Actor): Promise<UserDetail> {
    return this.guarded(async () => {
      // The new name as it would be stored (a MAC normalised), for the conflict message when another writer takes it first.
      let renameTo: string | undefined;
      try {
        return await this.tx(async (db) => {
          const row = await this.lockUser(db, id);
          let username = row.username;
          const type = (row.usertype ?? 'user') as UserType;
          if (changes.username !== undefined && changes.username !== row.username) {
            // Checked against the type stored for this user: a MAC only for a mac user, the name rule as given for the others.
            const wanted = usernameFor(type, changes.username);
            renameTo = wanted;
            if (wanted !== row.username) {
              if (this.nameKey(wanted) !== this.nameKey(row.username) && (await this.usernameTaken(db, wanted))) {
                throw new RadiusStoreError('username_taken', `Username '${wanted}' already exists.`);
              }
              for (const table of ['radcheck', 'radreply', 'radusergroup']) {
                await db.execute(`UPDATE ${table} SET username = ? WHERE username = ?`, [wanted, row.username]);
              }
              await db.execute(`UPDATE netsvc_userinfo SET username = ? WHERE id = ?`, [wanted, id]);
              username = wanted;
            }
          }
          if (changes.password !== undefined) {
            if (type !== 'user') {
              throw new RadiusStoreError(
                'invalid',
                `Invalid parameter 'password': a '${type}' user has no password (it authenticates by Auth-Type := Accept).`,
                {
                  param: 'password',
                },
              );
            }
            const res = await db.execute(
              `UPDATE radcheck SET value = ?, op = ':=' WHERE username = ? AND attribute = 'Cleartext-Password'`,
              [changes.password, username],
            );
            if (res.affectedRows === 0) {
              await db.execute(
                `INSERT INTO radcheck (username, attribute, op, value) VALUES (?, 'Cleartext-Password', ':=', ?)`,
                [username, changes.password],
              );
            }
          }
          const fields = INFO_FIELDS.filter((f) => changes[f] !== undefined);
          const sets = [...fields.map((f) => `${f} = ?`), 'updateddate = ?', 'updatedby = ?'];
          await db.execute(`UPDATE netsvc_userinfo SET ${sets.join(', ')} WHERE id = ?`, [
            ...fields.map((f) => changes[f] ?? null),
            this.wall(this.now()),
            actor.name,
            id,
          ]);
          if (changes.profiles !== undefined) {
            await this.requireProfiles(db, changes.profiles);
            await this.replaceProfiles(db, username, changes.profiles);
          }
          if (changes.disabled !== undefined) await this.setDisabled(db, username, changes.disabled);
          return (await this.readDetail(db, id))!;
        });
      } catch (err) {
        if (this.isUniqueViolation(err))
          throw new RadiusStoreError('username_taken', `Username '${renameTo ?? changes.username}' already exists.`);
        throw err;
      }
    });
  }

  async deleteUser(id: number): Promise<{ id: string; username: string }> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        const row = await this.lockUser(db, id);
        for (const table of ['radcheck', 'radreply', 'radusergroup']) {
          await db.execute(`DELETE FROM ${table} WHERE username = ?`, [row.username]);
        }
        await db.execute(`DELETE FROM netsvc_userinfo WHERE id = ?`, [id]);
        return { id: String(id), username: row.username };
      });
    });
  }

  async attachProfile(id: number, profile: string, actor: Actor): Promise<ProfileMembership> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        const row = await this.lockUser(db, id);
        await this.requireProfiles(db, [profile]);
        const existing = await db.query<{ groupname: string; priority: number }>(
          `SELECT groupname, priority FROM radusergroup WHERE username = ?${this.lockClause}`,
          [row.username],
        );
        if (existing.some((g) => this.nameKey(g.groupname) === this.nameKey(profile))) {
          throw new RadiusStoreError('profile_attached', `User '${row.username}' already has profile '${profile}'.`);
        }
        const top = existing
          .filter((g) => !this.isDisabledGroup(g.groupname))
          .reduce((m, g) => Math.max(m, Number(g.priority)), 0);
        await db.execute(`INSERT INTO radusergroup (username, groupname, priority) VALUES (?, ?, ?)`, [
          row.username,
          profile,
          top + 1,
        ]);
        await this.touch(db, id, actor);
        return { username: row.username, profile: await this.profileList(db, row.username), changed: true };
      });
    });
  }

  async detachProfile(id: number, profile: string, actor: Actor): Promise<ProfileMembership> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        const row = await this.lockUser(db, id);
        let changed = false;
        if (!this.isDisabledGroup(profile)) {
          const res = await db.execute(`DELETE FROM radusergroup WHERE username = ? AND groupname = ?`, [row.username, profile]);
          changed = res.affectedRows > 0;
        }
        if (changed) await this.touch(db, id, actor);
        return { username: row.username, profile: await this.profileList(db, row.username), changed };
      });
    });
  }

  // ---------------------------------------------------------------- profiles

  async listProfiles(page: PageRequest): Promise<ProfileRecord[]> {
    return this.guarded(async () => {
      const rows = await this.db.query<{ groupname: string; description: string | null }>(
        `SELECT g.groupname AS groupname, p.description AS description FROM (
           SELECT groupname FROM radgroupcheck
           UNION SELECT groupname FROM radgroupreply
           UNION SELECT groupname FROM radusergroup
           UNION SELECT groupname FROM netsvc_profile
         ) g LEFT JOIN netsvc_profile p ON p.groupname = g.groupname
         WHERE g.groupname <> ? AND g.groupname <> ''
         ORDER BY g.groupname LIMIT ? OFFSET ?`,
        [this.disabledGroup, page.perPage + 1, offsetOf(page)],
      );
      return rows
        .filter((r) => !this.isDisabledGroup(r.groupname))
        .map((r) => ({ groupname: r.groupname, description: str(r.description) }));
    });
  }

  async profileUsers(profile: string, page: PageRequest): Promise<ProfileUserRecord[]> {
    return this.guarded(async () => {
      if (!(await this.profileExists(this.db, profile)))
        throw new RadiusStoreError('profile_not_found', `Profile '${profile}' not found.`);
      const rows = await this.db.query<Row>(
        `SELECT u.id AS id, g.username AS username, u.firstname AS firstname, u.lastname AS lastname, g.groupname AS groupname, g.priority AS priority
         FROM radusergroup g LEFT JOIN netsvc_userinfo u ON u.username = g.username
         WHERE g.groupname = ? ORDER BY g.username, g.id LIMIT ? OFFSET ?`,
        [profile, page.perPage + 1, offsetOf(page)],
      );
      return rows.map((r) => ({
        id: str(r.id),
        username: str(r.username),
        firstname: str(r.firstname),
        lastname: str(r.lastname),
        profileName: str(r.groupname),
        priority: str(r.priority),
      }));
    });
  }

  async saveProfile(name: string, description: string | undefined): Promise<ProfileRecord> {
    return this.guarded(async () => {
      if (this.isDisabledGroup(name))
        throw new RadiusStoreError('invalid', `Profile name '${name}' is reserved for disabled users.`, { param: 'name' });
      return this.tx(async (db) => {
        const now = this.wall(this.now());
        const rows = await db.query<{ description: string }>(
          `SELECT description FROM netsvc_profile WHERE groupname = ?${this.lockClause}`,
          [name],
        );
        if (!rows.length) {
          await db.execute(`INSERT INTO netsvc_profile (groupname, description, createddate) VALUES (?, ?, ?)`, [
            name,
            description ?? '',
            now,
          ]);
        } else if (description !== undefined) {
          await db.execute(`UPDATE netsvc_profile SET description = ?, updateddate = ? WHERE groupname = ?`, [
            description,
            now,
            name,
          ]);
        }
        await this.ensureFallThrough(db, name);
        return { groupname: name, description: description ?? str(rows[0]?.description) };
      });
    });
  }

  async describeProfile(name: string): Promise<ProfileDescription | undefined> {
    return this.guarded(async () => {
      if (!(await this.profileExists(this.db, name))) return undefined;
      const [desc] = await this.db.query<{ description: string }>(`SELECT description FROM netsvc_profile WHERE groupname = ?`, [
        name,
      ]);
      const check = await this.db.query<Row>(
        `SELECT id, attribute, op, value FROM radgroupcheck WHERE groupname = ? ORDER BY id`,
        [name],
      );
      const reply = await this.db.query<Row>(
        `SELECT id, attribute, op, value FROM radgroupreply WHERE groupname = ? ORDER BY id`,
        [name],
      );
      const [members] = await this.db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM radusergroup WHERE groupname = ?`, [name]);
      const rowsOf = (rows: Row[], table: 'check' | 'reply'): AttributeRow[] =>
        rows.map((r) => ({ id: Number(r.id), table, attribute: str(r.attribute), op: str(r.op), value: str(r.value) }));
      return {
        groupname: name,
        description: str(desc?.description),
        attributes: [...rowsOf(check, 'check'), ...rowsOf(reply, 'reply')],
        members: num(members?.n),
      };
    });
  }

  async setProfileAttribute(name: string, write: AttributeWrite): Promise<AttributeAction> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        if (!(await this.profileExists(db, name)))
          throw new RadiusStoreError('profile_not_found', `Profile '${name}' not found.`);
        await this.ensureFallThrough(db, name);
        const table = write.table === 'check' ? 'radgroupcheck' : 'radgroupreply';
        return this.writeAttribute(db, table, 'groupname', name, write);
      });
    });
  }

  async unsetProfileAttribute(name: string, attribute: string, table: 'check' | 'reply'): Promise<number> {
    return this.guarded(async () => {
      const t = table === 'check' ? 'radgroupcheck' : 'radgroupreply';
      const res = await this.db.execute(`DELETE FROM ${t} WHERE groupname = ? AND attribute = ?`, [name, attribute]);
      return res.affectedRows;
    });
  }

  /** Adds or replaces one attribute's rows for a user or group; `owner` is a fixed column name. */
  private async writeAttribute(
    db: SqlClient,
    table: 'radcheck' | 'radreply' | 'radgroupcheck' | 'radgroupreply',
    owner: 'username' | 'groupname',
    who: string,
    write: AttributeWrite,
  ): Promise<AttributeAction> {
    const rows = await db.query<{ id: number; op: string; value: string }>(
      `SELECT id, op, value FROM ${table} WHERE ${owner} = ? AND attribute = ? ORDER BY id`,
      [who, write.attribute],
    );
    if (write.multiple) {
      if (rows.some((r) => str(r.value) === write.value)) return 'unchanged';
      await db.execute(`INSERT INTO ${table} (${owner}, attribute, op, value) VALUES (?, ?, ?, ?)`, [
        who,
        write.attribute,
        write.op,
        write.value,
      ]);
      return 'added';
    }
    if (rows.length === 1 && str(rows[0]!.value) === write.value && str(rows[0]!.op) === write.op) return 'unchanged';
    if (rows.length) {
      await db.execute(`UPDATE ${table} SET op = ?, value = ? WHERE id = ?`, [write.op, write.value, rows[0]!.id]);
      if (rows.length > 1)
        await db.execute(`DELETE FROM ${table} WHERE ${owner} = ? AND attribute = ? AND id <> ?`, [
          who,
          write.attribute,
          rows[0]!.id,
        ]);
      return 'updated';
    }
    await db.execute(`INSERT INTO ${table} (${owner}, attribute, op, value) VALUES (?, ?, ?, ?)`, [
      who,
      write.attribute,
      write.op,
      write.value,
    ]);
    return 'added';
  }

  // ---------------------------------------------------------------- user access

  async userAttributes(id: number): Promise<{ id: string; username: string; attributes: AttributeRow[] }> {
    return this.guarded(async () => {
      if (!isUserId(id)) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
      const [row] = await this.db.query<{ username: string }>(`SELECT username FROM netsvc_userinfo WHERE id = ?`, [id]);
      if (!row) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
      return { id: String(id), username: row.username, attributes: await this.attributeRows(this.db, row.username) };
    });
  }

  private async attributeRows(db: SqlClient, username: string): Promise<AttributeRow[]> {
    const check = await db.query<Row>(`SELECT id, attribute, op, value FROM radcheck WHERE username = ? ORDER BY id`, [username]);
    const reply = await db.query<Row>(`SELECT id, attribute, op, value FROM radreply WHERE username = ? ORDER BY id`, [username]);
    const out: AttributeRow[] = [];
    for (const [rows, table] of [
      [check, 'check'],
      [reply, 'reply'],
    ] as const) {
      for (const r of rows) {
        if (isAuthAttribute(str(r.attribute))) continue;
        out.push({ id: Number(r.id), table, attribute: str(r.attribute), op: str(r.op), value: str(r.value) });
      }
    }
    return out;
  }

  async setUserAttributes(id: number, writes: AttributeWrite[], actor: Actor): Promise<AttributeAction[]> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        const row = await this.lockUser(db, id);
        const actions: AttributeAction[] = [];
        for (const w of writes) {
          if (isAuthAttribute(w.attribute)) {
            throw new RadiusStoreError('invalid', `Attribute '${w.attribute}' is managed by the user record.`, {
              param: 'attribute',
            });
          }
          actions.push(await this.writeAttribute(db, w.table === 'check' ? 'radcheck' : 'radreply', 'username', row.username, w));
        }
        if (actions.some((a) => a !== 'unchanged')) await this.touch(db, id, actor);
        return actions;
      });
    });
  }

  async unsetUserAttributes(
    id: number,
    items: Array<{ attribute: string; table: 'check' | 'reply' }>,
    actor: Actor,
  ): Promise<number[]> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        const row = await this.lockUser(db, id);
        const counts: number[] = [];
        for (const item of items) {
          if (isAuthAttribute(item.attribute)) {
            counts.push(0);
            continue;
          }
          const table = item.table === 'check' ? 'radcheck' : 'radreply';
          const res = await db.execute(`DELETE FROM ${table} WHERE username = ? AND attribute = ?`, [
            row.username,
            item.attribute,
          ]);
          counts.push(res.affectedRows);
        }
        if (counts.some((n) => n > 0)) await this.touch(db, id, actor);
        return counts;
      });
    });
  }

  // ---------------------------------------------------------------- reports

  /** Conditions of a session filter, or undefined when nothing can match. */
  private async sessionConditions(filter: SessionFilter, online: boolean): Promise<Conditions | undefined> {
    const c = new Conditions();
    if (online) c.add('acctstoptime IS NULL');
    if (filter.username !== undefined) c.add('username = ?', filter.username);
    if (filter.nas !== undefined) {
      if (!this.ipComparable(filter.nas)) return undefined;
      c.add('nasipaddress = ?', filter.nas);
    }
    if (filter.hotspot !== undefined) {
      const nases = await this.db.query<{ nasname: string }>(`SELECT nasname FROM nas WHERE shortname = ?`, [filter.hotspot]);
      const ips = nases.map((n) => n.nasname).filter((ip) => this.ipComparable(ip));
      if (!ips.length) return undefined;
      c.in('nasipaddress', ips);
    }
    if (filter.macaddress !== undefined) {
      const mac = normaliseMac(filter.macaddress);
      if (!mac) return undefined;
      c.in('callingstationid', macSpellings(mac));
    }
    if (filter.calledstationid !== undefined) {
      const mac = normaliseMac(filter.calledstationid);
      if (!mac) return undefined;
      const spellings = macSpellings(mac);
      // Called-Station-Id is often "MAC:SSID"; match the MAC with or without the SSID suffix.
      const prefixes = spellings.filter((s) => /[-:]/.test(s) && s.length === 17).map((s) => `${s}:%`);
      c.add(
        `(calledstationid IN (${spellings.map(() => '?').join(', ')}) OR ${prefixes.map(() => 'calledstationid LIKE ?').join(' OR ')})`,
        ...spellings,
        ...prefixes,
      );
    }
    if (filter.ipaddress !== undefined) {
      if (!this.ipComparable(filter.ipaddress)) return undefined;
      c.add('framedipaddress = ?', filter.ipaddress);
    }
    if (filter.from !== undefined) c.add('acctstarttime >= ?', this.acctTimeParam(filter.from));
    // Both bounds are inclusive at one-second resolution.
    const end = this.endOfSecond(filter.to);
    if (end !== undefined) c.add('acctstarttime < ?', this.acctTimeParam(end));
    return c;
  }

  private async sessionRows(filter: SessionFilter, page: PageRequest, online: boolean): Promise<Row[]> {
    const c = await this.sessionConditions(filter, online);
    if (!c) return [];
    // Late row lookup: the page's ids come from the index alone (filter column, start time, stop time,
    // primary key), and only those rows are read, instead of every matching row before the sort.
    return this.db.query<Row>(
      `SELECT r.radacctid, r.username, r.nasipaddress, r.callingstationid, r.calledstationid, r.framedipaddress, r.acctstarttime,
              r.acctstoptime, r.acctsessiontime, r.acctinputoctets, r.acctoutputoctets, r.acctterminatecause
       FROM radacct r
       JOIN (SELECT radacctid AS k FROM radacct ${c.where} ORDER BY acctstarttime DESC, radacctid DESC LIMIT ? OFFSET ?) p ON r.radacctid = p.k
       ORDER BY r.acctstarttime DESC, r.radacctid DESC`,
      [...c.params, page.perPage + 1, offsetOf(page)],
    );
  }

  /** NAS IP → `nas.shortname` for the NAS addresses of a page. */
  private async hotspotNames(rows: Row[]): Promise<Map<string, string>> {
    const ips = [...new Set(rows.map((r) => str(r.nasipaddress)).filter(Boolean))];
    const out = new Map<string, string>();
    if (!ips.length) return out;
    const nases = await this.db.query<{ nasname: string; shortname: string | null }>(
      `SELECT nasname, shortname FROM nas WHERE nasname IN (${ips.map(() => '?').join(', ')}) ORDER BY id`,
      ips,
    );
    for (const n of nases) if (!out.has(n.nasname)) out.set(n.nasname, str(n.shortname));
    return out;
  }

  async historicalSessions(filter: SessionFilter, page: PageRequest): Promise<HistoricalSession[]> {
    return this.guarded(async () => {
      const rows = await this.sessionRows(filter, page, false);
      const hotspots = await this.hotspotNames(rows);
      return rows.map((r) => ({
        radacctid: num(r.radacctid),
        hotspot: hotspots.get(str(r.nasipaddress)) ?? '',
        username: str(r.username),
        macaddress: displayMac(str(r.callingstationid)),
        ipaddress: str(r.framedipaddress),
        acctstarttime: this.acctTimeText(r.acctstarttime),
        acctstoptime: this.acctTimeText(r.acctstoptime),
        acctsessiontime: num(r.acctsessiontime),
        calledstationid: displayMac(str(r.calledstationid)),
        acctinputoctets: num(r.acctinputoctets),
        acctoutputoctets: num(r.acctoutputoctets),
        acctterminatecause: str(r.acctterminatecause),
        nas: str(r.nasipaddress),
      }));
    });
  }

  async onlineSessions(filter: SessionFilter, page: PageRequest): Promise<OnlineSession[]> {
    return this.guarded(async () => {
      const { ipaddress: _ignored, ...rest } = filter;
      const rows = await this.sessionRows(rest, page, true);
      const hotspots = await this.hotspotNames(rows);
      const names = new Map<string, string>();
      const usernames = [...new Set(rows.map((r) => str(r.username)))];
      if (usernames.length) {
        const infos = await this.db.query<{ username: string; firstname: string | null; lastname: string | null }>(
          `SELECT username, firstname, lastname FROM netsvc_userinfo WHERE username IN (${usernames.map(() => '?').join(', ')})`,
          usernames,
        );
        for (const i of infos) names.set(this.nameKey(i.username), [str(i.firstname), str(i.lastname)].filter(Boolean).join(' '));
      }
      const now = this.now();
      return rows.map((r) => {
        const started = this.acctTimeMs(r.acctstarttime);
        const elapsed = started === undefined ? num(r.acctsessiontime) : Math.max(num(r.acctsessiontime), (now - started) / 1000);
        return {
          radacctid: num(r.radacctid),
          hotspot: hotspots.get(str(r.nasipaddress)) ?? '',
          username: str(r.username),
          nas: str(r.nasipaddress),
          macaddress: displayMac(str(r.callingstationid)),
          calledstationid: displayMac(str(r.calledstationid)),
          ipaddress: str(r.framedipaddress),
          starttime: this.acctTimeText(r.acctstarttime),
          traffic: formatTraffic(num(r.acctinputoctets) + num(r.acctoutputoctets)),
          name: names.get(this.nameKey(str(r.username))) ?? '',
          totaltime: formatDuration(elapsed),
        };
      });
    });
  }

  async loginAttempts(filter: LoginAttemptFilter, page: PageRequest): Promise<LoginAttempt[]> {
    return this.guarded(async () => {
      const c = new Conditions();
      if (filter.username !== undefined) c.add('username = ?', filter.username);
      if (filter.reply !== undefined) c.add('reply = ?', filter.reply);
      if (filter.from !== undefined) c.add('authdate >= ?', this.authdateParam(filter.from));
      const end = this.endOfSecond(filter.to);
      if (end !== undefined) c.add('authdate < ?', this.authdateParam(end));
      // Newest first by id: FreeRADIUS inserts in arrival order, and the primary key needs no extra index.
      const rows = await this.db.query<Row>(
        `SELECT id, username, reply, authdate FROM radpostauth ${c.where} ORDER BY id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.perPage + 1, offsetOf(page)],
      );
      return rows.map((r) => ({
        id: num(r.id),
        username: str(r.username),
        pass: MASKED_PASS,
        reply: str(r.reply),
        authdate: this.authdateText(r.authdate),
      }));
    });
  }

  async quotaPurchases(filter: QuotaPurchaseFilter, page: PageRequest): Promise<QuotaPurchase[]> {
    return this.guarded(async () => {
      const c = new Conditions();
      if (filter.transaction_time !== undefined) {
        if (/^\d{4}-\d{2}-\d{2}$/.test(filter.transaction_time)) {
          const day = DateTime.fromISO(filter.transaction_time, { zone: this.timeZone });
          c.add('transaction_time >= ? AND transaction_time < ?', day.toFormat(WALL), day.plus({ days: 1 }).toFormat(WALL));
        } else if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(filter.transaction_time)) {
          c.add('transaction_time = ?', filter.transaction_time);
        } else return [];
      }
      if (filter.username !== undefined) c.add('username = ?', filter.username);
      if (filter.plan_name !== undefined) c.add('plan_name = ?', filter.plan_name);
      if (filter.user_profiles !== undefined) c.add('user_profiles = ?', filter.user_profiles);
      if (filter.remarks !== undefined)
        c.add(`remarks ${this.ilike} ? ESCAPE '!'`, `%${filter.remarks.replace(/[!%_]/g, '!$&')}%`);
      if (filter.from !== undefined) c.add('transaction_time >= ?', this.wall(filter.from));
      const end = this.endOfSecond(filter.to);
      if (end !== undefined) c.add('transaction_time < ?', this.wall(end));
      const rows = await this.db.query<Row>(
        `SELECT id, transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at
         FROM netsvc_quota_purchase ${c.where} ORDER BY transaction_time DESC, id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.perPage + 1, offsetOf(page)],
      );
      return rows.map((r) => this.purchase(r));
    });
  }

  private purchase(r: Row): QuotaPurchase {
    return {
      id: num(r.id),
      transaction_time: this.dateText(r.transaction_time) ?? '',
      username: str(r.username),
      plan_name: str(r.plan_name),
      currency: str(r.currency),
      amount: Number(str(r.amount) || '0').toFixed(2),
      user_profiles: str(r.user_profiles),
      remarks: str(r.remarks),
      create_by: str(r.create_by),
      create_at: this.dateText(r.create_at) ?? '',
    };
  }

  async recordQuotaPurchase(purchase: NewQuotaPurchase, actor: Actor): Promise<QuotaPurchase> {
    return this.guarded(async () => {
      const p = checkQuotaPurchase(purchase, actor.name, this.timeZone);
      // Like daloRADIUS, which bills only users it knows. A MAC typed in another notation finds the MAC user.
      const mac = normaliseMac(p.username);
      const username =
        (await this.storedUsername(this.db, p.username)) ??
        (mac && mac !== p.username ? await this.storedUsername(this.db, mac) : undefined);
      if (username === undefined) throw new RadiusStoreError('user_not_found', `User '${p.username}' not found.`);
      await this.requireProfiles(this.db, splitProfiles(p.user_profiles ?? ''));
      const createAt = this.wall(this.now());
      // No transaction: a user deleted between the check and the insert keeps its purchase, as history does.
      const id = await this.insertId(
        this.db,
        `INSERT INTO netsvc_quota_purchase (transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          p.transaction_time,
          username,
          p.plan_name,
          p.currency,
          p.amount,
          p.user_profiles ?? '',
          p.remarks ?? '',
          actor.name,
          createAt,
        ],
      );
      const [row] = await this.db.query<Row>(
        `SELECT id, transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at FROM netsvc_quota_purchase WHERE id = ?`,
        [id],
      );
      return this.purchase(row!);
    });
  }
}
