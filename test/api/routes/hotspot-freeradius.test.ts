/**
 * Acceptance of the hotspot area end to end: users, profiles and attributes
 * made through the HTTP API, judged by a real FreeRADIUS 3.2 on the same
 * database; accounting and post-auth sent to that FreeRADIUS with radclient
 * and radtest, read back through the API's reports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeradiusDialects, startFreeradius, type FreeradiusInstance } from '../../helpers/freeradius.js';
import { startHotspotApi, type HotspotApi } from '../../helpers/hotspot-api.js';
import { createRadiusDatabase, profileAttribute, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await freeradiusDialects();
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

describe.skipIf(!dialects.length)('hotspot API with a real FreeRADIUS', () => {
  describe.each(dialects)('on %s', (dialect) => {
    let t: RadiusTestDatabase;
    let api: HotspotApi;
    let radius: FreeradiusInstance;
    const call = (method: string, path: string, body?: unknown) => api.call(method, path, body);
    const createUser = async (body: Record<string, unknown>): Promise<string> => {
      const res = await call('POST', '/users', body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.result.id as string;
    };
    const attach = async (id: string, attributes: Array<{ attribute: string; value: string | number }>) => {
      const res = await call('POST', `/user-access/${id}/actions/attach-access`, { attributes });
      expect(res.body.details.errors).toEqual([]);
    };
    const profileAttr = async (profile: string, name: string, value: number) => {
      await t.store.setProfileAttribute(profile, profileAttribute(name, value));
    };

    beforeAll(async () => {
      t = await createRadiusDatabase(dialect, { timeZone: zone });
      api = await startHotspotApi(t.store, { timezone: zone });
      radius = await startFreeradius(t.db.url);
      await t.raw.execute(
        "INSERT INTO nas (nasname, shortname, type, secret) VALUES ('127.0.0.1', 'nas-1', 'other', 'testing123')",
      );
      // Profiles come from the CLI or another tool; the API attaches them.
      await t.store.saveProfile('gold', 'gold plan');
      await profileAttr('gold', 'Session-Timeout', 7200);
      await profileAttr('gold', 'Idle-Timeout', 600);
      await profileAttr('gold', 'WISPr-Bandwidth-Max-Down', 4096);
      await t.store.saveProfile('quota10', '10 MB a day');
      await profileAttr('quota10', 'Max-Daily-Octets', 10);
    });

    afterAll(async () => {
      await radius?.stop();
      await api?.close();
      await t?.close();
    });

    it('user: Access-Accept with its password, Access-Reject with a wrong one', async () => {
      await createUser({ username: 'alice', usertype: 'user', password: 'Open-Sesame' });
      expect((await radius.radtest('alice', 'Open-Sesame')).code).toBe('Access-Accept');
      expect((await radius.radtest('alice', 'open-sesame')).code).toBe('Access-Reject');
    });

    it('mac and pin users authenticate', async () => {
      await createUser({ username: '02:00:00:00:00:aa', usertype: 'mac' });
      const mac = await radius.radclient('auth', {
        'User-Name': '02-00-00-00-00-AA',
        'User-Password': '02-00-00-00-00-AA',
        'Calling-Station-Id': '02-00-00-00-00-AA',
        'NAS-IP-Address': '127.0.0.1',
      });
      expect(mac.code).toBe('Access-Accept');
      await createUser({ username: '007007', usertype: 'pin' });
      expect((await radius.radtest('007007', '007007')).code).toBe('Access-Accept');
    });

    it('disabled: true rejects, disabled: false accepts again', async () => {
      const id = await createUser({ username: 'bob', usertype: 'user', password: 'bob-pw' });
      expect((await call('POST', `/users/${id}`, { disabled: true })).body.result[0].disabled).toBe(true);
      expect((await radius.radtest('bob', 'bob-pw')).code).toBe('Access-Reject');
      await call('POST', `/users/${id}`, { disabled: false });
      expect((await radius.radtest('bob', 'bob-pw')).code).toBe('Access-Accept');
    });

    it("an attached profile's reply attributes arrive; a user-level attribute overrides the profile's", async () => {
      const id = await createUser({ username: 'carol', usertype: 'user', password: 'carol-pw' });
      expect((await call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'gold' })).status).toBe(200);
      let reply = await radius.radtest('carol', 'carol-pw');
      expect(reply.attributes).toMatchObject({
        'Session-Timeout': ['7200'],
        'Idle-Timeout': ['600'],
        'WISPr-Bandwidth-Max-Down': ['4096000'],
      });
      await attach(id, [
        { attribute: 'Session-Timeout', value: 1800 },
        { attribute: 'WISPr-Bandwidth-Max-Down', value: '1024' },
      ]);
      reply = await radius.radtest('carol', 'carol-pw');
      expect(reply.attributes).toMatchObject({
        'Session-Timeout': ['1800'],
        'Idle-Timeout': ['600'],
        'WISPr-Bandwidth-Max-Down': ['1024000'],
      });
      await call('POST', `/user-access/${id}/actions/detach-access`, { attribute: 'Session-Timeout' });
      expect((await radius.radtest('carol', 'carol-pw')).attributes['Session-Timeout']).toEqual(['7200']);
    });

    it('a profile made through the API (netsvc extension) reaches an attached user, and stops when deleted', async () => {
      expect((await call('PUT', '/profiles/made-by-api', { description: 'made over HTTP' })).status).toBe(201);
      const set = async (attribute: string, value: number) => {
        const res = await call('PUT', `/profiles/made-by-api/attributes/${attribute}`, { value });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      };
      await set('Session-Timeout', 3000);
      await set('WISPr-Bandwidth-Max-Up', 512);
      const id = await createUser({ username: 'hal', usertype: 'user', password: 'hal-pw' });
      expect((await call('POST', `/users/${id}/actions/attach-profile`, { profileName: 'made-by-api' })).status).toBe(200);
      const reply = await radius.radtest('hal', 'hal-pw');
      expect(reply.code).toBe('Access-Accept');
      expect(reply.attributes).toMatchObject({ 'Session-Timeout': ['3000'], 'WISPr-Bandwidth-Max-Up': ['512000'] });
      expect((await call('DELETE', '/profiles/made-by-api')).status).toBe(409);
      await call('POST', `/users/${id}/actions/detach-profile`, { profileName: 'made-by-api' });
      expect((await call('DELETE', '/profiles/made-by-api')).status).toBe(200);
      const after = await radius.radtest('hal', 'hal-pw');
      expect(after.code).toBe('Access-Accept');
      expect(after.attributes['Session-Timeout']).toBeUndefined();
      expect(after.attributes['WISPr-Bandwidth-Max-Up']).toBeUndefined();
    });

    it('Simultaneous-Use 1 rejects a second login while accounting shows a session open', async () => {
      const id = await createUser({ username: 'dave', usertype: 'user', password: 'dave-pw' });
      await attach(id, [{ attribute: 'Simultaneous-Use', value: 1 }]);
      const s = { 'User-Name': 'dave', 'Acct-Session-Id': 'dave-1', 'NAS-IP-Address': '127.0.0.1', 'NAS-Port': 2 };
      await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...s });
      expect((await call('GET', '/online-sessions?username=dave')).body.result).toHaveLength(1);
      const second = await radius.radtest('dave', 'dave-pw');
      expect(second.code).toBe('Access-Reject');
      await radius.radclient('acct', { 'Acct-Status-Type': 'Stop', ...s, 'Acct-Session-Time': 10 });
      expect((await radius.radtest('dave', 'dave-pw')).code).toBe('Access-Accept');
    });

    it('a data quota stops a user whose accounting exceeds it', async () => {
      const id = await createUser({ username: 'erin', usertype: 'user', password: 'erin-pw', profiles: 'quota10' });
      expect((await radius.radtest('erin', 'erin-pw')).code).toBe('Access-Accept');
      const s = { 'User-Name': 'erin', 'Acct-Session-Id': 'erin-1', 'NAS-IP-Address': '127.0.0.1', 'NAS-Port': 3 };
      await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...s });
      await radius.radclient('acct', {
        'Acct-Status-Type': 'Interim-Update',
        ...s,
        'Acct-Session-Time': 60,
        'Acct-Input-Octets': 8_000_000,
        'Acct-Output-Octets': 4_000_000,
      });
      const stopped = await radius.radtest('erin', 'erin-pw');
      expect(stopped.code).toBe('Access-Reject');
      expect(stopped.attributes['Reply-Message']).toEqual(['Your daily data quota has been used up']);
      // The user's own, larger quota wins over the profile's.
      await attach(id, [{ attribute: 'Max-Daily-Octets', value: 100 }]);
      expect((await radius.radtest('erin', 'erin-pw')).code).toBe('Access-Accept');
    });

    it('deleting the user makes FreeRADIUS reject it', async () => {
      const id = await createUser({ username: 'fred', usertype: 'user', password: 'fred-pw' });
      expect((await radius.radtest('fred', 'fred-pw')).code).toBe('Access-Accept');
      expect((await call('DELETE', `/users/${id}`)).status).toBe(200);
      expect((await radius.radtest('fred', 'fred-pw')).code).toBe('Access-Reject');
    });

    it('accounting Start/Interim/Stop shows in online-sessions, then historical-sessions, with the right fields', async () => {
      await createUser({ username: 'gina', usertype: 'user', password: 'gina-pw', firstname: 'Gina', lastname: 'Ray' });
      const s = {
        'User-Name': 'gina',
        'Acct-Session-Id': 'gina-0001',
        'Framed-IP-Address': '10.10.0.23',
        'Calling-Station-Id': 'aa:bb:cc:dd:ee:30',
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
        'Acct-Input-Octets': 1048576,
        'Acct-Output-Octets': 524288,
      });
      const online = await call('GET', '/online-sessions?macaddress=AA-BB-CC-DD-EE-30');
      expect(online.body.result).toEqual([
        {
          radacctid: expect.any(Number),
          hotspot: 'nas-1',
          username: 'gina',
          nas: '127.0.0.1',
          macaddress: 'AA-BB-CC-DD-EE-30',
          calledstationid: '00-11-22-33-44-55',
          ipaddress: '10.10.0.23',
          starttime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          traffic: '1.50 MB',
          name: 'Gina Ray',
          totaltime: expect.stringMatching(/^00:0[0-2]:\d\d$/),
        },
      ]);
      expect((await call('GET', '/historical-sessions?username=gina')).body.result[0].acctstoptime).toBeNull();
      await radius.radclient('acct', {
        'Acct-Status-Type': 'Stop',
        ...s,
        'Acct-Session-Time': 125,
        'Acct-Input-Octets': 705032704,
        'Acct-Input-Gigawords': 1,
        'Acct-Output-Octets': 3000,
        'Acct-Terminate-Cause': 'User-Request',
      });
      expect((await call('GET', '/online-sessions?username=gina')).body.result).toEqual([]);
      const hist = await call('GET', '/historical-sessions?username=gina&calledstationid=00:11:22:33:44:55');
      expect(hist.body.result).toEqual([
        {
          radacctid: online.body.result[0].radacctid,
          hotspot: 'nas-1',
          username: 'gina',
          macaddress: 'AA-BB-CC-DD-EE-30',
          ipaddress: '10.10.0.23',
          acctstarttime: online.body.result[0].starttime,
          acctstoptime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
          acctsessiontime: 125,
          calledstationid: '00-11-22-33-44-55',
          acctinputoctets: 5_000_000_000,
          acctoutputoctets: 3000,
          acctterminatecause: 'User-Request',
          nas: '127.0.0.1',
        },
      ]);
    });

    it('login attempts show accepts and rejects with the password masked', async () => {
      const res = await call('GET', '/login-attempts?username=alice');
      expect(res.body.result.map((a: { reply: string; pass: string }) => [a.reply, a.pass])).toEqual([
        ['Access-Reject', '********'],
        ['Access-Accept', '********'],
      ]);
      expect(res.body.result[0].authdate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(JSON.stringify(res.body)).not.toMatch(/sesame/i);
      const raw = await t.raw.query("SELECT pass FROM radpostauth WHERE username = 'alice' ORDER BY id");
      expect(raw.map((r) => r.pass)).toEqual(['Open-Sesame', 'open-sesame']);
    });
  });
});
