/** `netsvc db migrate` on empty MariaDB and PostgreSQL databases: what it says, and `--create-peer-tables`. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { runCliCaptured } from '../../helpers/cli.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../../helpers/databases.js';

const servers = (await availableDialects()).filter((d) => d !== 'sqlite');

async function rowCount(url: string, table: string): Promise<number> {
  const c = openSqlClient(url, '/');
  try {
    const [row] = await c.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number(row!.n);
  } finally {
    await c.close();
  }
}

describe.each(servers)('netsvc db migrate on an empty %s database', (dialect) => {
  const dbs: TestDatabase[] = [];
  let dir: string;
  let radius: TestDatabase;
  let syslog: TestDatabase;
  const cli = (file: string, ...args: string[]) => runCliCaptured([...args, '--config', join(dir, file)]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-dbmigrate-'));
    radius = await createTestDatabase(dialect, 'netsvc_migrate_radius');
    syslog = await createTestDatabase(dialect, 'netsvc_migrate_syslog');
    dbs.push(radius, syslog);
    const write = (file: string, entities: object) =>
      writeFileSync(join(dir, file), JSON.stringify({ dataDir: dir, flowSources: {}, entities }));
    write('both.json', { site: { radius: radius.url, syslog: syslog.url } });
    write('syslog-only.json', { logs: { syslog: syslog.url } });
  });

  afterAll(async () => {
    for (const db of dbs) await db.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("without the flag, names the flag that creates FreeRADIUS's tables and where Debian keeps its own schema", async () => {
    const r = await cli('both.json', 'db', 'migrate');
    expect(r.code).toBe(1);
    const debianDir = dialect === 'mysql' ? 'mysql' : 'postgresql';
    expect(r.err).toContain("FreeRADIUS's tables are missing (no radcheck): run netsvc db migrate --create-peer-tables");
    expect(r.err).toContain(`/etc/freeradius/3.0/mods-config/sql/main/${debianDir}/schema.sql`);
    expect(r.err).not.toMatch(/createFreeradiusTables/);
  });

  it('without the flag, says that rsyslog creates no SystemEvents and how to make it', async () => {
    const r = await cli('syslog-only.json', 'db', 'migrate');
    expect(r.code).toBe(1);
    expect(r.err).toContain('no SystemEvents table (rsyslog does not create it): run netsvc db migrate --create-peer-tables');
    expect(r.err).toContain(dialect === 'mysql' ? 'rsyslog-mysql/install/mysql' : 'rsyslog-pgsql/install/pgsql');
  });

  it("with --create-peer-tables, creates FreeRADIUS's, netsvc's and rsyslog's tables, and a second run finds them", async () => {
    const first = await cli('both.json', 'db', 'migrate', '--create-peer-tables');
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/radius site .*FreeRADIUS tables created.*created netsvc_userinfo/);
    expect(first.out).toMatch(/syslog site .*rsyslog's SystemEvents tables created/);
    for (const table of ['radcheck', 'radreply', 'radusergroup', 'radacct', 'radpostauth', 'nas', 'netsvc_userinfo']) {
      expect(await rowCount(radius.url, table)).toBe(0);
    }
    expect(await rowCount(syslog.url, 'SystemEvents')).toBe(0);
    const again = await cli('both.json', 'db', 'migrate', '--create-peer-tables');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/radius site .*netsvc tables already there/);
    expect(again.out).toMatch(/syslog site .*SystemEvents already there/);
    // Without the flag now: nothing is missing, nothing to say but that.
    const plain = await cli('syslog-only.json', 'db', 'migrate');
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(/syslog logs .*SystemEvents already there/);
  });
});
