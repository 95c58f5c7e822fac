import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { radiusStoreFor } from '../../../storage/radius/open-radius-store.js';
import { RadiusStoreError, type RadiusStore } from '../../../storage/radius/radius-store.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import type { SqlClient } from '../../../storage/sql/sql-client.js';
import { availableDialects } from '../../helpers/databases.js';
import {
  createRadiusDatabase,
  insertAcct,
  insertPostAuth,
  interceptedClient,
  type RadiusTestDatabase,
} from '../../helpers/radius.js';

const dialects = await availableDialects();
const actor = { name: 'api-alice' };
const page = { page: 1, perPage: 100 };
const T0 = Date.UTC(2026, 2, 25, 9, 0, 0);
let clock = T0;

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    if (err instanceof RadiusStoreError) return err.code;
    throw err;
  }
}

/** The RadiusStoreError a call is refused with. */
async function refusalOf(p: Promise<unknown>): Promise<RadiusStoreError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RadiusStoreError) return err;
    throw err;
  }
  throw new Error('expected a RadiusStoreError, the call succeeded');
}

describe.each(dialects)('RadiusStore on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let store: RadiusStore;
  let raw: SqlClient;

  const rows = (sql: string, params: unknown[] = []) => raw.query<Record<string, unknown>>(sql, params);
  const checkRows = async (username: string) =>
    (await rows('SELECT attribute, op, value FROM radcheck WHERE username = ? ORDER BY id', [username])).map(
      (r) => `${r.attribute} ${r.op} ${r.value}`,
    );
  const groupsOf = async (username: string) =>
    (await rows('SELECT groupname, priority FROM radusergroup WHERE username = ? ORDER BY priority, id', [username])).map(
      (r) => `${r.groupname}:${Number(r.priority)}`,
    );

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { now: () => clock, timeZone: 'UTC' });
    store = t.store;
    raw = t.raw;
    for (const g of ['gold', 'silver', 'bronze']) await store.saveProfile(g, `${g} plan`);
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('schema', () => {
    it('leaves FreeRADIUS tables alone: migrate twice creates nothing more, radcheck columns unchanged', async () => {
      const cols = async () =>
        (
          await rows(
            dialect === 'sqlite'
              ? "SELECT name AS c FROM pragma_table_info('radcheck') ORDER BY cid"
              : "SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'radcheck' AND table_schema = " +
                  (dialect === 'mysql' ? 'DATABASE()' : 'current_schema()') +
                  ' ORDER BY ordinal_position',
          )
        ).map((r) => String(r.c ?? r.C ?? r.COLUMN_NAME).toLowerCase());
      const before = await cols();
      const report = await store.migrate();
      expect(report).toEqual({ createdFreeradiusTables: false, createdTables: [] });
      await store.createIndexes();
      expect(await cols()).toEqual(before);
    });

    it('creates the report indexes once and reports them as present afterwards', async () => {
      const again = await store.createIndexes();
      expect(again.length).toBeGreaterThan(5);
      expect(again.every((i) => i.created === false)).toBe(true);
    });
  });

  describe('users', () => {
    it('creates a password user FreeRADIUS can authenticate: Cleartext-Password := in radcheck', async () => {
      const stamp = await store.createUser(
        { username: 'alice', usertype: 'user', password: 'Secret-pw1', firstname: 'Alice', lastname: 'Liddell' },
        actor,
      );
      expect(stamp).toMatchObject({ username: 'alice', createdby: 'api-alice', createddate: '2026-03-25 09:00:00' });
      expect(await checkRows('alice')).toEqual(['Cleartext-Password := Secret-pw1']);
      const user = await store.getUser(Number(stamp.id));
      expect(user).toMatchObject({
        username: 'alice',
        usertype: 'Username-Password',
        password: 'S*******',
        firstname: 'Alice',
        lastname: 'Liddell',
        disabled: false,
        profile: null,
        createdby: 'api-alice',
      });
    });

    it('stores a mac user as XX-XX-XX-XX-XX-XX with Auth-Type := Accept, whatever notation was given', async () => {
      const stamp = await store.createUser({ username: 'aabb.ccdd.ee01', usertype: 'mac' }, actor);
      expect(stamp.username).toBe('AA-BB-CC-DD-EE-01');
      expect(await checkRows('AA-BB-CC-DD-EE-01')).toEqual(['Auth-Type := Accept']);
      const user = await store.getUser(Number(stamp.id));
      expect(user).toMatchObject({ usertype: 'Auth-Type', password: null });
      expect(await codeOf(store.createUser({ username: 'aa:bb:cc:dd:ee:01', usertype: 'mac' }, actor))).toBe('username_taken');
    });

    it('creates a pin user from username alone', async () => {
      const stamp = await store.createUser({ username: '007007', usertype: 'pin' }, actor);
      expect(await checkRows('007007')).toEqual(['Auth-Type := Accept']);
      expect(stamp.username).toBe('007007');
    });

    it('refuses a duplicate name, also one that exists only in radcheck (made by daloRADIUS or SQL)', async () => {
      await expect(store.createUser({ username: 'alice', usertype: 'user', password: 'x' }, actor)).rejects.toThrow(
        "Username 'alice' already exists.",
      );
      await raw.execute(
        "INSERT INTO radcheck (username, attribute, op, value) VALUES ('legacy', 'Cleartext-Password', ':=', 'pw')",
      );
      expect(await codeOf(store.createUser({ username: 'legacy', usertype: 'pin' }, actor))).toBe('username_taken');
    });

    it('compares names like the backend does: case-insensitive on MariaDB only', async () => {
      const result = await codeOf(store.createUser({ username: 'ALICE', usertype: 'user', password: 'x' }, actor));
      expect(result).toBe(dialect === 'mysql' ? 'username_taken' : 'resolved');
    });

    it('attaches profiles given on create in order, and refuses an unknown one without writing anything', async () => {
      expect(
        await codeOf(
          store.createUser({ username: 'carol', usertype: 'user', password: 'pw', profiles: ['gold', 'nope'] }, actor),
        ),
      ).toBe('profile_not_found');
      expect(await checkRows('carol')).toEqual([]);
      const stamp = await store.createUser(
        { username: 'carol', usertype: 'user', password: 'pw', profiles: ['silver', 'gold'] },
        actor,
      );
      expect(await groupsOf('carol')).toEqual(['silver:1', 'gold:2']);
      expect((await store.getUser(Number(stamp.id)))?.profile).toBe('silver, gold');
    });

    it('disables by the reject group (priority 0, Auth-Type := Reject) and hides that group from profiles', async () => {
      const stamp = await store.createUser(
        { username: 'dave', usertype: 'user', password: 'pw', profiles: ['gold'], disabled: true },
        actor,
      );
      expect(await groupsOf('dave')).toEqual(['daloRADIUS-Disabled-Users:0', 'gold:1']);
      const reject = await rows(
        "SELECT op, value FROM radgroupcheck WHERE groupname = 'daloRADIUS-Disabled-Users' AND attribute = 'Auth-Type'",
      );
      expect(reject).toEqual([{ op: ':=', value: 'Reject' }]);
      const user = await store.getUser(Number(stamp.id));
      expect(user).toMatchObject({ disabled: true, profile: 'gold' });
      expect((await store.listProfiles(page)).map((p) => p.groupname)).not.toContain('daloRADIUS-Disabled-Users');
      expect(await codeOf(store.attachProfile(Number(stamp.id), 'daloRADIUS-Disabled-Users', actor))).toBe('profile_not_found');
      const enabled = await store.updateUser(Number(stamp.id), { disabled: false }, actor);
      expect(enabled.disabled).toBe(false);
      expect(await groupsOf('dave')).toEqual(['gold:1']);
    });

    it('updates info fields, password and stamps; replaces the profile set', async () => {
      const [alice] = await store.listUsers({ username: 'alice' }, page);
      clock = T0 + 3600_000;
      const updated = await store.updateUser(
        alice!.id,
        { password: 'New-pw-2', email: 'alice@corp.test', birthdate: '1990-01-31', profiles: ['bronze', 'gold'] },
        { name: 'api-bob' },
      );
      clock = T0;
      expect(updated).toMatchObject({
        email: 'alice@corp.test',
        birthdate: '1990-01-31',
        updatedby: 'api-bob',
        updateddate: '2026-03-25 10:00:00',
        password: 'N*******',
      });
      expect(await checkRows('alice')).toEqual(['Cleartext-Password := New-pw-2']);
      expect(updated.profile).toBe('bronze, gold');
      const again = await store.updateUser(alice!.id, { profiles: ['silver'] }, actor);
      expect(again.profile).toBe('silver');
      expect(await groupsOf('alice')).toEqual(['silver:1']);
    });

    it('refuses a password for a pin user and a non-MAC name for a mac user', async () => {
      const [pin] = await store.listUsers({ username: '007007' }, page);
      expect(await codeOf(store.updateUser(pin!.id, { password: 'x' }, actor))).toBe('invalid');
      const [mac] = await store.listUsers({ username: 'AA-BB-CC-DD-EE-01' }, page);
      expect(await codeOf(store.updateUser(mac!.id, { username: 'not-a-mac' }, actor))).toBe('invalid');
      const renamed = await store.updateUser(mac!.id, { username: 'aa-bb-cc-dd-ee-02' }, actor);
      expect(renamed.username).toBe('AA-BB-CC-DD-EE-02');
    });

    it("checks a rename against the user's stored type, never trimming a name it stores as given", async () => {
      const [alice] = await store.listUsers({ username: 'alice' }, page);
      const [pin] = await store.listUsers({ username: '007007' }, page);
      for (const u of [alice!, pin!]) {
        expect(await refusalOf(store.updateUser(u.id, { username: ' aabbccddeeff\n' }, actor))).toMatchObject({
          code: 'invalid',
          param: 'username',
        });
        expect(await refusalOf(store.updateUser(u.id, { username: 'x'.repeat(65) }, actor))).toMatchObject({
          code: 'invalid',
          param: 'username',
        });
        expect((await store.getUser(u.id))?.username).toBe(u.username);
      }
      const [mac] = await store.listUsers({ username: 'AA-BB-CC-DD-EE-02' }, page);
      expect((await store.updateUser(mac!.id, { username: ' aabb.ccdd.ee03\n' }, actor)).username).toBe('AA-BB-CC-DD-EE-03');
      expect(await checkRows('AA-BB-CC-DD-EE-03')).toEqual(['Auth-Type := Accept']);
      await store.updateUser(mac!.id, { username: 'AA-BB-CC-DD-EE-02' }, actor);
    });

    it('names the refused parameter in a typed field, not only in the message', async () => {
      expect(await refusalOf(store.createUser({ username: 'not-a-mac', usertype: 'mac' }, actor))).toMatchObject({
        code: 'invalid',
        param: 'username',
      });
      expect(await refusalOf(store.createUser({ username: 'nopass', usertype: 'user' }, actor))).toMatchObject({
        code: 'invalid',
        param: 'password',
      });
      const [pin] = await store.listUsers({ username: '007007' }, page);
      expect(await refusalOf(store.updateUser(pin!.id, { password: 'x' }, actor))).toMatchObject({
        code: 'invalid',
        param: 'password',
      });
      const auth = { attribute: 'Auth-Type', table: 'check' as const, op: ':=', value: 'Reject', multiple: false };
      expect(await refusalOf(store.setUserAttributes(pin!.id, [auth], actor))).toMatchObject({
        code: 'invalid',
        param: 'attribute',
      });
      const purchase = {
        transaction_time: '2026-03-25 10:00:00',
        username: '007007',
        plan_name: '1 day',
        currency: 'euro',
        amount: '3',
      };
      expect(await refusalOf(store.recordQuotaPurchase(purchase, actor))).toMatchObject({ code: 'invalid', param: 'currency' });
      expect(await refusalOf(store.recordQuotaPurchase({ ...purchase, currency: 'EUR', plan_name: '' }, actor))).toMatchObject({
        param: 'plan_name',
      });
    });

    it('renames in every FreeRADIUS table at once and keeps accounting history under the old name', async () => {
      const stamp = await store.createUser({ username: 'erin', usertype: 'user', password: 'pw', profiles: ['gold'] }, actor);
      const id = Number(stamp.id);
      await store.setUserAttributes(
        id,
        [{ attribute: 'Session-Timeout', table: 'reply', op: ':=', value: '3600', multiple: false }],
        actor,
      );
      await insertAcct(raw, { sessionId: 'erin-1', username: 'erin', start: T0 - 20 * 86400_000, stop: T0 - 19 * 86400_000 });
      expect(await codeOf(store.updateUser(id, { username: 'alice' }, actor))).toBe('username_taken');
      await store.updateUser(id, { username: 'erin2' }, actor);
      expect(await checkRows('erin')).toEqual([]);
      expect(await checkRows('erin2')).toEqual(['Cleartext-Password := pw']);
      expect(await groupsOf('erin2')).toEqual(['gold:1']);
      expect((await rows("SELECT COUNT(*) AS n FROM radreply WHERE username = 'erin2'"))[0]!.n).toEqual(expect.anything());
      expect(Number((await rows("SELECT COUNT(*) AS n FROM radreply WHERE username = 'erin2'"))[0]!.n)).toBe(1);
      expect(Number((await rows("SELECT COUNT(*) AS n FROM radacct WHERE username = 'erin'"))[0]!.n)).toBe(1);
    });

    it('a rename that loses the name to another writer is a conflict naming the normalised name, and changes nothing', async () => {
      const stamp = await store.createUser({ username: 'aa:bb:cc:dd:ee:21', usertype: 'mac' }, actor);
      // Another writer creates the wanted name after the store checked it was free, just before the store's own write.
      let armed = true;
      const racing = radiusStoreFor(
        interceptedClient(openSqlClient(t.db.url, '/'), async (sql, db) => {
          if (!armed || !sql.startsWith('UPDATE netsvc_userinfo SET username')) return;
          armed = false;
          await db.execute(
            `INSERT INTO netsvc_userinfo (username, usertype, createddate, createdby) VALUES ('AA-BB-CC-DD-EE-22', 'mac', ?, 'other')`,
            ['2026-03-25 09:00:00'],
          );
        }),
        { timeZone: 'UTC' },
      );
      try {
        const err = await refusalOf(racing.updateUser(Number(stamp.id), { username: 'aa:bb:cc:dd:ee:22' }, actor));
        expect(err).toMatchObject({ code: 'username_taken', message: "Username 'AA-BB-CC-DD-EE-22' already exists." });
      } finally {
        await racing.close();
      }
      expect(armed).toBe(false);
      expect(await checkRows('AA-BB-CC-DD-EE-21')).toEqual(['Auth-Type := Accept']);
      expect(await checkRows('AA-BB-CC-DD-EE-22')).toEqual([]);
      expect((await store.getUser(Number(stamp.id)))?.username).toBe('AA-BB-CC-DD-EE-21');
    });

    it('deletes radcheck, radreply, radusergroup and info rows, keeping radacct and radpostauth', async () => {
      const stamp = await store.createUser({ username: 'frank', usertype: 'user', password: 'pw', profiles: ['gold'] }, actor);
      const id = Number(stamp.id);
      await store.setUserAttributes(
        id,
        [{ attribute: 'Idle-Timeout', table: 'reply', op: ':=', value: '600', multiple: false }],
        actor,
      );
      await insertAcct(raw, { sessionId: 'frank-1', username: 'frank', start: T0 - 30 * 86400_000, stop: T0 - 29 * 86400_000 });
      await insertPostAuth(raw, 'frank', 'pw', 'Access-Accept', T0 - 30 * 86400_000);
      expect(await store.deleteUser(id)).toEqual({ id: String(id), username: 'frank' });
      for (const table of ['radcheck', 'radreply', 'radusergroup', 'netsvc_userinfo']) {
        expect(Number((await rows(`SELECT COUNT(*) AS n FROM ${table} WHERE username = 'frank'`))[0]!.n)).toBe(0);
      }
      for (const table of ['radacct', 'radpostauth']) {
        expect(Number((await rows(`SELECT COUNT(*) AS n FROM ${table} WHERE username = 'frank'`))[0]!.n)).toBe(1);
      }
      expect(await store.getUser(id)).toBeUndefined();
      await expect(store.deleteUser(id)).rejects.toThrow(`User with ID: ${id} not found.`);
    });

    it('lists newest first, pages with one extra row, filters by id and exact username', async () => {
      const all = await store.listUsers({}, page);
      const ids = all.map((u) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const first = await store.listUsers({}, { page: 1, perPage: 2 });
      expect(first).toHaveLength(3);
      const second = await store.listUsers({}, { page: 2, perPage: 2 });
      expect(second[0]!.id).toBe(ids[2]);
      expect(await store.listUsers({ username: 'ali' }, page)).toEqual([]);
      expect((await store.listUsers({ id: ids[0]! }, page)).map((u) => u.id)).toEqual([ids[0]]);
    });
  });

  describe('profiles', () => {
    it('attach adds with the next priority, twice is a conflict; detach of an absent profile changes nothing', async () => {
      const stamp = await store.createUser({ username: 'gina', usertype: 'user', password: 'pw', profiles: ['gold'] }, actor);
      const id = Number(stamp.id);
      const attached = await store.attachProfile(id, 'silver', actor);
      expect(attached).toEqual({ username: 'gina', profile: 'gold, silver', changed: true });
      await expect(store.attachProfile(id, 'silver', actor)).rejects.toThrow("User 'gina' already has profile 'silver'.");
      expect(await codeOf(store.attachProfile(id, 'unknown-profile', actor))).toBe('profile_not_found');
      expect(await store.detachProfile(id, 'bronze', actor)).toEqual({
        username: 'gina',
        profile: 'gold, silver',
        changed: false,
      });
      expect(await store.detachProfile(id, 'gold', actor)).toEqual({ username: 'gina', profile: 'silver', changed: true });
    });

    it('50 parallel attaches of one profile to one user leave exactly one membership', async () => {
      const stamp = await store.createUser({ username: 'hank', usertype: 'user', password: 'pw' }, actor);
      const id = Number(stamp.id);
      const results = await Promise.all(Array.from({ length: 50 }, () => codeOf(store.attachProfile(id, 'gold', actor))));
      expect(results.filter((r) => r === 'resolved')).toHaveLength(1);
      expect(results.filter((r) => r === 'profile_attached')).toHaveLength(49);
      expect(await groupsOf('hank')).toEqual(['gold:1']);
    });

    it('a profile deleted while it is attached is either kept (in use) or gone with no user left in it', async () => {
      const id = Number((await store.createUser({ username: 'rita', usertype: 'user', password: 'pw' }, actor)).id);
      // A group made outside netsvc, named to sort before the raced ones: an update to both locks it first.
      await raw.execute(
        `INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('a-outside', 'Idle-Timeout', ':=', '60')`,
      );
      // The writes that put a user in a profile, each raced with the profile's delete.
      const joins = [
        (name: string) => store.attachProfile(id, name, actor),
        (name: string) => store.updateUser(id, { profiles: [name] }, actor),
        (name: string) => store.createUser({ username: `rider-${name}`, usertype: 'pin', profiles: [name] }, actor),
        (name: string) => store.updateUser(id, { profiles: ['a-outside', name] }, actor),
      ];
      for (let i = 0; i < 32; i++) {
        const name = `race-${i}`;
        // Every other one made outside netsvc: a group row only, no netsvc_profile row to lock.
        if (i % 2 === 0) await store.saveProfile(name, 'raced');
        else
          await raw.execute(
            `INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES (?, 'Idle-Timeout', ':=', '60')`,
            [name],
          );
        const [join, del] = await Promise.all([codeOf(joins[i % joins.length]!(name)), codeOf(store.deleteProfile(name))]);
        const kept = (await store.describeProfile(name)) !== undefined;
        const members = (await rows('SELECT username FROM radusergroup WHERE groupname = ?', [name])).map((r) =>
          String(r.username),
        );
        // One of the two went first: joined then refused, or deleted then not found; never a member of a deleted profile.
        if (kept) expect([join, del, members.length], name).toEqual(['resolved', 'profile_in_use', 1]);
        else expect([join, del, members], name).toEqual(['profile_not_found', 'resolved', []]);
        if (kept) await raw.execute('DELETE FROM radusergroup WHERE groupname = ?', [name]);
      }
    });

    it('refuses a taken name before an unknown profile, as before profiles were locked first', async () => {
      const id = Number((await store.createUser({ username: 'olga', usertype: 'user', password: 'pw' }, actor)).id);
      await store.createUser({ username: 'oleg', usertype: 'user', password: 'pw' }, actor);
      const codes = [
        await codeOf(store.createUser({ username: 'oleg', usertype: 'user', password: 'pw', profiles: ['no-such'] }, actor)),
        await codeOf(store.updateUser(id, { username: 'oleg', profiles: ['no-such'] }, actor)),
      ];
      expect(codes).toEqual(['username_taken', 'username_taken']);
      // Of two unknown profiles, the first asked for is named.
      await expect(store.updateUser(id, { profiles: ['zz-none', 'aa-none'] }, actor)).rejects.toThrow(
        "Profile 'zz-none' not found.",
      );
    });

    it('parallel attaches of many users to a profile made outside netsvc all land', async () => {
      await raw.execute(
        `INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('crowd', 'Idle-Timeout', ':=', '60')`,
      );
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        ids.push(Number((await store.createUser({ username: `crowd-${i}`, usertype: 'pin' }, actor)).id));
      }
      // The first attaches all find no netsvc_profile row to lock and add one at once.
      const results = await Promise.all(ids.map((id) => codeOf(store.attachProfile(id, 'crowd', actor))));
      expect(results).toEqual(ids.map(() => 'resolved'));
      expect((await rows(`SELECT username FROM radusergroup WHERE groupname = 'crowd'`)).length).toBe(20);
      expect((await rows(`SELECT description FROM netsvc_profile WHERE groupname = 'crowd'`)).map((r) => r.description)).toEqual([
        '',
      ]);
    });

    it('a profile made outside netsvc is deleted with the rows it had', async () => {
      for (const attribute of ['Idle-Timeout', 'Session-Timeout'])
        await raw.execute(`INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('outside', ?, ':=', '60')`, [
          attribute,
        ]);
      expect(await store.deleteProfile('outside')).toEqual({ groupname: 'outside', rows: 2 });
      // A name longer than any group's is no profile (not a refused row).
      const long = 'p'.repeat(65);
      expect([
        await codeOf(store.deleteProfile(long)),
        await codeOf(
          store.setProfileAttribute(long, { attribute: 'Idle-Timeout', table: 'reply', op: '=', value: '60', multiple: false }),
        ),
      ]).toEqual(['profile_not_found', 'profile_not_found']);
      for (const table of ['radgroupreply', 'netsvc_profile']) {
        expect(await rows(`SELECT * FROM ${table} WHERE groupname = 'outside'`), table).toEqual([]);
      }
    });

    it('parallel creates of one username leave one user', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          codeOf(store.createUser({ username: 'race', usertype: 'user', password: `pw${i}` }, actor)),
        ),
      );
      expect(results.filter((r) => r === 'resolved')).toHaveLength(1);
      expect(results.filter((r) => r === 'username_taken')).toHaveLength(19);
      expect(Number((await rows("SELECT COUNT(*) AS n FROM radcheck WHERE username = 'race'"))[0]!.n)).toBe(1);
      expect(Number((await rows("SELECT COUNT(*) AS n FROM netsvc_userinfo WHERE username = 'race'"))[0]!.n)).toBe(1);
    });

    it('lists groups defined anywhere (SQL, daloRADIUS, netsvc) with descriptions, by name', async () => {
      await raw.execute(
        "INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('dalo-made', 'Idle-Timeout', ':=', '300')",
      );
      await raw.execute("INSERT INTO radusergroup (username, groupname, priority) VALUES ('legacy', 'only-members', 1)");
      const list = await store.listProfiles(page);
      expect(list).toEqual(
        expect.arrayContaining([
          { groupname: 'gold', description: 'gold plan' },
          { groupname: 'dalo-made', description: '' },
          { groupname: 'only-members', description: '' },
        ]),
      );
      const names = list.map((p) => p.groupname);
      expect(names).toEqual([...names].sort());
    });

    it('lists the users of a profile with their info; an unknown profile is not found', async () => {
      const users = await store.profileUsers('gold', page);
      const hank = users.find((u) => u.username === 'hank');
      expect(hank).toMatchObject({ profileName: 'gold', priority: '1', firstname: '', lastname: '' });
      expect(hank!.id).toMatch(/^\d+$/);
      expect(await codeOf(store.profileUsers('no-such', page))).toBe('profile_not_found');
      expect(await codeOf(store.profileUsers('daloRADIUS-Disabled-Users', page))).toBe('profile_not_found');
    });

    it('writes profile attributes so the user value wins: reply =, check +=, Fall-Through = Yes', async () => {
      await store.setProfileAttribute('gold', {
        attribute: 'Session-Timeout',
        table: 'reply',
        op: '=',
        value: '7200',
        multiple: false,
      });
      await store.setProfileAttribute('gold', {
        attribute: 'Simultaneous-Use',
        table: 'check',
        op: '+=',
        value: '1',
        multiple: false,
      });
      expect(
        await store.setProfileAttribute('gold', {
          attribute: 'Session-Timeout',
          table: 'reply',
          op: '=',
          value: '3600',
          multiple: false,
        }),
      ).toBe('updated');
      const d = await store.describeProfile('gold');
      expect(d?.attributes.map((a) => `${a.table} ${a.attribute} ${a.op} ${a.value}`).sort()).toEqual(
        ['check Simultaneous-Use += 1', 'reply Fall-Through = Yes', 'reply Session-Timeout = 3600'].sort(),
      );
      expect(await store.unsetProfileAttribute('gold', 'Simultaneous-Use', 'check')).toBe(1);
    });

    it('save tells a new profile from an existing one, a group made elsewhere counting as existing', async () => {
      expect(await store.saveProfile('temp', 'for a week')).toEqual({
        groupname: 'temp',
        description: 'for a week',
        created: true,
      });
      expect(await store.saveProfile('temp', undefined)).toEqual({
        groupname: 'temp',
        description: 'for a week',
        created: false,
      });
      await raw.execute(
        "INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ('sql-made', 'Simultaneous-Use', ':=', '2')",
      );
      expect(await store.saveProfile('sql-made', 'adopted')).toEqual({
        groupname: 'sql-made',
        description: 'adopted',
        created: false,
      });
    });

    it('delete is refused while users are attached, then removes the group rows and the description', async () => {
      await store.saveProfile('doomed', 'to be deleted');
      await store.setProfileAttribute('doomed', {
        attribute: 'Idle-Timeout',
        table: 'reply',
        op: '=',
        value: '60',
        multiple: false,
      });
      await store.setProfileAttribute('doomed', {
        attribute: 'Simultaneous-Use',
        table: 'check',
        op: '+=',
        value: '1',
        multiple: false,
      });
      const a = Number((await store.createUser({ username: 'dora', usertype: 'pin', profiles: ['doomed'] }, actor)).id);
      const b = Number((await store.createUser({ username: 'dirk', usertype: 'pin', profiles: ['doomed'] }, actor)).id);
      await expect(store.deleteProfile('doomed')).rejects.toMatchObject({
        code: 'profile_in_use',
        message: "Profile 'doomed' is attached to 2 users: detach it from them first.",
      });
      await store.detachProfile(a, 'doomed', actor);
      await store.detachProfile(b, 'doomed', actor);
      // Fall-Through, Idle-Timeout, Simultaneous-Use, the description.
      expect(await store.deleteProfile('doomed')).toEqual({ groupname: 'doomed', rows: 4 });
      for (const table of ['radgroupcheck', 'radgroupreply', 'netsvc_profile', 'radusergroup']) {
        expect(await rows(`SELECT * FROM ${table} WHERE groupname = 'doomed'`), table).toEqual([]);
      }
      expect(await store.describeProfile('doomed')).toBeUndefined();
      expect(await codeOf(store.deleteProfile('doomed'))).toBe('profile_not_found');
      expect(await codeOf(store.deleteProfile('daloRADIUS-Disabled-Users'))).toBe('profile_not_found');
    });
  });

  describe('user attributes', () => {
    it('adds, updates and leaves unchanged; a repeatable attribute gets another row; auth rows stay hidden', async () => {
      const [gina] = await store.listUsers({ username: 'gina' }, page);
      const id = gina!.id;
      const w = (attribute: string, table: 'check' | 'reply', value: string, multiple = false) => ({
        attribute,
        table,
        op: multiple ? '+=' : ':=',
        value,
        multiple,
      });
      expect(
        await store.setUserAttributes(id, [w('Session-Timeout', 'reply', '600'), w('Simultaneous-Use', 'check', '2')], actor),
      ).toEqual(['added', 'added']);
      expect(
        await store.setUserAttributes(id, [w('Session-Timeout', 'reply', '900'), w('Simultaneous-Use', 'check', '2')], actor),
      ).toEqual(['updated', 'unchanged']);
      expect(
        await store.setUserAttributes(
          id,
          [w('Reply-Message', 'reply', 'hello', true), w('Reply-Message', 'reply', 'again', true)],
          actor,
        ),
      ).toEqual(['added', 'added']);
      const attrs = await store.userAttributes(id);
      expect(attrs.attributes.map((a) => `${a.attribute} ${a.op} ${a.value}`)).toEqual([
        'Simultaneous-Use := 2',
        'Session-Timeout := 900',
        'Reply-Message += hello',
        'Reply-Message += again',
      ]);
      expect(
        await store.unsetUserAttributes(
          id,
          [
            { attribute: 'Reply-Message', table: 'reply' },
            { attribute: 'Idle-Timeout', table: 'reply' },
          ],
          actor,
        ),
      ).toEqual([2, 0]);
      expect(await codeOf(store.setUserAttributes(id, [w('Cleartext-Password', 'check', 'x')], actor))).toBe('invalid');
      expect(await checkRows('gina')).toEqual(['Cleartext-Password := pw', 'Simultaneous-Use := 2']);
    });
  });

  describe('reports', () => {
    beforeAll(async () => {
      await raw.execute("INSERT INTO nas (nasname, shortname, type, secret) VALUES ('10.0.0.1', 'lobby-ap', 'other', 's')");
      await store.updateUser(
        (await store.listUsers({ username: 'hank' }, page))[0]!.id,
        { firstname: 'Hank', lastname: 'Hill' },
        actor,
      );
      await insertAcct(raw, {
        sessionId: 's1',
        username: 'hank',
        nas: '10.0.0.1',
        mac: 'aa:bb:cc:00:00:01',
        called: '00-11-22-33-44-55:Guest',
        ip: '10.1.0.5',
        start: T0 - 86400_000,
        stop: T0 - 82800_000,
        sessionTime: 3600,
        input: 1000,
        output: 2000,
        cause: 'User-Request',
      });
      await insertAcct(raw, {
        sessionId: 's2',
        username: 'hank',
        nas: '10.0.0.2',
        mac: 'AA-BB-CC-00-00-01',
        ip: '10.1.0.6',
        start: T0 - 3600_000,
        sessionTime: 1200,
        input: 1024 * 1024,
        output: 512 * 1024,
      });
      await insertAcct(raw, {
        sessionId: 's3',
        username: 'gina',
        nas: '10.0.0.1',
        mac: 'aabbcc000002',
        called: '00:11:22:33:44:55',
        ip: '10.1.0.7',
        start: T0 - 60_000,
      });
      await insertPostAuth(raw, 'hank', 'hunter2', 'Access-Accept', T0 - 120_000);
      await insertPostAuth(raw, 'hank', 'wrong', 'Access-Reject', T0 - 60_000);
      await insertPostAuth(raw, 'gina', "x' OR '1'='1", 'Access-Reject', T0 - 30_000);
    });

    it('historical sessions: newest first, every field, NAS id from the nas table, MACs normalised', async () => {
      const list = await store.historicalSessions({ username: 'hank' }, page);
      expect(list.map((s) => s.acctstarttime)).toEqual(['2026-03-25 08:00:00', '2026-03-24 09:00:00']);
      expect(list[1]).toEqual({
        radacctid: expect.any(Number),
        hotspot: 'lobby-ap',
        username: 'hank',
        macaddress: 'AA-BB-CC-00-00-01',
        ipaddress: '10.1.0.5',
        acctstarttime: '2026-03-24 09:00:00',
        acctstoptime: '2026-03-24 10:00:00',
        acctsessiontime: 3600,
        calledstationid: '00-11-22-33-44-55',
        acctinputoctets: 1000,
        acctoutputoctets: 2000,
        acctterminatecause: 'User-Request',
        nas: '10.0.0.1',
      });
      expect(list[0]).toMatchObject({ acctstoptime: null, acctterminatecause: '', hotspot: '' });
    });

    it('filters exactly, MACs in any notation, time bounds inclusive', async () => {
      const ids = async (f: Parameters<RadiusStore['historicalSessions']>[0]) =>
        (await store.historicalSessions(f, page)).map((s) => s.username + ':' + s.ipaddress);
      expect(await ids({ macaddress: 'aa-bb-cc-00-00-01' })).toEqual(['hank:10.1.0.6', 'hank:10.1.0.5']);
      expect(await ids({ macaddress: 'AABB.CC00.0002' })).toEqual(['gina:10.1.0.7']);
      expect(await ids({ calledstationid: '00:11:22:33:44:55' })).toEqual(['gina:10.1.0.7', 'hank:10.1.0.5']);
      expect(await ids({ hotspot: 'lobby-ap' })).toEqual(['gina:10.1.0.7', 'hank:10.1.0.5']);
      expect(await ids({ nas: '10.0.0.2' })).toEqual(['hank:10.1.0.6']);
      expect(await ids({ ipaddress: '10.1.0.7' })).toEqual(['gina:10.1.0.7']);
      expect(await ids({ username: 'HANK' })).toEqual(dialect === 'mysql' ? ['hank:10.1.0.6', 'hank:10.1.0.5'] : []);
      expect(await ids({ from: T0 - 3600_000, to: T0 - 60_000 })).toEqual(['gina:10.1.0.7', 'hank:10.1.0.6']);
      expect(await ids({ from: T0 - 3599_000 })).toEqual(['gina:10.1.0.7']);
      expect(await ids({ from: T0 - 2 * 86400_000, to: T0 - 3601_000 })).toEqual(['hank:10.1.0.5']);
      expect(await ids({ hotspot: 'nowhere' })).toEqual([]);
      expect(await ids({ macaddress: 'not-a-mac' })).toEqual([]);
    });

    it('online sessions: open ones only, traffic 1024-based, total time from the start, the user name', async () => {
      clock = T0 + 86400_000;
      const list = await store.onlineSessions({}, page);
      clock = T0;
      expect(list.map((s) => s.username)).toEqual(['gina', 'hank']);
      expect(list[1]).toEqual({
        radacctid: expect.any(Number),
        hotspot: '',
        username: 'hank',
        nas: '10.0.0.2',
        macaddress: 'AA-BB-CC-00-00-01',
        calledstationid: '',
        ipaddress: '10.1.0.6',
        starttime: '2026-03-25 08:00:00',
        traffic: '1.50 MB',
        name: 'Hank Hill',
        totaltime: '1d 01:00:00',
      });
      expect((await store.onlineSessions({ hotspot: 'lobby-ap' }, page)).map((s) => s.username)).toEqual(['gina']);
    });

    it('login attempts: newest first, password always masked, reply and time filters', async () => {
      const list = await store.loginAttempts({}, page);
      expect(list.slice(0, 3).map((a) => [a.username, a.pass, a.reply])).toEqual([
        ['gina', '********', 'Access-Reject'],
        ['hank', '********', 'Access-Reject'],
        ['hank', '********', 'Access-Accept'],
      ]);
      expect(list[2]!.authdate).toBe('2026-03-25 08:58:00');
      expect((await store.loginAttempts({ reply: 'Access-Accept', username: 'hank' }, page)).length).toBe(1);
      expect((await store.loginAttempts({ from: T0 - 60_000, to: T0 - 60_000 }, page)).map((a) => a.username)).toEqual(['hank']);
      expect(JSON.stringify(await store.loginAttempts({}, page))).not.toMatch(/hunter2|wrong|OR '1'/);
    });

    it('quota purchases: record, newest first, exact filters, remarks substring, day filter', async () => {
      await store.recordQuotaPurchase(
        {
          transaction_time: '2026-03-24 10:00:00',
          username: 'hank',
          plan_name: '1GB',
          currency: 'EUR',
          amount: '5',
          remarks: 'Paid at 50% off',
        },
        actor,
      );
      await store.recordQuotaPurchase(
        {
          transaction_time: '2026-03-25 11:30:00',
          username: 'gina',
          plan_name: '5GB',
          currency: 'EUR',
          amount: '20.50',
          user_profiles: 'gold',
          remarks: 'card',
        },
        actor,
      );
      const list = await store.quotaPurchases({}, page);
      expect(list.map((p) => p.username)).toEqual(['gina', 'hank']);
      expect(list[0]).toMatchObject({
        amount: '20.50',
        user_profiles: 'gold',
        create_by: 'api-alice',
        create_at: '2026-03-25 09:00:00',
      });
      expect((await store.quotaPurchases({ remarks: '50%' }, page)).map((p) => p.username)).toEqual(['hank']);
      expect((await store.quotaPurchases({ remarks: '_' }, page)).length).toBe(0);
      expect((await store.quotaPurchases({ transaction_time: '2026-03-25' }, page)).map((p) => p.username)).toEqual(['gina']);
      expect((await store.quotaPurchases({ plan_name: '1GB', from: T0 - 86400_000, to: T0 }, page)).map((p) => p.amount)).toEqual(
        ['5.00'],
      );
    });

    it('records a purchase for a user FreeRADIUS knows, normalised: amount with two places, currency in capitals, profiles joined', async () => {
      // Made in SQL or by daloRADIUS: only a radcheck row, no netsvc_userinfo.
      await raw.execute(
        "INSERT INTO radcheck (username, attribute, op, value) VALUES ('dalo-user', 'Cleartext-Password', ':=', 'x')",
      );
      const rec = await store.recordQuotaPurchase(
        {
          transaction_time: '2026-03-25 12:00:00',
          username: 'dalo-user',
          plan_name: '10GB',
          currency: 'usd',
          amount: '007.5',
          user_profiles: 'silver,gold, silver',
        },
        { name: 'billing-script' },
      );
      expect(rec).toEqual({
        id: expect.any(Number),
        transaction_time: '2026-03-25 12:00:00',
        username: 'dalo-user',
        plan_name: '10GB',
        currency: 'USD',
        amount: '7.50',
        user_profiles: 'silver, gold',
        remarks: '',
        create_by: 'billing-script',
        create_at: new Date(clock).toISOString().slice(0, 19).replace('T', ' '),
      });
      const stored = await rows('SELECT amount, user_profiles FROM netsvc_quota_purchase WHERE id = ?', [rec.id]);
      expect(String(stored[0]!.amount)).toBe('7.50');
      expect((await store.quotaPurchases({ user_profiles: 'silver, gold' }, page)).map((p) => p.id)).toEqual([rec.id]);
      // Remarks and plan names are counted in characters, as the varchar columns count them.
      const wide = await store.recordQuotaPurchase(
        {
          transaction_time: '2026-03-25 12:01:00',
          username: 'dalo-user',
          plan_name: 'é'.repeat(128),
          currency: 'EUR',
          amount: '999999999999.99',
          remarks: 'ü'.repeat(1000),
        },
        actor,
      );
      expect(wide).toMatchObject({ plan_name: 'é'.repeat(128), remarks: 'ü'.repeat(1000), amount: '999999999999.99' });
    });

    it('finds a MAC user from any notation and stores the name as the database has it', async () => {
      await store.createUser({ username: 'aa:bb:cc:00:00:09', usertype: 'mac' }, actor);
      const base = { transaction_time: '2026-03-25 13:00:00', plan_name: '1GB', currency: 'EUR', amount: '1' };
      expect((await store.recordQuotaPurchase({ ...base, username: 'aabb.cc00.0009' }, actor)).username).toBe(
        'AA-BB-CC-00-00-09',
      );
      // MariaDB compares names case-insensitively (as FreeRADIUS's lookups there do); the others do not.
      if (dialect === 'mysql')
        expect((await store.recordQuotaPurchase({ ...base, username: 'HANK' }, actor)).username).toBe('hank');
      else expect(await codeOf(store.recordQuotaPurchase({ ...base, username: 'HANK' }, actor))).toBe('user_not_found');
    });

    it('refuses unknown users and profiles and malformed fields, writing nothing', async () => {
      const count = async () => Number((await rows('SELECT COUNT(*) AS n FROM netsvc_quota_purchase'))[0]!.n);
      const before = await count();
      const ok = { transaction_time: '2026-03-25 14:00:00', username: 'hank', plan_name: '1GB', currency: 'EUR', amount: '5' };
      const refused = (p: Partial<typeof ok> & { user_profiles?: string; remarks?: string }, by = actor) =>
        codeOf(store.recordQuotaPurchase({ ...ok, ...p }, by));
      expect(await refused({ username: 'nobody' })).toBe('user_not_found');
      await expect(store.recordQuotaPurchase({ ...ok, username: 'nobody' }, actor)).rejects.toThrow("User 'nobody' not found.");
      expect(await refused({ user_profiles: 'gold,platinum' })).toBe('profile_not_found');
      expect(await refused({ user_profiles: 'daloRADIUS-Disabled-Users' })).toBe('profile_not_found');
      for (const amount of ['1.234', '-1', '1e3', '', '1,50', '5.', '.5', '0x10', ' 5', '1234567890123', 'NaN']) {
        expect(await refused({ amount }), amount).toBe('invalid');
      }
      for (const currency of ['EURO', 'E1R', '€', '']) expect(await refused({ currency }), currency).toBe('invalid');
      for (const transaction_time of ['2026-02-30 10:00:00', '2026-03-25T10:00:00Z', '2026-03-25', 'yesterday']) {
        expect(await refused({ transaction_time }), transaction_time).toBe('invalid');
      }
      for (const plan_name of ['', '  ', 'x'.repeat(129), 'a\nb'])
        expect(await refused({ plan_name }), plan_name).toBe('invalid');
      expect(await refused({ remarks: 'x'.repeat(1001) })).toBe('invalid');
      expect(await refused({ remarks: 'tab\there' })).toBe('invalid');
      expect(await refused({}, { name: '' })).toBe('invalid');
      expect(await refused({}, { name: 'b'.repeat(129) })).toBe('invalid');
      expect(await count()).toBe(before);
    });
  });

  describe('transactions', () => {
    const TABLES = [
      'radcheck',
      'radreply',
      'radusergroup',
      'radgroupcheck',
      'radgroupreply',
      'netsvc_userinfo',
      'netsvc_profile',
    ];
    /** Every row of every table a user or profile write touches, as committed. */
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of TABLES)
        out[table] = await rows(`SELECT * FROM ${table} ORDER BY ${table === 'netsvc_profile' ? 'groupname' : 'id'}`);
      return out;
    };

    /** A store over its own connection whose `failOn` statement throws once, inside the store's transaction. */
    const failingStore = (failOn: (sql: string) => boolean) => {
      let fired = false;
      const store = radiusStoreFor(
        interceptedClient(openSqlClient(t.db.url, '/'), async (sql) => {
          if (fired || !failOn(sql)) return;
          fired = true;
          throw new Error('injected failure');
        }),
        { timeZone: 'UTC' },
      );
      return { store, fired: () => fired };
    };

    it('an update that fails part-way (rename done, then an unknown profile) changes nothing in any table', async () => {
      const stamp = await store.createUser(
        { username: 'rolly', usertype: 'user', password: 'pw', profiles: ['gold'], firstname: 'Rolly' },
        actor,
      );
      const id = Number(stamp.id);
      await store.setUserAttributes(
        id,
        [{ attribute: 'Session-Timeout', table: 'reply', op: ':=', value: '600', multiple: false }],
        actor,
      );
      const before = await snapshot();
      const change = {
        username: 'rolly2',
        password: 'new-pw',
        firstname: 'Changed',
        disabled: true,
        profiles: ['silver', 'nope'],
      };
      expect(await codeOf(store.updateUser(id, change, { name: 'api-bob' }))).toBe('profile_not_found');
      expect(await snapshot()).toEqual(before);
    });

    it('create, update, delete and attribute writes that fail at their last statement change nothing in any table', async () => {
      const stamp = await store.createUser({ username: 'rolly3', usertype: 'user', password: 'pw', profiles: ['gold'] }, actor);
      const id = Number(stamp.id);
      const cases: Array<[string, (sql: string) => boolean, (s: RadiusStore) => Promise<unknown>]> = [
        [
          'create with profiles, disabled: fails at the reject-group membership',
          (sql) => sql.startsWith('INSERT INTO radusergroup') && sql.includes(', 0)'),
          (s) =>
            s.createUser(
              { username: 'rolly4', usertype: 'user', password: 'pw', profiles: ['gold', 'silver'], disabled: true },
              actor,
            ),
        ],
        [
          'rename with new profiles: fails at the reject-group membership',
          (sql) => sql.startsWith('INSERT INTO radusergroup') && sql.includes(', 0)'),
          (s) =>
            s.updateUser(
              id,
              { username: 'rolly5', password: 'x2', email: 'r@corp.test', profiles: ['silver'], disabled: true },
              actor,
            ),
        ],
        ['delete: fails at the info row', (sql) => sql.startsWith('DELETE FROM netsvc_userinfo'), (s) => s.deleteUser(id)],
        [
          'attributes: fails at the stamp after two writes',
          (sql) => sql.startsWith('UPDATE netsvc_userinfo SET updateddate'),
          (s) =>
            s.setUserAttributes(
              id,
              [
                { attribute: 'Session-Timeout', table: 'reply', op: ':=', value: '60', multiple: false },
                { attribute: 'Simultaneous-Use', table: 'check', op: ':=', value: '1', multiple: false },
              ],
              actor,
            ),
        ],
      ];
      for (const [name, failOn, write] of cases) {
        const before = await snapshot();
        const failing = failingStore(failOn);
        try {
          await expect(write(failing.store), name).rejects.toThrow('injected failure');
          expect(failing.fired(), name).toBe(true);
        } finally {
          await failing.store.close();
        }
        expect(await snapshot(), name).toEqual(before);
      }
    });
  });

  describe('SQL metacharacters', () => {
    const nasty = ["x'; DROP TABLE radcheck; --", 'a" OR "1"="1', 'back\\slash', '%_', "Robert'); DELETE FROM radacct;--"];

    it('stores them literally in every info field and matches them only literally in every filter', async () => {
      const stamp = await store.createUser(
        {
          username: 'meta',
          usertype: 'user',
          password: nasty[0]!,
          firstname: nasty[0],
          lastname: nasty[1],
          address: nasty[2],
          company: nasty[3],
          zip: '%',
        },
        actor,
      );
      const user = await store.getUser(Number(stamp.id));
      expect(user).toMatchObject({ firstname: nasty[0], lastname: nasty[1], address: nasty[2], company: nasty[3], zip: '%' });
      expect(await checkRows('meta')).toEqual([`Cleartext-Password := ${nasty[0]}`]);
      for (const s of nasty) {
        expect(await store.listUsers({ username: s }, page)).toEqual([]);
        expect(
          await store.historicalSessions(
            { username: s, hotspot: s, nas: s, ipaddress: s, macaddress: s, calledstationid: s },
            page,
          ),
        ).toEqual([]);
        expect(await store.onlineSessions({ username: s }, page)).toEqual([]);
        expect(await store.loginAttempts({ username: s, reply: s }, page)).toEqual([]);
        expect(
          await store.quotaPurchases({ username: s, plan_name: s, user_profiles: s, remarks: s, transaction_time: s }, page),
        ).toEqual([]);
        expect(await codeOf(store.profileUsers(s, page))).toBe('profile_not_found');
      }
      expect(Number((await rows('SELECT COUNT(*) AS n FROM radacct'))[0]!.n)).toBeGreaterThan(0);
      expect(Number((await rows('SELECT COUNT(*) AS n FROM radcheck'))[0]!.n)).toBeGreaterThan(0);
    });
  });
});
