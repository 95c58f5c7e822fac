/** Floor of SqlRadiusStore (see sql-radius-base.ts): profiles (FreeRADIUS groups) and the attributes of profiles and users. */
import type { SqlClient } from '../sql/sql-client.js';
import {
  isUserId,
  RadiusStoreError,
  type Actor,
  type AttributeAction,
  type AttributeRow,
  type AttributeWrite,
  type PageRequest,
  type ProfileDescription,
  type ProfileRecord,
  type ProfileUserRecord,
} from './radius-store.js';
import { isAuthAttribute, num, offsetOf, profileNotFound, str, type Row } from './sql-radius-base.js';
import { SqlRadiusUsers } from './sql-radius-users.js';

export abstract class SqlRadiusAttributes extends SqlRadiusUsers {
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
      if (!(await this.profileExists(this.db, profile))) throw profileNotFound(profile);
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

  async saveProfile(name: string, description: string | undefined): Promise<ProfileRecord & { created: boolean }> {
    return this.guarded(async () => {
      if (this.isDisabledGroup(name))
        throw new RadiusStoreError('invalid', `Profile name '${name}' is reserved for disabled users.`, { param: 'name' });
      return this.tx(async (db) => {
        const now = this.wall(this.now());
        const rows = await db.query<{ description: string }>(
          `SELECT description FROM netsvc_profile WHERE groupname = ?${this.lockClause}`,
          [name],
        );
        // A group made elsewhere (rows in radgroup* or radusergroup only) already exists: it gains a description row.
        const created = !rows.length && !(await this.profileExists(db, name));
        if (!rows.length) {
          await this.insertProfileRow(db, name, description ?? '', now);
        } else if (description !== undefined) {
          await db.execute(`UPDATE netsvc_profile SET description = ?, updateddate = ? WHERE groupname = ?`, [
            description,
            now,
            name,
          ]);
        }
        await this.ensureFallThrough(db, name);
        return { groupname: name, description: description ?? str(rows[0]?.description), created };
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
        await this.lockExistingProfiles(db, [name]);
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

  async deleteProfile(name: string): Promise<{ groupname: string; rows: number }> {
    return this.guarded(async () => {
      return this.tx(async (db) => {
        // First: an attach running meanwhile either committed its member before this lock (counted
        // below) or waits for it and then finds no profile.
        const added = await this.lockExistingProfiles(db, [name]);
        // Counted as describeProfile counts members.
        const [members] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM radusergroup WHERE groupname = ?`, [name]);
        const n = num(members?.n);
        if (n > 0) {
          throw new RadiusStoreError(
            'profile_in_use',
            `Profile '${name}' is attached to ${n} user${n === 1 ? '' : 's'}: detach it from ${n === 1 ? 'that user' : 'them'} first.`,
          );
        }
        // The row the lock added is not one the profile had.
        let rows = -added;
        for (const table of ['radgroupcheck', 'radgroupreply', 'netsvc_profile']) {
          rows += (await db.execute(`DELETE FROM ${table} WHERE groupname = ?`, [name])).affectedRows;
        }
        return { groupname: name, rows };
      });
    });
  }

  /** Adds or replaces one attribute's rows for a user or group; `owner` is a fixed column name. */
  protected async writeAttribute(
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

  protected async attributeRows(db: SqlClient, username: string): Promise<AttributeRow[]> {
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
}
