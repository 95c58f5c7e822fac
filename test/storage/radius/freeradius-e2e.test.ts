/**
 * What the store writes, judged by a real FreeRADIUS 3.2 reading the same
 * database: authentication, disabled users, profile and user attributes,
 * Simultaneous-Use, data quotas, deletion, and the reports over the rows
 * FreeRADIUS itself writes for accounting and post-auth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RadiusStore } from '../../../storage/radius/radius-store.js';
import { freeradiusDialects, startFreeradius, type FreeradiusInstance } from '../../helpers/freeradius.js';
import { createRadiusDatabase, profileAttribute, userAttribute, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await freeradiusDialects();
const actor = { name: 'e2e' };
const page = { page: 1, perPage: 100 };
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

describe.skipIf(!dialects.length)('FreeRADIUS 3.2 acts on what the store writes', () => {
  describe.each(dialects)('on %s', (dialect) => {
    let t: RadiusTestDatabase;
    let store: RadiusStore;
    let radius: FreeradiusInstance;

    const create = async (username: string, extra: Record<string, unknown> = {}) =>
      Number((await store.createUser({ username, usertype: 'user', password: `${username}-pw`, ...extra }, actor)).id);

    beforeAll(async () => {
      t = await createRadiusDatabase(dialect, { timeZone: zone });
      store = t.store;
      radius = await startFreeradius(t.db.url);
      await t.raw.execute(
        "INSERT INTO nas (nasname, shortname, type, secret) VALUES ('127.0.0.1', 'nas-1', 'other', 'testing123')",
      );
    });

    afterAll(async () => {
      await radius?.stop();
      await t?.close();
    });

    it('accepts a created user with its password and rejects a wrong one', async () => {
      await create('alice');
      expect((await radius.radtest('alice', 'alice-pw')).code).toBe('Access-Accept');
      expect((await radius.radtest('alice', 'wrong')).code).toBe('Access-Reject');
    });

    it('accepts a mac user by its MAC and a pin user by its pin', async () => {
      await store.createUser({ username: 'aa:bb:cc:dd:ee:10', usertype: 'mac' }, actor);
      const mac = await radius.radclient('auth', {
        'User-Name': 'AA-BB-CC-DD-EE-10',
        'User-Password': 'AA-BB-CC-DD-EE-10',
        'Calling-Station-Id': 'AA-BB-CC-DD-EE-10',
        'Service-Type': 'Call-Check',
        'NAS-IP-Address': '127.0.0.1',
      });
      expect(mac.code).toBe('Access-Accept');
      await store.createUser({ username: '483920', usertype: 'pin' }, actor);
      expect((await radius.radtest('483920', '483920')).code).toBe('Access-Accept');
    });

    it('rejects a disabled user and accepts it again once enabled', async () => {
      const id = await create('bob');
      await store.updateUser(id, { disabled: true }, actor);
      expect((await radius.radtest('bob', 'bob-pw')).code).toBe('Access-Reject');
      await store.updateUser(id, { disabled: false }, actor);
      expect((await radius.radtest('bob', 'bob-pw')).code).toBe('Access-Accept');
    });

    it("sends every attached profile's reply attributes, and a user's own value beats the profile's", async () => {
      await store.saveProfile('gold', 'gold plan');
      await store.setProfileAttribute('gold', profileAttribute('Session-Timeout', 7200));
      await store.setProfileAttribute('gold', profileAttribute('Idle-Timeout', 600));
      await store.saveProfile('extras', 'second profile');
      await store.setProfileAttribute('extras', profileAttribute('Acct-Interim-Interval', 300));
      await store.setProfileAttribute('extras', profileAttribute('Idle-Timeout', 900));
      const id = await create('carol', { profiles: ['gold', 'extras'] });
      let reply = await radius.radtest('carol', 'carol-pw');
      expect(reply.code).toBe('Access-Accept');
      expect(reply.attributes).toMatchObject({
        'Session-Timeout': ['7200'],
        'Idle-Timeout': ['600'],
        'Acct-Interim-Interval': ['300'],
      });
      await store.setUserAttributes(
        id,
        [userAttribute('Session-Timeout', 3600), userAttribute('Acct-Interim-Interval', 60)],
        actor,
      );
      reply = await radius.radtest('carol', 'carol-pw');
      expect(reply.attributes).toMatchObject({
        'Session-Timeout': ['3600'],
        'Idle-Timeout': ['600'],
        'Acct-Interim-Interval': ['60'],
      });
      expect(reply.attributes['Fall-Through']).toBeUndefined();
    });

    it('Simultaneous-Use 1 rejects a second login while accounting shows a session open', async () => {
      const id = await create('dave');
      await store.setUserAttributes(id, [userAttribute('Simultaneous-Use', 1)], actor);
      expect((await radius.radtest('dave', 'dave-pw')).code).toBe('Access-Accept');
      const session = { 'User-Name': 'dave', 'Acct-Session-Id': 'dave-1', 'NAS-IP-Address': '127.0.0.1', 'NAS-Port': 9 };
      expect((await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...session })).code).toBe('Accounting-Response');
      const second = await radius.radtest('dave', 'dave-pw');
      expect(second.code).toBe('Access-Reject');
      expect(second.attributes['Reply-Message']).toEqual(['You are already logged in - access denied']);
      await radius.radclient('acct', { 'Acct-Status-Type': 'Stop', ...session, 'Acct-Session-Time': 5 });
      expect((await radius.radtest('dave', 'dave-pw')).code).toBe('Access-Accept');
    });

    it("a profile's Simultaneous-Use applies to its users, and a user's own value beats it", async () => {
      await store.saveProfile('single', 'one device');
      await store.setProfileAttribute('single', profileAttribute('Simultaneous-Use', 1));
      const idOwn = await create('erin', { profiles: ['single'] });
      await store.setUserAttributes(idOwn, [userAttribute('Simultaneous-Use', 2)], actor);
      await create('fay', { profiles: ['single'] });
      for (const u of ['erin', 'fay']) {
        await radius.radclient('acct', {
          'Acct-Status-Type': 'Start',
          'User-Name': u,
          'Acct-Session-Id': `${u}-1`,
          'NAS-IP-Address': '127.0.0.1',
          'NAS-Port': 3,
        });
      }
      expect((await radius.radtest('fay', 'fay-pw')).code).toBe('Access-Reject');
      expect((await radius.radtest('erin', 'erin-pw')).code).toBe('Access-Accept');
    });

    it('a data quota stops a user whose accounting exceeds it; a user quota beats the profile quota', async () => {
      await store.saveProfile('tiny', '10 MB a day');
      await store.setProfileAttribute('tiny', profileAttribute('Max-Daily-Octets', 10));
      await create('gus', { profiles: ['tiny'] });
      const hal = await create('hal', { profiles: ['tiny'] });
      await store.setUserAttributes(hal, [userAttribute('Max-Daily-Octets', 100)], actor);
      const ivy = await create('ivy');
      await store.setUserAttributes(ivy, [userAttribute('Max-Total-Octets', 5000)], actor);
      for (const u of ['gus', 'hal', 'ivy']) expect((await radius.radtest(u, `${u}-pw`)).code).toBe('Access-Accept');
      for (const u of ['gus', 'hal']) {
        const s = { 'User-Name': u, 'Acct-Session-Id': `${u}-q`, 'NAS-IP-Address': '127.0.0.1', 'NAS-Port': 4 };
        await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...s });
        await radius.radclient('acct', {
          'Acct-Status-Type': 'Interim-Update',
          ...s,
          'Acct-Session-Time': 30,
          'Acct-Input-Octets': 6_000_000,
          'Acct-Output-Octets': 5_000_000,
        });
      }
      // 5 GB used of 5000 MB: the total counter is 64-bit.
      await radius.radclient('acct', {
        'Acct-Status-Type': 'Stop',
        'User-Name': 'ivy',
        'Acct-Session-Id': 'ivy-q',
        'NAS-IP-Address': '127.0.0.1',
        'NAS-Port': 5,
        'Acct-Session-Time': 60,
        'Acct-Input-Octets': 1_073_741_824,
        'Acct-Input-Gigawords': 1,
      });
      const gus = await radius.radtest('gus', 'gus-pw');
      expect(gus.code).toBe('Access-Reject');
      // A data quota says so, not sqlcounter's "maximum daily usage time" (radius/policy.d/netsvc).
      expect(gus.attributes['Reply-Message']).toEqual(['Your daily data quota has been used up']);
      expect((await radius.radtest('hal', 'hal-pw')).code).toBe('Access-Accept');
      const ivyReply = await radius.radtest('ivy', 'ivy-pw');
      expect(ivyReply.code).toBe('Access-Reject');
      expect(ivyReply.attributes['Reply-Message']).toEqual(['Your data quota has been used up']);
    });

    it('a time limit stops a user who has been online that long, and says it is about time', async () => {
      const id = await create('ike');
      await store.setUserAttributes(id, [userAttribute('Max-Daily-Session', 100)], actor);
      const first = await radius.radtest('ike', 'ike-pw');
      expect(first.code).toBe('Access-Accept');
      expect(first.attributes['Session-Timeout']).toEqual(['100']);
      const s = { 'User-Name': 'ike', 'Acct-Session-Id': 'ike-t', 'NAS-IP-Address': '127.0.0.1', 'NAS-Port': 6 };
      await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...s });
      await radius.radclient('acct', { 'Acct-Status-Type': 'Stop', ...s, 'Acct-Session-Time': 100 });
      const stopped = await radius.radtest('ike', 'ike-pw');
      expect(stopped.code).toBe('Access-Reject');
      expect(stopped.attributes['Reply-Message']).toEqual(['Your maximum daily usage time has been reached']);
    });

    it('rejects a deleted user', async () => {
      const id = await create('jim');
      expect((await radius.radtest('jim', 'jim-pw')).code).toBe('Access-Accept');
      await store.deleteUser(id);
      expect((await radius.radtest('jim', 'jim-pw')).code).toBe('Access-Reject');
    });

    it('shows accounting Start/Interim as an online session and after Stop as a historical one', async () => {
      await create('kim', { firstname: 'Kim', lastname: 'Lee' });
      const s = {
        'User-Name': 'kim',
        'Acct-Session-Id': 'kim-0001',
        'Framed-IP-Address': '10.10.0.23',
        'Calling-Station-Id': 'aa:bb:cc:dd:ee:20',
        'Called-Station-Id': '00-11-22-33-44-55:Guest',
        'NAS-Identifier': 'nas-1',
        'NAS-IP-Address': '127.0.0.1',
        'NAS-Port': 7,
      };
      await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...s });
      await radius.radclient('acct', {
        'Acct-Status-Type': 'Interim-Update',
        ...s,
        'Acct-Session-Time': 60,
        'Acct-Input-Octets': 1024,
        'Acct-Output-Octets': 2048,
      });
      const [online] = await store.onlineSessions({ username: 'kim' }, page);
      expect(online).toMatchObject({
        username: 'kim',
        hotspot: 'nas-1',
        nas: '127.0.0.1',
        macaddress: 'AA-BB-CC-DD-EE-20',
        calledstationid: '00-11-22-33-44-55',
        ipaddress: '10.10.0.23',
        traffic: '3.00 KB',
        name: 'Kim Lee',
      });
      expect(online!.starttime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect((await store.onlineSessions({ macaddress: 'AABBCCDDEE20' }, page)).map((x) => x.username)).toEqual(['kim']);
      await radius.radclient('acct', {
        'Acct-Status-Type': 'Stop',
        ...s,
        'Acct-Session-Time': 125,
        'Acct-Input-Octets': 705032704,
        'Acct-Input-Gigawords': 1,
        'Acct-Output-Octets': 3000,
        'Acct-Terminate-Cause': 'User-Request',
      });
      expect(await store.onlineSessions({ username: 'kim' }, page)).toEqual([]);
      const [past] = await store.historicalSessions({ username: 'kim' }, page);
      expect(past).toMatchObject({
        username: 'kim',
        hotspot: 'nas-1',
        nas: '127.0.0.1',
        macaddress: 'AA-BB-CC-DD-EE-20',
        ipaddress: '10.10.0.23',
        acctsessiontime: 125,
        acctinputoctets: 5_000_000_000,
        acctoutputoctets: 3000,
        acctterminatecause: 'User-Request',
        acctstarttime: online!.starttime,
      });
      expect(past!.acctstoptime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    });

    it('lists login attempts, accepts and rejects, with the password masked', async () => {
      const list = await store.loginAttempts({ username: 'alice' }, page);
      expect(list.map((a) => [a.reply, a.pass])).toEqual([
        ['Access-Reject', '********'],
        ['Access-Accept', '********'],
      ]);
      expect((await store.loginAttempts({ username: 'alice', reply: 'Access-Accept' }, page)).length).toBe(1);
    });
  });
});
