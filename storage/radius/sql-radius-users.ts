/** Floor of SqlRadiusStore (see sql-radius-base.ts): local users, their authentication rows, profiles set and disabled flag. */
import type { SqlClient } from '../sql/sql-client.js';
import {
  INFO_FIELDS,
  isUserId,
  NAME_MAX,
  RadiusStoreError,
  type Actor,
  type InfoField,
  type NewUser,
  type PageRequest,
  type ProfileMembership,
  type UserChanges,
  type UserDetail,
  type UserStamp,
  type UserSummary,
  type UserType,
} from './radius-store.js';
import { maskPassword } from './report-format.js';
import { usernameFor } from './username.js';
import {
  SqlRadiusBase,
  Conditions,
  INFO_COLUMNS,
  offsetOf,
  orNull,
  profileNotFound,
  RetryTransaction,
  str,
  type AuthState,
  type InfoRow,
} from './sql-radius-base.js';

export abstract class SqlRadiusUsers extends SqlRadiusBase {
  protected async lockUser(db: SqlClient, id: number): Promise<InfoRow> {
    if (!isUserId(id)) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
    const rows = await db.query<InfoRow>(
      `SELECT id, username, usertype, ${INFO_COLUMNS}, createddate, createdby, updateddate, updatedby FROM netsvc_userinfo WHERE id = ?${this.lockClause}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new RadiusStoreError('user_not_found', `User with ID: ${id} not found.`);
    return row;
  }

  protected isDisabledGroup(name: string): boolean {
    return name.toLowerCase() === this.disabledGroup.toLowerCase();
  }

  /** Whether a profile of that name exists: a row in netsvc_profile (unless `ownRow` is false) or in FreeRADIUS's group tables. */
  protected async profileExists(db: SqlClient, name: string, ownRow = true): Promise<boolean> {
    if (this.isDisabledGroup(name)) return false;
    const rows = await db.query(
      `${ownRow ? 'SELECT 1 AS x FROM netsvc_profile WHERE groupname = ? UNION ALL ' : ''}SELECT 1 AS x FROM radgroupreply WHERE groupname = ?
       UNION ALL SELECT 1 FROM radgroupcheck WHERE groupname = ?
       UNION ALL SELECT 1 FROM radusergroup WHERE groupname = ?
       LIMIT 1`,
      ownRow ? [name, name, name, name] : [name, name, name],
    );
    return rows.length > 0;
  }

  /**
   * Locks each profile's `netsvc_profile` row until the transaction ends, and answers the first
   * name (in the order given) that is no profile, if any. Every write that adds a membership or
   * changes a profile takes this lock, and deleteProfile takes it first: a profile is then never
   * deleted while a user is attached to it (the delete waits and finds the member), nor attached
   * once deleted (the attach waits and finds no profile). A profile made outside netsvc (group
   * rows only) gains its row here (description ''), to have one to lock; `added` counts those.
   * Called before the transaction's first plain read, and every lock is taken before any check:
   * MariaDB takes a transaction's snapshot at its first plain read, and what is checked must be
   * read after the locks are held.
   */
  protected async lockProfiles(db: SqlClient, names: readonly string[]): Promise<{ added: number; missing?: string }> {
    const byKey = new Map<string, string>();
    for (const n of names) {
      const key = this.nameKey(n);
      if (!byKey.has(key)) byKey.set(key, n);
    }
    // The locks in one order for every writer, so two that lock the same profiles never wait for each other in a ring.
    const rows = new Map<string, 'found' | 'added'>();
    for (const key of [...byKey.keys()].sort()) {
      const name = byKey.get(key)!;
      // Longer than a group name can be, or the disabled users' group: no profile, no row to add.
      if (this.isDisabledGroup(name) || [...name].length > NAME_MAX) continue;
      rows.set(key, await this.lockProfileRow(db, name));
    }
    let added = 0;
    for (const [key, name] of byKey) {
      const row = rows.get(key);
      // A row found (a locking read sees the newest committed one) is the profile's; a row added
      // here stays only if the group exists in FreeRADIUS's tables (else the transaction fails).
      if (row === 'found') continue;
      if (row === undefined || !(await this.profileExists(db, name, false))) return { added, missing: name };
      added++;
    }
    return { added };
  }

  /** lockProfiles, refusing a name that is no profile; answers how many rows it added. */
  protected async lockExistingProfiles(db: SqlClient, names: readonly string[]): Promise<number> {
    const { added, missing } = await this.lockProfiles(db, names);
    if (missing !== undefined) throw profileNotFound(missing);
    return added;
  }

  /** Locks a profile's netsvc_profile row, adding it when there is none. */
  private async lockProfileRow(db: SqlClient, name: string): Promise<'found' | 'added'> {
    if ((await db.query(`SELECT groupname FROM netsvc_profile WHERE groupname = ?${this.lockClause}`, [name])).length > 0) {
      return 'found';
    }
    await this.insertProfileRow(db, name, '', this.wall(this.now()));
    return 'added';
  }

  /**
   * Adds a profile's netsvc_profile row. Another writer may have added one meanwhile (adopting a
   * group made elsewhere): the transaction is then run again, and finds it.
   */
  protected async insertProfileRow(db: SqlClient, name: string, description: string, created: string): Promise<void> {
    try {
      await db.execute(`INSERT INTO netsvc_profile (groupname, description, createddate) VALUES (?, ?, ?)`, [
        name,
        description,
        created,
      ]);
    } catch (err) {
      if (this.db.isUniqueViolation(err)) throw new RetryTransaction('a profile row was added meanwhile', { cause: err });
      throw err;
    }
  }

  protected async requireProfiles(db: SqlClient, names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (!(await this.profileExists(db, name))) throw profileNotFound(name);
    }
  }

  /** A name FreeRADIUS already knows (any row of the user tables) belongs to someone, even if netsvc did not make it. */
  protected async usernameTaken(db: SqlClient, username: string): Promise<boolean> {
    return (await this.storedUsername(db, username)) !== undefined;
  }

  /** The user's name as stored when any user table has it (compared as the database compares), else undefined. */
  protected async storedUsername(db: SqlClient, username: string): Promise<string | undefined> {
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

  protected async ensureRejectGroup(db: SqlClient): Promise<void> {
    const rows = await db.query(`SELECT 1 AS x FROM radgroupcheck WHERE groupname = ? AND attribute = 'Auth-Type'`, [
      this.disabledGroup,
    ]);
    if (!rows.length) {
      await db.execute(`INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES (?, 'Auth-Type', ':=', 'Reject')`, [
        this.disabledGroup,
      ]);
    }
  }

  protected async ensureFallThrough(db: SqlClient, group: string): Promise<void> {
    const rows = await db.query(`SELECT value FROM radgroupreply WHERE groupname = ? AND attribute = 'Fall-Through'`, [group]);
    if (!rows.length) {
      await db.execute(`INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES (?, 'Fall-Through', '=', 'Yes')`, [
        group,
      ]);
    }
  }

  protected async setDisabled(db: SqlClient, username: string, disabled: boolean): Promise<void> {
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

  protected async replaceProfiles(db: SqlClient, username: string, profiles: readonly string[]): Promise<void> {
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
  protected async authStates(db: SqlClient, usernames: readonly string[]): Promise<Map<string, AuthState>> {
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

  protected summary(row: InfoRow, state: AuthState | undefined): UserSummary {
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

  protected detail(row: InfoRow, state: AuthState | undefined): UserDetail {
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

  protected async readDetail(db: SqlClient, id: number): Promise<UserDetail | undefined> {
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

  protected async profileList(db: SqlClient, username: string): Promise<string> {
    const states = await this.authStates(db, [username]);
    return states.get(this.nameKey(username))?.profiles.join(', ') ?? '';
  }

  protected async touch(db: SqlClient, id: number, actor: Actor): Promise<void> {
    await db.execute(`UPDATE netsvc_userinfo SET updateddate = ?, updatedby = ? WHERE id = ?`, [
      this.wall(this.now()),
      actor.name,
      id,
    ]);
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
          const { missing } = await this.lockProfiles(db, user.profiles ?? []);
          if (await this.usernameTaken(db, username)) throw taken();
          if (missing !== undefined) throw profileNotFound(missing);
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
        if (this.db.isUniqueViolation(err)) throw taken();
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
          // Locked first (see lockProfiles); an unknown one is refused where the profiles are set, as before.
          const profiles = changes.profiles !== undefined ? await this.lockProfiles(db, changes.profiles) : undefined;
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
            if (profiles?.missing !== undefined) throw profileNotFound(profiles.missing);
            await this.replaceProfiles(db, username, changes.profiles);
          }
          if (changes.disabled !== undefined) await this.setDisabled(db, username, changes.disabled);
          return (await this.readDetail(db, id))!;
        });
      } catch (err) {
        if (this.db.isUniqueViolation(err))
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
        await this.lockExistingProfiles(db, [profile]);
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
}
