/** `netsvc db migrate` and `netsvc db index radius` for the hotspot area. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { runCliCaptured } from '../../helpers/cli.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../../helpers/databases.js';
import { freeradiusSchemaStatements } from '../../../storage/radius/schema-files.js';

const dialects = await availableDialects();

describe('netsvc db migrate / db index radius', () => {
  const dbs: TestDatabase[] = [];
  let dir: string;
  let config: string;
  const cli = (...args: string[]) => runCliCaptured([...args, '--config', config]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-dbradius-'));
    const entities: Record<string, { radius: string }> = { embedded: { radius: 'sqlite:radius.sqlite' } };
    for (const d of dialects.filter((x) => x !== 'sqlite')) {
      const db = await createTestDatabase(d, 'netsvc_dbradius');
      dbs.push(db);
      const c = openSqlClient(db.url, '/');
      for (const stmt of freeradiusSchemaStatements(d)) await c.execute(stmt);
      await c.close();
      entities[`site-${d}`] = { radius: db.url };
    }
    config = join(dir, 'netsvc.config.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, flowSources: {}, entities }));
  });

  afterAll(async () => {
    for (const db of dbs) await db.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('migrate gives the embedded SQLite FreeRADIUS tables, adds netsvc tables everywhere, and is idempotent', async () => {
    const first = await cli('db', 'migrate');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(
      /radius embedded .*FreeRADIUS tables created.*created netsvc_userinfo, netsvc_profile, netsvc_quota_purchase/,
    );
    for (const d of dbs) expect(first.out).toMatch(new RegExp(`radius site-${d.dialect} .*created netsvc_userinfo`));
    const again = await cli('db', 'migrate');
    expect(again.out.match(/netsvc tables already there/g)).toHaveLength(1 + dbs.length);
  });

  it('index radius creates the report indexes once, then finds them', async () => {
    const first = await cli('db', 'index', 'radius');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/embedded .*created netsvc_radacct_user_start/);
    const again = await cli('db', 'index', 'radius', '--entity', 'embedded');
    expect(again.out).toMatch(/created nothing; already there: netsvc_radacct_user_start/);
    expect((await cli('db', 'index', 'radius', '--entity', 'nope')).code).toBe(2);
  });
});
