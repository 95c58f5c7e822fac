/**
 * The profile routes netsvc adds to API 3.1.0 (api/routes/hotspot/profile-settings.ts) over a
 * FreeRADIUS database on every backend: a profile made, read, given attributes, attached
 * through the 3.1.0 route, and deleted, with the rows FreeRADIUS reads checked on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRequiredMessages } from '../../../api/router.js';
import { availableDialects } from '../../helpers/databases.js';
import { startHotspotApi, type HotspotApi } from '../../helpers/hotspot-api.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';

// As `netsvc serve` does at start-up: an absent value is reported as missing.
useRequiredMessages();
const dialects = await availableDialects();

describe.each(dialects)('hotspot profile settings (netsvc extension) on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let api: HotspotApi;
  let patId: string;
  const call = (method: string, path: string, body?: unknown) => api.call(method, path, body);
  /** A request as a client could send it, with the token but body and headers as given. */
  const send = async (method: string, path: string, init: { body?: string; type?: string } = {}) => {
    const res = await fetch(`${api.url}/svc/api/hotspot${path}`, {
      method,
      headers: { authorization: `Bearer ${api.token}`, ...(init.type ? { 'content-type': init.type } : {}) },
      body: init.body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** A group's rows in one of FreeRADIUS's group tables, as `attribute op value`, in id order. */
  const groupRows = async (table: 'radgroupcheck' | 'radgroupreply', group: string) =>
    (
      await t.raw.query<Record<string, unknown>>(`SELECT attribute, op, value FROM ${table} WHERE groupname = ? ORDER BY id`, [
        group,
      ])
    ).map((r) => `${String(r.attribute)} ${String(r.op)} ${String(r.value)}`);

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { timeZone: 'UTC' });
    await t.store.saveProfile('silver', 'silver plan');
    api = await startHotspotApi(t.store);
  });

  afterAll(async () => {
    await api?.close();
    await t?.close();
  });

  it('creates a profile with Fall-Through = Yes (201), then changes its description (200)', async () => {
    expect(await call('PUT', '/profiles/gold', { description: 'Gold plan' })).toEqual({
      status: 201,
      body: { status: true, message: "Profile 'gold' created.", result: { groupname: 'gold', description: 'Gold plan' } },
    });
    expect(await groupRows('radgroupreply', 'gold')).toEqual(['Fall-Through = Yes']);
    expect(await call('PUT', '/profiles/gold', { description: 'Gold plan, 2026' })).toEqual({
      status: 200,
      body: { status: true, message: "Profile 'gold' saved.", result: { groupname: 'gold', description: 'Gold plan, 2026' } },
    });
    // No description: the stored one stays.
    const kept = await call('PUT', '/profiles/gold', {});
    expect(kept.status).toBe(200);
    expect(kept.body.result).toEqual({ groupname: 'gold', description: 'Gold plan, 2026' });
    expect(await groupRows('radgroupreply', 'gold')).toEqual(['Fall-Through = Yes']);
    const list = await call('GET', '/profiles');
    expect(list.body.result).toContainEqual({ groupname: 'gold', description: 'Gold plan, 2026' });
  });

  it('reads a profile: description, rows, member count, no warnings for one netsvc made', async () => {
    const res = await call('GET', '/profiles/gold');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: true,
      message: "Profile 'gold'.",
      result: {
        groupname: 'gold',
        description: 'Gold plan, 2026',
        members: 0,
        attributes: [
          {
            id: expect.any(String),
            table: 'reply',
            attribute: 'Fall-Through',
            op: '=',
            value: 'Yes',
            format: 'String',
            stored: 'Yes',
          },
        ],
        warnings: [],
        notes: [],
      },
    });
  });

  it('sets attributes in the catalogue unit and answers FreeRADIUS’s stored value beside it', async () => {
    const timeout = await call('PUT', '/profiles/gold/attributes/Session-Timeout', { value: 7200 });
    expect(timeout).toEqual({
      status: 200,
      body: {
        status: true,
        message: "Attribute 'Session-Timeout' set on profile 'gold'.",
        result: {
          groupname: 'gold',
          table: 'reply',
          attribute: 'Session-Timeout',
          op: '=',
          value: 7200,
          format: 'Seconds',
          stored: '7200',
          action: 'added',
          notes: [],
        },
      },
    });
    const down = await call('PUT', '/profiles/gold/attributes/WISPr-Bandwidth-Max-Down', { value: '4096' });
    expect(down.body.result).toMatchObject({ value: 4096, format: 'Kbps', stored: '4096000', op: '=', action: 'added' });
    // Names as FreeRADIUS's dictionary takes them, whatever the case; the answer spells the catalogue's.
    const quota = await call('PUT', '/profiles/gold/attributes/max-daily-octets', { value: 1024 });
    expect(quota.status).toBe(200);
    expect(quota.body.result).toMatchObject({
      attribute: 'Max-Daily-Octets',
      table: 'check',
      op: '+=',
      value: 1024,
      format: 'MB',
      stored: '1073741824',
    });
    expect(quota.body.result.notes).toEqual([
      expect.stringMatching(/^Max-Daily-Octets is defined by netsvc's dictionary .*netsvc_sqlcounter module/),
    ]);
    const again = await call('PUT', '/profiles/gold/attributes/Session-Timeout', { value: '7200' });
    expect(again.body.result.action).toBe('unchanged');
    const changed = await call('PUT', '/profiles/gold/attributes/Session-Timeout', { value: 3600 });
    expect(changed.body.result).toMatchObject({ action: 'updated', value: 3600, stored: '3600' });

    const read = await call('GET', '/profiles/gold');
    const shown = read.body.result.attributes.map(
      (a: any) => `${a.table} ${a.attribute} ${a.op} ${a.stored} = ${a.value} ${a.format}`,
    );
    expect(shown.sort()).toEqual(
      [
        'check Max-Daily-Octets += 1073741824 = 1024 MB',
        'reply Fall-Through = Yes = Yes String',
        'reply Session-Timeout = 3600 = 3600 Seconds',
        'reply WISPr-Bandwidth-Max-Down = 4096000 = 4096 Kbps',
      ].sort(),
    );
    expect(read.body.result.warnings).toEqual([]);
    expect(read.body.result.notes).toEqual(quota.body.result.notes);
  });

  it('a user attached through attach-profile gets the rows FreeRADIUS reads: reply =, check +=, Fall-Through', async () => {
    const created = await call('POST', '/users', { username: 'pat', usertype: 'user', password: 'Sesame-1' });
    expect(created.status).toBe(200);
    patId = created.body.result.id;
    const attached = await call('POST', `/users/${patId}/actions/attach-profile`, { profileName: 'gold' });
    expect(attached.body.result).toEqual({ username: 'pat', attached: 'gold', profile: 'gold' });
    const membership = await t.raw.query<Record<string, unknown>>(
      'SELECT groupname, priority FROM radusergroup WHERE username = ?',
      ['pat'],
    );
    expect(membership.map((r) => `${String(r.groupname)}:${Number(r.priority)}`)).toEqual(['gold:1']);
    expect(await groupRows('radgroupreply', 'gold')).toEqual([
      'Fall-Through = Yes',
      'Session-Timeout = 3600',
      'WISPr-Bandwidth-Max-Down = 4096000',
    ]);
    expect(await groupRows('radgroupcheck', 'gold')).toEqual(['Max-Daily-Octets += 1073741824']);
    expect((await call('GET', '/profiles/gold')).body.result.members).toBe(1);
    expect((await call('GET', '/profiles/gold/users')).body.result).toEqual([expect.objectContaining({ username: 'pat' })]);
  });

  it('removes one attribute; one not set is status true with nothing to do', async () => {
    expect(await call('DELETE', '/profiles/gold/attributes/Session-Timeout')).toEqual({
      status: 200,
      body: {
        status: true,
        message: "Attribute 'Session-Timeout' removed from profile 'gold'.",
        result: { groupname: 'gold', attribute: 'Session-Timeout', removed: 1 },
      },
    });
    expect(await call('DELETE', '/profiles/gold/attributes/Session-Timeout')).toEqual({
      status: 200,
      body: {
        status: true,
        message: "Attribute 'Session-Timeout' is not set on profile 'gold'; no action needed.",
        result: { groupname: 'gold', attribute: 'Session-Timeout', removed: 0 },
      },
    });
    expect(await groupRows('radgroupreply', 'gold')).toEqual(['Fall-Through = Yes', 'WISPr-Bandwidth-Max-Down = 4096000']);
  });

  it('refuses to delete a profile while users are attached (409, how many), deletes it once detached', async () => {
    expect(await call('DELETE', '/profiles/gold')).toEqual({
      status: 409,
      body: { status: false, errorMessage: "Profile 'gold' is attached to 1 user: detach it from that user first." },
    });
    expect(await groupRows('radgroupreply', 'gold')).toHaveLength(2);
    const detached = await call('POST', `/users/${patId}/actions/detach-profile`, { profileName: 'gold' });
    expect(detached.body.result).toEqual({ username: 'pat', detached: 'gold', profile: '' });
    expect(await call('DELETE', '/profiles/gold')).toEqual({
      status: 200,
      // Fall-Through, WISPr-Bandwidth-Max-Down, Max-Daily-Octets and the description.
      body: { status: true, message: "Profile 'gold' deleted.", result: { groupname: 'gold', rows: 4 } },
    });
    expect(await groupRows('radgroupreply', 'gold')).toEqual([]);
    expect(await groupRows('radgroupcheck', 'gold')).toEqual([]);
    expect(await t.raw.query("SELECT groupname FROM netsvc_profile WHERE groupname = 'gold'")).toEqual([]);
    const gone = { status: 404, body: { status: false, errorMessage: "Profile 'gold' not found." } };
    expect(await call('GET', '/profiles/gold')).toEqual(gone);
    expect(await call('DELETE', '/profiles/gold')).toEqual(gone);
    expect(await call('PUT', '/profiles/gold/attributes/Session-Timeout', { value: 60 })).toEqual(gone);
    expect(await call('DELETE', '/profiles/gold/attributes/Session-Timeout')).toEqual(gone);
    expect((await call('GET', '/profiles')).body.result).not.toContainEqual(expect.objectContaining({ groupname: 'gold' }));
  });

  it('answers 400 naming the parameter for a bad name, attribute, value or body, 415 for another content type', async () => {
    const bad = async (res: { status: number; body: any }, param: string, what: string) => {
      expect(res.status, what).toBe(400);
      expect(res.body.status, what).toBe(false);
      expect(res.body.errorMessage, what).toContain(param);
    };
    await bad(await call('PUT', '/profiles/bad%20name', {}), "'profileName'", 'space in the name');
    await bad(await call('PUT', "/profiles/x'y", {}), "'profileName'", 'quote in the name');
    await bad(await call('PUT', `/profiles/${'a'.repeat(65)}`, {}), "'profileName'", 'name too long');
    await bad(await call('GET', '/profiles/bad%20name'), "'profileName'", 'read with a bad name');
    await bad(await call('DELETE', '/profiles/bad%20name'), "'profileName'", 'delete with a bad name');
    await bad(await call('PUT', '/profiles/silver', { description: 'd'.repeat(501) }), "'description'", 'long description');
    await bad(await call('PUT', '/profiles/silver', { description: 7 }), "'description'", 'description not a string');
    await bad(await call('PUT', '/profiles/daloRADIUS-Disabled-Users', {}), 'reserved', 'the disabled-users group');

    const unknown = await call('PUT', '/profiles/silver/attributes/No-Such-Thing', { value: 1 });
    await bad(unknown, "'attribute'", 'unknown attribute');
    expect(unknown.body.errorMessage).toContain("'No-Such-Thing'");
    expect(unknown.body.errorMessage).toMatch(/known: Session-Timeout, Idle-Timeout, .*Reply-Message\)/);
    await bad(await call('DELETE', '/profiles/silver/attributes/No-Such-Thing'), "'No-Such-Thing'", 'unset unknown');
    // Fall-Through is netsvc's to manage, not a catalogue attribute.
    await bad(await call('DELETE', '/profiles/silver/attributes/Fall-Through'), "'attribute'", 'unset Fall-Through');

    const word = await call('PUT', '/profiles/silver/attributes/Session-Timeout', { value: 'soon' });
    expect(word).toEqual({
      status: 400,
      body: {
        status: false,
        errorMessage: "Invalid parameter 'value': Session-Timeout: value must be a non-negative number in Seconds.",
      },
    });
    await bad(await call('PUT', '/profiles/silver/attributes/Session-Timeout', { value: 0 }), 'between 1 and', 'below min');
    await bad(await call('PUT', '/profiles/silver/attributes/WISPr-Redirection-URL', { value: 'ftp://x' }), "'value'", 'bad URL');
    await bad(await call('PUT', '/profiles/silver/attributes/Reply-Message', { value: '"quoted"' }), "'value'", 'quoted');
    await bad(await call('PUT', '/profiles/silver/attributes/Session-Timeout', { value: true }), "'value'", 'boolean');
    expect(await call('PUT', '/profiles/silver/attributes/Session-Timeout', {})).toEqual({
      status: 400,
      body: { status: false, errorMessage: "Missing required parameter 'value'." },
    });
    expect((await send('PUT', '/profiles/silver/attributes/Session-Timeout')).status).toBe(400);
    // The profile's body is optional (`netsvc profile add NAME` needs none): none keeps the description.
    expect(await send('PUT', '/profiles/silver')).toEqual({
      status: 200,
      body: { status: true, message: "Profile 'silver' saved.", result: { groupname: 'silver', description: 'silver plan' } },
    });
    expect((await send('PUT', '/profiles/silver', { body: '{"description": ', type: 'application/json' })).status).toBe(400);

    const text = await send('PUT', '/profiles/silver/attributes/Session-Timeout', { body: 'value=60', type: 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.body.errorMessage).toContain('application/json');
    expect(
      (await send('PUT', '/profiles/silver', { body: 'description=x', type: 'application/x-www-form-urlencoded' })).status,
    ).toBe(415);
    // Nothing of the above was written.
    expect(await groupRows('radgroupreply', 'silver')).toEqual(['Fall-Through = Yes']);
    expect(await t.raw.query("SELECT description FROM netsvc_profile WHERE groupname = 'silver'")).toEqual([
      { description: 'silver plan' },
    ]);
  });

  it('answers 401 without a token, 403 for an entity without a RADIUS database', async () => {
    const requests: Array<[string, string]> = [
      ['PUT', '/profiles/silver'],
      ['GET', '/profiles/silver'],
      ['DELETE', '/profiles/silver'],
      ['PUT', '/profiles/silver/attributes/Session-Timeout'],
      ['DELETE', '/profiles/silver/attributes/Session-Timeout'],
    ];
    for (const [method, path] of requests) {
      const res = await fetch(`${api.url}/svc/api/hotspot${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'PUT' ? JSON.stringify({ value: 60 }) : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(((await res.json()) as any).errorMessage).toMatch(/^Token validation failed/);
    }
    expect((await api.callOther('GET', '/profiles/silver')).status).toBe(403);
    expect(await groupRows('radgroupreply', 'silver')).toEqual(['Fall-Through = Yes']);
  });
});
