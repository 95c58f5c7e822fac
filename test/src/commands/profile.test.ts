/** `netsvc profile …` on a FreeRADIUS database of every backend. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../helpers/cli.js';
import { availableDialects, createTestDatabase } from '../../helpers/databases.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await availableDialects();

describe.each(dialects)('netsvc profile on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let dir: string;
  let config: string;
  const cli = (...args: string[]) => runCliCaptured([...args, '--config', config]);

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect);
    dir = mkdtempSync(join(tmpdir(), 'netsvc-profile-'));
    config = join(dir, 'netsvc.config.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, flowSources: {}, entities: { site: { radius: t.db.url } } }));
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('adds a profile with Fall-Through = Yes and sets attributes in catalogue units with the user-wins operators', async () => {
    expect((await cli('profile', 'add', 'gold', '--description', 'Gold plan')).code).toBe(0);
    // The stored value in FreeRADIUS's unit, and the catalogue's beside it.
    const down = await cli('profile', 'set', 'gold', 'WISPr-Bandwidth-Max-Down', '2048');
    expect(down.out).toBe('profile gold: added WISPr-Bandwidth-Max-Down = 2048000 (2048 Kbps)');
    expect(down.err).toBe('');
    // An attribute only netsvc's dictionary defines: accepted, with what FreeRADIUS needs first.
    const daily = await cli('profile', 'set', 'gold', 'Max-Daily-Octets', '100');
    expect(daily.out).toContain(`added Max-Daily-Octets += ${100 * 1048576} (100 MB)`);
    expect(daily.err).toMatch(
      /^note: Max-Daily-Octets is defined by netsvc's dictionary \(radius\/dictionary\.netsvc\), not by FreeRADIUS's own/,
    );
    const reply = await t.raw.query<{ attribute: string; op: string; value: string }>(
      "SELECT attribute, op, value FROM radgroupreply WHERE groupname = 'gold' ORDER BY attribute",
    );
    expect(reply).toEqual([
      { attribute: 'Fall-Through', op: '=', value: 'Yes' },
      { attribute: 'WISPr-Bandwidth-Max-Down', op: '=', value: '2048000' },
    ]);
    const check = await t.raw.query("SELECT attribute, op FROM radgroupcheck WHERE groupname = 'gold'");
    expect(check).toEqual([{ attribute: 'Max-Daily-Octets', op: '+=' }]);
    const described = await cli('profile', 'describe', 'gold');
    expect(described.out).toContain('profile gold: Gold plan (0 members)');
    expect(described.out).toContain('2048 Kbps');
    expect(described.out).not.toContain('warning');
    expect((await cli('profile', 'unset', 'gold', 'Max-Daily-Octets')).out).toContain('removed Max-Daily-Octets');
    expect(await t.raw.query("SELECT attribute FROM radgroupcheck WHERE groupname = 'gold'")).toEqual([]);
    expect((await cli('profile', 'unset', 'gold', 'WISPr-Bandwidth-Max-Down')).code).toBe(0);
    // Fall-Through stays: the profile still lets the user's later profiles apply.
    expect(await t.raw.query("SELECT attribute, op, value FROM radgroupreply WHERE groupname = 'gold'")).toEqual([
      { attribute: 'Fall-Through', op: '=', value: 'Yes' },
    ]);
  });

  it('describes a profile made elsewhere with warnings about the rows that override users', async () => {
    await t.raw.execute(
      "INSERT INTO radgroupreply (groupname, attribute, op, value) VALUES ('dalo', 'Session-Timeout', ':=', '7200')",
    );
    await t.raw.execute(
      "INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ('dalo', 'Simultaneous-Use', ':=', '1')",
    );
    const out = (await cli('profile', 'describe', 'dalo')).out;
    expect(out).toMatch(/no 'Fall-Through = Yes'/);
    expect(out).toMatch(/reply Session-Timeout uses ':='/);
    expect(out).toMatch(/check Simultaneous-Use uses ':='/);
    expect((await cli('profile', 'list')).out.split('\n')).toEqual(expect.arrayContaining(['dalo', 'gold\tGold plan']));
  });

  it('deletes a profile with its attributes, and refuses one users are attached to, naming what to do', async () => {
    expect((await cli('profile', 'add', 'bronze')).code).toBe(0);
    expect((await cli('profile', 'set', 'bronze', 'Session-Timeout', '3600')).code).toBe(0);
    await t.raw.execute("INSERT INTO radusergroup (username, groupname, priority) VALUES ('ann', 'bronze', 1)");
    expect(await cli('profile', 'delete', 'bronze')).toMatchObject({
      code: 1,
      err: "netsvc: Profile 'bronze' is attached to 1 user: detach it from that user first.",
    });
    expect(await t.raw.query("SELECT attribute FROM radgroupreply WHERE groupname = 'bronze' ORDER BY attribute")).toEqual([
      { attribute: 'Fall-Through' },
      { attribute: 'Session-Timeout' },
    ]);
    await t.raw.execute("DELETE FROM radusergroup WHERE groupname = 'bronze'");
    const gone = await cli('profile', 'delete', 'bronze');
    expect(gone).toMatchObject({ code: 0, err: '' });
    expect(gone.out).toMatch(/^profile bronze deleted \(\d+ rows\)/);
    for (const table of ['radgroupcheck', 'radgroupreply', 'netsvc_profile']) {
      expect(await t.raw.query(`SELECT groupname FROM ${table} WHERE groupname = 'bronze'`), table).toEqual([]);
    }
    expect(await cli('profile', 'delete', 'bronze')).toMatchObject({ code: 1, err: "netsvc: Profile 'bronze' not found." });
    // The disabled-users group is not a profile: never deleted from here, even with no member.
    await t.raw.execute(
      "INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ('daloRADIUS-Disabled-Users', 'Auth-Type', ':=', 'Reject')",
    );
    expect(await cli('profile', 'delete', 'daloRADIUS-Disabled-Users')).toMatchObject({
      code: 1,
      err: "netsvc: Profile 'daloRADIUS-Disabled-Users' not found.",
    });
    expect(await t.raw.query("SELECT value FROM radgroupcheck WHERE groupname = 'daloRADIUS-Disabled-Users'")).toEqual([
      { value: 'Reject' },
    ]);
  });

  it('fails with one line for unknown profiles, attributes, bad values and names', async () => {
    expect(await cli('profile', 'describe', 'nope')).toMatchObject({ code: 1, err: "netsvc: Profile 'nope' not found." });
    expect((await cli('profile', 'set', 'gold', 'No-Such-Attr', '1')).code).toBe(2);
    expect(await cli('profile', 'set', 'gold', 'Session-Timeout', 'abc')).toMatchObject({ code: 2 });
    expect((await cli('profile', 'add', "bad'; DROP TABLE radcheck;--")).code).toBe(2);
    expect((await cli('profile', 'add', 'daloRADIUS-Disabled-Users')).code).toBe(1);
  });

  it('fails with one line naming what is missing on a database that was never migrated', async () => {
    const empty = await createTestDatabase(dialect, 'netsvc_radius_empty');
    const emptyConfig = join(dir, 'empty.config.json');
    writeFileSync(emptyConfig, JSON.stringify({ dataDir: dir, flowSources: {}, entities: { site: { radius: empty.url } } }));
    try {
      const res = await runCliCaptured(['profile', 'list', '--config', emptyConfig]);
      expect(res.code).toBe(1);
      expect(res.err).toMatch(
        /^netsvc: the RADIUS database lacks table\(s\) radcheck, .*netsvc_userinfo.*: run netsvc db migrate --create-peer-tables \(/,
      );
    } finally {
      await empty.drop();
    }
  });
});
