/** The hotspot HTTP contract (api.md 4.3, decisions.md Hotspot) over a FreeRADIUS database on every backend. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { radiusStoreFor } from '../../../storage/radius/open-radius-store.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { availableDialects, createTestDatabase, MYSQL_ADMIN_URL, POSTGRES_ADMIN_URL } from '../../helpers/databases.js';
import { startHotspotApi, type HotspotApi } from '../../helpers/hotspot-api.js';
import { createRadiusDatabase, insertAcct, insertPostAuth, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await availableDialects();
const NOW = Date.now();

describe.each(dialects)('hotspot API on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let api: HotspotApi;
  const call = (method: string, path: string, body?: unknown) => api.call(method, path, body);
  const idOf = async (username: string): Promise<number> => {
    const res = await call('GET', `/users?username=${encodeURIComponent(username)}`);
    return res.body.result[0].id;
  };

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { timeZone: 'UTC' });
    for (const g of ['gold', 'silver']) await t.store.saveProfile(g, `${g} plan`);
    api = await startHotspotApi(t.store);
  });

  afterAll(async () => {
    await api?.close();
    await t?.close();
  });

  describe('users', () => {
    it('creates a user and answers the stamp with the API user as creator', async () => {
      const res = await call('POST', '/users', {
        username: 'alice',
        usertype: 'user',
        password: 'Sesame-1',
        firstname: 'Alice',
        email: 'alice@corp.test',
        profiles: 'gold, silver',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: true,
        message: expect.any(String),
        result: {
          id: expect.stringMatching(/^\d+$/),
          username: 'alice',
          createdby: 'api-alice',
          createddate: expect.any(String),
          updatedby: null,
          updateddate: null,
        },
      });
    });

    it('gets one user in detail form inside an array, password masked, profiles joined with ", "', async () => {
      const id = await idOf('alice');
      const res = await call('GET', `/users/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(true);
      expect(res.body.result).toHaveLength(1);
      expect(res.body.result[0]).toMatchObject({
        id,
        username: 'alice',
        usertype: 'Username-Password',
        password: 'S*******',
        profile: 'gold, silver',
        firstname: 'Alice',
        email: 'alice@corp.test',
        disabled: false,
        createdby: 'api-alice',
        race: null,
      });
      expect(JSON.stringify(res.body)).not.toContain('Sesame');
    });

    it('creates mac and pin users; a pin needs only usertype and username', async () => {
      const mac = await call('POST', '/users', { username: 'aa:bb:cc:dd:ee:ff', usertype: 'mac' });
      expect(mac.body.result.username).toBe('AA-BB-CC-DD-EE-FF');
      const pin = await call('POST', '/users', { usertype: 'pin', username: 'pin1234' });
      expect(pin.status).toBe(200);
      const again = await call('POST', '/users', { usertype: 'pin', username: 'pin1234' });
      expect(again).toEqual({ status: 409, body: { status: false, errorMessage: "Username 'pin1234' already exists." } });
      const detail = await call('GET', `/users/${pin.body.result.id}`);
      expect(detail.body.result[0]).toMatchObject({ usertype: 'Auth-Type', password: null });
    });

    it('answers 400 naming the parameter for bad input', async () => {
      const bad = async (body: unknown, param: string) => {
        const res = await call('POST', '/users', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.status).toBe(false);
        expect(res.body.errorMessage).toContain(param);
      };
      await bad({ usertype: 'user', password: 'x' }, 'username');
      await bad({ username: 'bob', usertype: 'admin', password: 'x' }, 'usertype');
      await bad({ username: 'bob', usertype: 'user' }, 'password');
      await bad({ username: 'bob', usertype: 'pin', password: 'x' }, 'password');
      await bad({ username: 'bob smith', usertype: 'user', password: 'x' }, 'username');
      await bad({ username: 'b'.repeat(65), usertype: 'user', password: 'x' }, 'username');
      await bad({ username: 'not-a-mac', usertype: 'mac' }, 'username');
      await bad({ username: 'bob', usertype: 'user', password: 'x', email: 'not-an-email' }, 'email');
      await bad({ username: 'bob', usertype: 'user', password: 'x', birthdate: '1990-02-30' }, 'birthdate');
      await bad({ username: 'bob', usertype: 'user', password: 'x', address: 'a'.repeat(501) }, 'address');
      await bad({ username: 'bob', usertype: 'user', password: 'x', profiles: "gold,x'y" }, 'profiles');
      await bad({ username: 'bob', usertype: 'user', password: '`%{exec:/bin/id}`' }, 'password');
      await bad({ username: 'bob', usertype: 'user', password: 'x', disabled: 'yes' }, 'disabled');
      expect((await call('POST', '/users', '{"username": ')).status).toBe(400);
      expect((await call('GET', '/users/abc')).status).toBe(400);
      expect((await call('GET', '/users?page=0')).body.errorMessage).toContain('page');
      expect((await call('GET', '/historical-sessions?startTime=yesterday')).body.errorMessage).toContain('startTime');
      expect((await call('GET', '/historical-sessions?macaddress=zz')).body.errorMessage).toContain('macaddress');
      expect((await call('GET', '/historical-sessions?nas=10.0.0')).body.errorMessage).toContain('nas');
      expect((await call('GET', '/login-attempts?reply=Maybe')).body.errorMessage).toContain('reply');
      expect((await call('GET', '/quota-purchase-report?transaction_time=2026-13-01')).body.errorMessage).toContain(
        'transaction_time',
      );
    });

    it('refuses an unknown profile with 404 and writes nothing', async () => {
      const res = await call('POST', '/users', { username: 'bob', usertype: 'user', password: 'pw', profiles: 'gold,platinum' });
      expect(res).toEqual({ status: 404, body: { status: false, errorMessage: "Profile 'platinum' not found." } });
      expect((await call('GET', '/users?username=bob')).body.result).toEqual([]);
    });

    it('updates fields, replaces profiles, renames, and disables/enables', async () => {
      const id = await idOf('alice');
      const res = await call('POST', `/users/${id}`, {
        email: 'a@corp.test',
        profiles: 'silver',
        disabled: true,
        username: 'alice2',
      });
      expect(res.status).toBe(200);
      expect(res.body.result[0]).toMatchObject({
        username: 'alice2',
        email: 'a@corp.test',
        profile: 'silver',
        disabled: true,
        updatedby: 'api-alice',
      });
      expect(res.body.result[0].updateddate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      const back = await call('POST', `/users/${id}`, { disabled: false, username: 'alice' });
      expect(back.body.result[0]).toMatchObject({ username: 'alice', disabled: false });
      expect((await call('POST', `/users/${id}`, { username: 'pin1234' })).status).toBe(409);
      expect(await call('POST', '/users/999999', { email: 'x@corp.test' })).toEqual({
        status: 404,
        body: { status: false, errorMessage: 'User with ID: 999999 not found.' },
      });
    });

    it("checks a new username against the user's own type: the name rule as given for user and pin, a MAC only for mac", async () => {
      const spaced = ' \n\taabbccddeeff \n';
      for (const name of ['alice', 'pin1234']) {
        const id = await idOf(name);
        const res = await call('POST', `/users/${id}`, { username: spaced });
        expect(res.status, name).toBe(400);
        expect(res.body.errorMessage).toContain("'username'");
        expect((await call('GET', `/users/${id}`)).body.result[0].username).toBe(name);
        // A bare MAC-like name is a valid name for them, stored exactly as given.
        expect((await call('POST', `/users/${id}`, { username: 'aabbccddee0f' })).body.result[0].username).toBe('aabbccddee0f');
        expect((await call('POST', `/users/${id}`, { username: name })).status).toBe(200);
      }
      const macId = await idOf('AA-BB-CC-DD-EE-FF');
      expect((await call('POST', `/users/${macId}`, { username: spaced })).body.result[0].username).toBe('AA-BB-CC-DD-EE-FF');
      expect((await call('POST', `/users/${macId}`, { username: 'aa:bb:cc:dd:ee:0e' })).body.result[0].username).toBe(
        'AA-BB-CC-DD-EE-0E',
      );
      const notMac = await call('POST', `/users/${macId}`, { username: 'alice9' });
      expect(notMac.status).toBe(400);
      expect(notMac.body.errorMessage).toContain("'username'");
      expect((await call('POST', `/users/${macId}`, { username: 'AA-BB-CC-DD-EE-FF' })).status).toBe(200);
      const stored = await t.raw.query<{ username: string }>(
        `SELECT username FROM radcheck UNION ALL SELECT username FROM netsvc_userinfo UNION ALL SELECT username FROM radusergroup`,
      );
      expect(stored.filter((r) => /\s/.test(r.username))).toEqual([]);
    });

    it('lists users in the paged envelope, one extra row deciding isLastPage', async () => {
      const first = await call('GET', '/users?perPage=2');
      expect(first.body).toMatchObject({
        status: true,
        page: 1,
        perPage: 2,
        isLastPage: false,
        message: 'More records available. Use pagination to load next page.',
      });
      expect(first.body.result).toHaveLength(2);
      const all = await call('GET', '/users?perPage=100');
      expect(all.body).toMatchObject({ isLastPage: true, message: "You've reached the last page of the results." });
      const ids = all.body.result.map((u: { id: number }) => u.id);
      expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
      expect((await call('GET', `/users?id=${ids[1]}`)).body.result.map((u: { id: number }) => u.id)).toEqual([ids[1]]);
      expect(Object.keys(all.body.result[0]).sort()).toEqual(
        ['id', 'username', 'usertype', 'profile', 'firstname', 'lastname', 'email', 'mobile', 'gender', 'disabled'].sort(),
      );
    });

    it('deletes a user and answers id and username; then it is gone', async () => {
      const created = await call('POST', '/users', { username: 'temp', usertype: 'user', password: 'pw' });
      const id = created.body.result.id;
      expect(await call('DELETE', `/users/${id}`)).toEqual({
        status: 200,
        body: { status: true, message: expect.any(String), result: { id, username: 'temp' } },
      });
      expect((await call('GET', `/users/${id}`)).status).toBe(404);
      expect((await call('DELETE', `/users/${id}`)).body.errorMessage).toBe(`User with ID: ${id} not found.`);
    });
  });

  describe('profiles', () => {
    it('attach answers the new list; attaching again is a conflict with an empty result', async () => {
      const created = await call('POST', '/users', { username: 'carol', usertype: 'user', password: 'pw' });
      const id = created.body.result.id;
      const res = await call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'gold' });
      expect(res).toEqual({
        status: 200,
        body: { status: true, message: expect.any(String), result: { username: 'carol', attached: 'gold', profile: 'gold' } },
      });
      const again = await call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'gold' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ status: false, errorMessage: expect.stringMatching(/carol.*gold/), result: [] });
      expect((await call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'nope' })).status).toBe(404);
      expect((await call('POST', `/users/${id}/actions/attach-profile`, {})).body.errorMessage).toContain('profileName');
    });

    it('detach answers the remaining list; detaching an absent profile is status true with an empty result', async () => {
      const id = await idOf('carol');
      const absent = await call('POST', `/users/${id}/actions/detach-profile`, { profileName: 'silver' });
      expect(absent).toEqual({
        status: 200,
        body: { status: true, message: expect.stringMatching(/not attached.*no action/), result: [] },
      });
      const res = await call('POST', `/users/${id}/actions/detach-profile`, { profileName: 'gold' });
      expect(res.body.result).toEqual({ username: 'carol', detached: 'gold', profile: '' });
    });

    it('50 parallel attach-profile calls leave exactly one membership', async () => {
      const id = await idOf('carol');
      const results = await Promise.all(
        Array.from({ length: 50 }, () => call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'silver' })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(49);
      const rows = await t.raw.query("SELECT COUNT(*) AS n FROM radusergroup WHERE username = 'carol' AND groupname = 'silver'");
      expect(Number(rows[0]!.n)).toBe(1);
    });

    it('parallel creates of one username leave one user', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call('POST', '/users', { username: 'dup', usertype: 'user', password: `pw${i}` })),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status === 409)).toHaveLength(19);
      expect((await call('GET', '/users?username=dup')).body.result).toHaveLength(1);
    });

    it('lists profiles with descriptions and the users of one', async () => {
      const list = await call('GET', '/profiles');
      expect(list.body.result).toEqual(expect.arrayContaining([{ groupname: 'gold', description: 'gold plan' }]));
      const users = await call('GET', '/profiles/silver/users');
      expect(users.body.result).toEqual(
        expect.arrayContaining([
          {
            id: String(await idOf('carol')),
            username: 'carol',
            firstname: '',
            lastname: '',
            profileName: 'silver',
            priority: expect.any(String),
          },
        ]),
      );
      expect((await call('GET', '/profiles/unknown/users')).status).toBe(404);
      expect((await call('GET', "/profiles/bad'name/users")).status).toBe(400);
    });
  });

  describe('access attributes', () => {
    it('lists the catalogue as text, format and multiple', async () => {
      const res = await call('GET', '/user-access');
      expect(res.body.status).toBe(true);
      expect(res.body.result['WISPr-Bandwidth-Max-Up']).toEqual({ text: expect.any(String), format: 'Kbps', multiple: false });
      expect(res.body.result['Max-Daily-Octets']).toMatchObject({ format: 'MB' });
    });

    it('attaches single and bulk, converting units; updates an existing value', async () => {
      const id = await idOf('carol');
      const single = await call('POST', `/user-access/${id}/actions/attach-access`, {
        attribute: 'Session-Timeout',
        value: '3600',
      });
      expect(single.status).toBe(200);
      expect(single.body.details.success).toEqual([{ attribute: 'Session-Timeout', value: 3600, action: 'added' }]);
      const bulk = await call('POST', `/user-access/${id}/actions/attach-access`, {
        attributes: [
          { attribute: 'WISPr-Bandwidth-Max-Down', value: '2048' },
          { attribute: 'Max-Daily-Octets', value: 500 },
          { attribute: 'Session-Timeout', value: '7200' },
        ],
      });
      expect(bulk.body).toMatchObject({ status: true, message: expect.stringMatching(/3 succeeded, 0 failed/) });
      expect(bulk.body.details.success.map((s: { action: string }) => s.action)).toEqual(['added', 'added', 'updated']);
      expect(bulk.body.result.user_access).toMatchObject({
        'Session-Timeout': { id: expect.any(String), format: 'Seconds', value: 7200 },
        'WISPr-Bandwidth-Max-Down': { format: 'Kbps', value: 2048 },
        'Max-Daily-Octets': { format: 'MB', value: 500 },
      });
      const stored = await t.raw.query(
        "SELECT attribute, op, value FROM radreply WHERE username = 'carol' AND attribute = 'WISPr-Bandwidth-Max-Down'",
      );
      expect(stored).toEqual([{ attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '2048000' }]);
      const attrs = await call('GET', `/user-access/${id}`);
      expect(attrs.body.result).toMatchObject({ id: String(id), username: 'carol' });
      expect(attrs.body.result.attributes).toEqual(
        expect.arrayContaining([{ 'Max-Daily-Octets': { id: expect.any(String), format: 'MB', value: 500 } }]),
      );
    });

    it('fails an unknown attribute per item: status false, counts, details.errors naming it', async () => {
      const id = await idOf('carol');
      const res = await call('POST', `/user-access/${id}/actions/attach-access`, { attribute: 'Bogus-Attribute', value: '1' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status: false,
        message: expect.stringMatching(/0 succeeded, 1 failed/),
        details: { success: [], errors: [expect.stringContaining('Bogus-Attribute')] },
      });
      expect(res.body.errorMessage).toBeUndefined();
      const mixed = await call('POST', `/user-access/${id}/actions/attach-access`, {
        attributes: [
          { attribute: 'Idle-Timeout', value: '600' },
          { attribute: 'Idle-Timeout2', value: '600' },
          { attribute: 'Session-Timeout', value: '1; DROP TABLE radreply' },
        ],
      });
      expect(mixed.status).toBe(200);
      expect(mixed.body.message).toMatch(/1 succeeded, 2 failed/);
      expect(mixed.body.details.errors).toHaveLength(2);
    });

    it('detaches with counts of detached, skipped and failed', async () => {
      const id = await idOf('carol');
      const res = await call('POST', `/user-access/${id}/actions/detach-access`, {
        attributes: [{ attribute: 'Session-Timeout' }, { attribute: 'Simultaneous-Use' }, { attribute: 'Nope' }],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: true,
        message: expect.stringMatching(/1 detached, 1 skipped, 1 failed/),
        details: { success: [{ attribute: 'Session-Timeout', action: 'detached', message: expect.any(String) }] },
        result: { id: String(id), username: 'carol' },
      });
      expect((await call('POST', `/user-access/${id}/actions/detach-access`, { attribute: 'Nope' })).status).toBe(400);
      expect((await call('POST', '/user-access/999999/actions/detach-access', { attribute: 'Session-Timeout' })).status).toBe(
        404,
      );
    });
  });

  describe('reports', () => {
    beforeAll(async () => {
      await t.raw.execute("INSERT INTO nas (nasname, shortname, type, secret) VALUES ('10.0.0.1', 'lobby', 'other', 's')");
      await insertAcct(t.raw, {
        sessionId: 'r1',
        username: 'carol',
        nas: '10.0.0.1',
        mac: 'aa:bb:cc:00:00:01',
        ip: '10.1.0.5',
        start: NOW - 7200_000,
        stop: NOW - 3600_000,
        sessionTime: 3600,
        input: 10,
        output: 20,
        cause: 'Idle-Timeout',
      });
      await insertAcct(t.raw, {
        sessionId: 'r2',
        username: 'carol',
        nas: '10.0.0.1',
        mac: 'AA-BB-CC-00-00-01',
        ip: '10.1.0.6',
        start: NOW - 600_000,
        input: 1536,
        output: 0,
      });
      await insertPostAuth(t.raw, 'carol', 'secret-in-clear', 'Access-Accept', NOW - 7300_000);
      await insertPostAuth(t.raw, 'carol', 'wrong', 'Access-Reject', NOW - 7250_000);
      await t.store.recordQuotaPurchase(
        {
          transaction_time: '2026-03-25 10:00:00',
          username: 'carol',
          plan_name: '1GB',
          currency: 'EUR',
          amount: '5.5',
          remarks: 'promo 50%',
        },
        { name: 'billing' },
      );
    });

    it('historical sessions with their api.md field names, newest first, filters', async () => {
      const res = await call('GET', '/historical-sessions?username=carol&macaddress=aabb.cc00.0001');
      expect(res.body).toMatchObject({ status: true, page: 1, perPage: 100, isLastPage: true });
      expect(res.body.result.map((s: { ipaddress: string }) => s.ipaddress)).toEqual(['10.1.0.6', '10.1.0.5']);
      expect(Object.keys(res.body.result[1]).sort()).toEqual(
        [
          'radacctid',
          'hotspot',
          'username',
          'macaddress',
          'ipaddress',
          'acctstarttime',
          'acctstoptime',
          'acctsessiontime',
          'calledstationid',
          'acctinputoctets',
          'acctoutputoctets',
          'acctterminatecause',
          'nas',
        ].sort(),
      );
      expect(res.body.result[1]).toMatchObject({
        hotspot: 'lobby',
        macaddress: 'AA-BB-CC-00-00-01',
        acctterminatecause: 'Idle-Timeout',
        nas: '10.0.0.1',
      });
      const day = new Date(NOW).toISOString().slice(0, 10);
      const tomorrow = new Date(NOW + 86400_000).toISOString().slice(0, 10);
      expect((await call('GET', `/historical-sessions?username=carol&startTime=${tomorrow}`)).body.result).toEqual([]);
      expect(
        (await call('GET', `/historical-sessions?username=carol&startTime=${new Date(NOW - 1800_000).toISOString()}`)).body
          .result,
      ).toHaveLength(1);
      expect((await call('GET', `/historical-sessions?hotspot=lobby&endTime=${tomorrow}`)).body.result.length).toBeGreaterThan(0);
      expect(day).toMatch(/^\d{4}/);
    });

    it('online sessions with traffic and total time', async () => {
      const res = await call('GET', '/online-sessions?username=carol');
      expect(res.body.result).toEqual([
        expect.objectContaining({
          username: 'carol',
          traffic: '1.50 KB',
          totaltime: expect.stringMatching(/^00:1\d:\d\d$/),
          hotspot: 'lobby',
        }),
      ]);
    });

    it('login attempts never show the password', async () => {
      const res = await call('GET', '/login-attempts?username=carol');
      expect(res.body.result.map((a: { reply: string; pass: string }) => [a.reply, a.pass])).toEqual([
        ['Access-Reject', '********'],
        ['Access-Accept', '********'],
      ]);
      expect(JSON.stringify(res.body)).not.toContain('secret-in-clear');
      expect((await call('GET', '/login-attempts?username=carol&reply=Access-Accept')).body.result).toHaveLength(1);
    });

    it('quota purchase report', async () => {
      const res = await call('GET', '/quota-purchase-report?remarks=50%25&transaction_time=2026-03-25');
      expect(res.body.result).toEqual([
        {
          id: expect.any(Number),
          transaction_time: '2026-03-25 10:00:00',
          username: 'carol',
          plan_name: '1GB',
          currency: 'EUR',
          amount: '5.50',
          user_profiles: '',
          remarks: 'promo 50%',
          create_by: 'billing',
          create_at: expect.any(String),
        },
      ]);
    });

    it('reduces perPage above the maximum instead of refusing it', async () => {
      const res = await call('GET', '/historical-sessions?perPage=999999');
      expect(res.body.perPage).toBe(2000);
    });
  });

  describe('SQL metacharacters and oversized values', () => {
    const nasty = ["x'; DROP TABLE radcheck; --", '" OR 1=1 --', '%', '_', '\\', "Robert'); DELETE FROM radacct;--"];

    it('stores info fields literally and answers filters with nothing or 400, never executing them', async () => {
      const created = await call('POST', '/users', {
        username: 'meta',
        usertype: 'user',
        password: "p'; DROP TABLE radcheck;--",
        firstname: nasty[0],
        lastname: nasty[1],
        company: nasty[5],
        zip: '%',
      });
      expect(created.status).toBe(200);
      const detail = await call('GET', `/users/${created.body.result.id}`);
      expect(detail.body.result[0]).toMatchObject({ firstname: nasty[0], lastname: nasty[1], company: nasty[5], zip: '%' });
      for (const s of nasty) {
        const e = encodeURIComponent(s);
        for (const path of [
          `/users?username=${e}`,
          `/historical-sessions?username=${e}&hotspot=${e}`,
          `/online-sessions?username=${e}&hotspot=${e}`,
          `/login-attempts?username=${e}`,
          `/quota-purchase-report?username=${e}&plan_name=${e}&user_profiles=${e}&remarks=${e}`,
        ]) {
          const res = await call('GET', path);
          expect(res.status, path).toBe(200);
          expect(res.body.result, path).toEqual(path.includes('remarks') && s === '%' ? expect.any(Array) : []);
        }
        for (const path of [
          `/historical-sessions?nas=${e}`,
          `/historical-sessions?macaddress=${e}`,
          `/historical-sessions?ipaddress=${e}`,
          `/online-sessions?calledstationid=${e}`,
          `/users?id=${e}`,
          `/historical-sessions?startTime=${e}`,
        ]) {
          expect((await call('GET', path)).status, path).toBe(400);
        }
        // '_' is a valid user name; every other one here holds characters FreeRADIUS would escape.
        if (s !== '_')
          expect((await call('POST', '/users', { username: s, usertype: 'user', password: 'x' })).status, s).toBe(400);
      }
      expect(Number((await t.raw.query('SELECT COUNT(*) AS n FROM radcheck'))[0]!.n)).toBeGreaterThan(0);
      expect(Number((await t.raw.query('SELECT COUNT(*) AS n FROM radacct'))[0]!.n)).toBeGreaterThan(0);
    });

    it('refuses oversized values in every filter and field with 400', async () => {
      const big = 'x'.repeat(2000);
      for (const p of ['username', 'hotspot', 'nas', 'macaddress', 'calledstationid', 'ipaddress', 'startTime', 'endTime']) {
        expect((await call('GET', `/historical-sessions?${p}=${big}`)).body.errorMessage, p).toContain(p);
      }
      for (const p of ['transaction_time', 'username', 'plan_name', 'user_profiles', 'remarks']) {
        expect((await call('GET', `/quota-purchase-report?${p}=${'y'.repeat(1001)}`)).status, p).toBe(400);
      }
      for (const f of [
        'firstname',
        'lastname',
        'email',
        'mobile',
        'gender',
        'race',
        'religion',
        'nationality',
        'profession',
        'interests',
        'marital_status',
        'birthdate',
        'locale',
        'passport_nric_no',
        'company',
        'address',
        'country',
        'zip',
      ]) {
        const res = await call('POST', '/users', { username: 'big', usertype: 'user', password: 'x', [f]: big });
        expect(res.status, f).toBe(400);
        expect(res.body.errorMessage, f).toContain(f);
      }
      expect((await call('POST', '/users', { username: 'big', usertype: 'user', password: big })).status).toBe(400);
      const id = await idOf('carol');
      expect(
        (await call('POST', `/user-access/${id}/actions/attach-access`, { attribute: 'Reply-Message', value: big })).status,
      ).toBe(400);
      expect((await call('POST', `/users/${id}/actions/attach-profile`, { profileName: big })).status).toBe(400);
    });
  });

  it('an entity without a RADIUS database gets 403, a missing token 401', async () => {
    const res = await fetch(`${api.url}/svc/api/hotspot/users`);
    expect(res.status).toBe(401);
    expect(await api.callOther('GET', '/users')).toEqual({
      status: 403,
      body: { status: false, errorMessage: "Entity 'other' has no RADIUS database." },
    });
  });
});

describe('hotspot routes in the OpenAPI document', () => {
  it('lists every hotspot endpoint of api.md 4.3 with its method', async () => {
    const { createApp } = await import('../../../api/app.js');
    const { createHotspotRoutes } = await import('../../../api/routes/hotspot/index.js');
    const { defaultCatalogue } = await import('../../../storage/radius/attribute-catalogue.js');
    const { createLogger } = await import('../../../src/log.js');
    const { Writable } = await import('node:stream');
    const app = createApp({
      auth: {} as never,
      logger: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })),
      bodyLimitBytes: 1024,
      areas: { hotspot: createHotspotRoutes({ storeOf: () => undefined, catalogue: defaultCatalogue(), timezone: 'UTC' }) },
    });
    const doc = (await (await app.request('/svc/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
    const want: Array<[string, string]> = [
      ['post', '/auth'],
      ['get', '/historical-sessions'],
      ['get', '/online-sessions'],
      ['get', '/login-attempts'],
      ['get', '/quota-purchase-report'],
      ['get', '/users'],
      ['get', '/users/{userId}'],
      ['post', '/users'],
      ['post', '/users/{userId}'],
      ['delete', '/users/{userId}'],
      ['post', '/users/{userId}/actions/attach-profile'],
      ['post', '/users/{userId}/actions/detach-profile'],
      ['get', '/profiles'],
      ['get', '/profiles/{profileName}/users'],
      ['get', '/user-access'],
      ['get', '/user-access/{userId}'],
      ['post', '/user-access/{userId}/actions/attach-access'],
      ['post', '/user-access/{userId}/actions/detach-access'],
    ];
    for (const [method, path] of want) expect(doc.paths[`/svc/api/hotspot${path}`]?.[method], `${method} ${path}`).toBeDefined();
    // The extensions are netsvc's own (decisions.md, "Beyond 3.1.0"); everything else is the 3.1.0 contract.
    const extensions: Array<[string, string]> = [
      ['put', '/profiles/{profileName}'],
      ['get', '/profiles/{profileName}'],
      ['delete', '/profiles/{profileName}'],
      ['put', '/profiles/{profileName}/attributes/{attribute}'],
      ['delete', '/profiles/{profileName}/attributes/{attribute}'],
    ];
    const marked: Array<[string, string]> = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if ((op as Record<string, unknown>)['x-netsvc-extension'] === true)
          marked.push([method, path.replace('/svc/api/hotspot', '')]);
      }
    }
    expect(marked.sort()).toEqual(extensions.sort());
    const save = doc.paths['/svc/api/hotspot/profiles/{profileName}']?.put as any;
    expect(Object.keys(save.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401', '403', '415', '503']));
    const del = doc.paths['/svc/api/hotspot/profiles/{profileName}']?.delete as any;
    expect(Object.keys(del.responses)).toEqual(expect.arrayContaining(['200', '404', '409']));
  });
});

/** A loopback port nothing listens on: bound once by the OS, then closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(dialects)('hotspot API over a RADIUS database it cannot use, on %s', (dialect) => {
  const NOT_READY = {
    status: false,
    errorMessage: 'The RADIUS database is not ready: its tables are missing (netsvc db migrate).',
  };
  const UNREACHABLE = { status: false, errorMessage: 'The RADIUS database cannot be reached right now.' };
  const requests: Array<[string, string, unknown?]> = [
    ['GET', '/users'],
    ['GET', '/users/1'],
    ['POST', '/users', { username: 'bob', usertype: 'user', password: 'Secret-pw' }],
    ['POST', '/users/1', { username: 'bob2', email: 'bob@corp.test' }],
    ['POST', '/users/1/actions/attach-profile', { profileName: 'gold' }],
    ['GET', '/profiles'],
    ['GET', '/historical-sessions'],
    ['GET', '/online-sessions'],
    ['GET', '/login-attempts'],
    ['GET', '/quota-purchase-report'],
    ['GET', '/user-access/1'],
    // netsvc's extension routes
    ['PUT', '/profiles/gold', { description: 'Gold' }],
    ['GET', '/profiles/gold'],
    ['DELETE', '/profiles/gold'],
    ['PUT', '/profiles/gold/attributes/Session-Timeout', { value: 60 }],
    ['DELETE', '/profiles/gold/attributes/Session-Timeout'],
  ];

  /** Every request answers `expected` (503), and the operator hook hears why. */
  async function expectUnavailable(url: string, expected: typeof NOT_READY, code: string): Promise<void> {
    const store = radiusStoreFor(openSqlClient(url, '/'), { timeZone: 'UTC' });
    const heard: Array<{ entity: string; code: string; cause: unknown }> = [];
    const api = await startHotspotApi(store, {
      onStoreError: (entity, err) => heard.push({ entity, code: err.code, cause: err.cause }),
    });
    try {
      for (const [method, path, body] of requests) {
        expect(await api.call(method, path, body), `${method} ${path}`).toEqual({ status: 503, body: expected });
      }
      expect(heard).toHaveLength(requests.length);
      expect(heard[0]).toMatchObject({ entity: 'acme', code, cause: expect.any(Error) });
    } finally {
      await api.close();
      await store.close();
    }
  }

  it('answers 503 with a generic message on a database that was never migrated (no tables)', async () => {
    const db = await createTestDatabase(dialect, 'netsvc_radius_empty');
    try {
      await expectUnavailable(db.url, NOT_READY, 'schema_missing');
    } finally {
      await db.drop();
    }
  });

  // Only for database servers: SQLite has none, and a file that cannot be opened fails at start-up
  // (openSqlClient), not per request. Not registered at all for SQLite, so no run reports a skip.
  if (dialect !== 'sqlite') {
    it('answers 503 with a generic message when the database does not exist or nothing listens on its port', async () => {
      const admin = dialect === 'mysql' ? MYSQL_ADMIN_URL : POSTGRES_ADMIN_URL;
      const scheme = dialect === 'mysql' ? 'mysql' : 'postgres';
      await expectUnavailable(`${admin}/netsvc_missing_${randomBytes(4).toString('hex')}`, UNREACHABLE, 'unavailable');
      await expectUnavailable(`${scheme}://netsvc:pw@127.0.0.1:${await closedPort()}/radius`, UNREACHABLE, 'unavailable');
    });
  }
});
