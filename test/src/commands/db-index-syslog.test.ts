/** `netsvc db index syslog` against real SystemEvents tables on every database. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import type { SqlClient } from '../../../storage/sql/sql-client.js';
import { captureCli } from '../../helpers/cli.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../../helpers/databases.js';
import { clientFor, createSystemEvents } from '../../storage/syslog/system-events.js';

const dialects = await availableDialects();

/** Index names on SystemEvents, read from each database's catalogue. */
async function indexNames(client: SqlClient): Promise<string[]> {
  const sql = {
    sqlite: "SELECT name FROM pragma_index_list('SystemEvents')",
    mysql:
      "SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'SystemEvents' AND INDEX_NAME <> 'PRIMARY'",
    postgres: "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'systemevents' AND indexname <> 'systemevents_pkey'",
  }[client.dialect];
  return (await client.query<{ name: string }>(sql)).map((r) => r.name).sort();
}

describe('netsvc db index syslog', () => {
  const dbs: TestDatabase[] = [];
  const clients: SqlClient[] = [];
  let dir: string;
  let configFile: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-dbindex-'));
    const entities: Record<string, { syslog: string }> = {};
    for (const d of dialects) {
      const db = await createTestDatabase(d, 'netsvc_dbindex');
      dbs.push(db);
      const client = clientFor(db.url);
      clients.push(client);
      await createSystemEvents(client);
      entities[`site-${d}`] = { syslog: db.url };
    }
    entities['fresh'] = { syslog: 'sqlite:not-yet.sqlite' };
    configFile = join(dir, 'netsvc.config.json');
    writeFileSync(configFile, JSON.stringify({ dataDir: dir, flowSources: {}, entities }));
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const db of dbs) await db.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates the four indexes on every entity, then finds them there, then drops them', async () => {
    const ctx = captureCli();
    expect(await runCli(['db', 'index', 'syslog', '--config', configFile], ctx)).toBe(0);
    for (const d of dialects) {
      expect(ctx.stdout.join('\n')).toMatch(
        new RegExp(`site-${d} .*: created netsvc_syslog_received, netsvc_syslog_host, netsvc_syslog_priority, netsvc_syslog_tag`),
      );
    }
    expect(ctx.stdout.join('\n')).toContain('fresh (sqlite:not-yet.sqlite): no database yet');
    for (const c of clients) {
      expect(await indexNames(c)).toEqual([
        'netsvc_syslog_host',
        'netsvc_syslog_priority',
        'netsvc_syslog_received',
        'netsvc_syslog_tag',
      ]);
    }

    const again = captureCli();
    expect(await runCli(['db', 'index', 'syslog', '--config', configFile, '--entity', `site-${dialects[0]}`], again)).toBe(0);
    expect(again.stdout).toHaveLength(1);
    expect(again.stdout[0]).toMatch(/created nothing; already there: netsvc_syslog_received/);

    const drop = captureCli();
    expect(await runCli(['db', 'index', 'syslog', '--drop', '--config', configFile], drop)).toBe(0);
    for (const c of clients) expect(await indexNames(c)).toEqual([]);
  });

  it('says which entity failed when the table is missing, and names unknown entities', async () => {
    await clients[0]!.execute('DROP TABLE SystemEvents');
    const ctx = captureCli();
    expect(await runCli(['db', 'index', 'syslog', '--config', configFile, '--entity', `site-${dialects[0]}`], ctx)).toBe(1);
    expect(ctx.stderr.join('')).toMatch(new RegExp(`netsvc: site-${dialects[0]} \\(`));
    const unknown = captureCli();
    expect(await runCli(['db', 'index', 'syslog', '--config', configFile, '--entity', 'nope'], unknown)).toBe(2);
    expect(unknown.stderr.join('')).toContain("entity 'nope' has no syslog database");
  });
});
