import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import type { SqlClient } from '../../../storage/sql/sql-client.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../../helpers/databases.js';

const dialects = await availableDialects();

describe.each(dialects)('SqlClient on %s', (dialect) => {
  let db: TestDatabase;
  let client: SqlClient;

  beforeAll(async () => {
    db = await createTestDatabase(dialect);
    client = openSqlClient(db.url, '/');
    await client.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL)');
  });

  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  it('binds parameters literally, even SQL metacharacters', async () => {
    const nasty = "x'); DROP TABLE t; --";
    await client.execute('INSERT INTO t (id, name) VALUES (?, ?)', [1, nasty]);
    const rows = await client.query<{ name: string }>('SELECT name FROM t WHERE id = ?', [1]);
    expect(rows).toEqual([{ name: nasty }]);
  });

  it('rolls a failed transaction back and keeps what was stored before', async () => {
    await expect(
      client.transaction(async (tx) => {
        await tx.execute('INSERT INTO t (id, name) VALUES (?, ?)', [2, 'a']);
        await tx.execute('INSERT INTO t (id, name) VALUES (?, ?)', [2, 'duplicate']);
      }),
    ).rejects.toThrow();
    const rows = await client.query<{ id: number }>('SELECT id FROM t ORDER BY id');
    expect(rows.map((r) => Number(r.id))).toEqual([1]);
  });

  it('keeps bound values out of the errors it throws', async () => {
    const secret = 'TOPSECRET-PW-4711';
    let err: unknown;
    try {
      await client.execute('INSERT INTO t (id, name) VALUES (?, ?)', [1, secret]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(secret);
  });

  it('commits a transaction that succeeds', async () => {
    await client.transaction(async (tx) => {
      await tx.execute('INSERT INTO t (id, name) VALUES (?, ?)', [3, 'b']);
      await tx.execute('UPDATE t SET name = ? WHERE id = ?', ['c', 3]);
    });
    const rows = await client.query<{ name: string }>('SELECT name FROM t WHERE id = ?', [3]);
    expect(rows).toEqual([{ name: 'c' }]);
  });

  it('reads its own schema: tables, columns and indexes, inside a transaction as well', async () => {
    await client.execute('CREATE TABLE intro (id INTEGER PRIMARY KEY, at VARCHAR(19), note VARCHAR(10))');
    await client.execute('CREATE INDEX intro_at ON intro (at DESC, id DESC)');
    await client.execute('CREATE INDEX intro_note ON intro (note)');
    expect(await client.tableExists('intro')).toBe(true);
    expect(await client.tableExists('no_such_table')).toBe(false);
    expect((await client.columnNames('intro')).map((c) => c.toLowerCase()).sort()).toEqual(['at', 'id', 'note']);
    expect(await client.columnNames('no_such_table')).toEqual([]);
    expect(await client.indexes('no_such_table')).toEqual([]);
    const indexes = await client.indexes('intro');
    const byName = (name: string) => indexes.find((i) => i.name === name);
    // NULL is the lowest value on MariaDB and SQLite; PostgreSQL puts NULLs last ascending, first descending.
    expect(byName('intro_note')).toEqual({
      name: 'intro_note',
      valid: true,
      firstColumn: 'note',
      descending: false,
      nullsFirst: dialect !== 'postgres',
    });
    expect(byName('intro_at')).toMatchObject({ valid: true, firstColumn: 'at' });
    // MariaDB before 10.8 accepts DESC in an index and ignores it, so only the others are asked about the order.
    if (dialect !== 'mysql') expect(byName('intro_at')).toMatchObject({ descending: true, nullsFirst: dialect === 'postgres' });
    await client.transaction(async (tx) => {
      expect(await tx.tableExists('intro')).toBe(true);
      expect((await tx.indexes('intro')).map((i) => i.name)).toEqual(expect.arrayContaining(['intro_at', 'intro_note']));
    });
  });

  it('tells a unique-key violation from other failures', async () => {
    const failure = async (sql: string, params: unknown[] = []) => {
      try {
        await client.execute(sql, params);
      } catch (err) {
        return err;
      }
      throw new Error(`no failure: ${sql}`);
    };
    const duplicate = await failure('INSERT INTO t (id, name) VALUES (?, ?)', [1, 'again']);
    expect(client.isUniqueViolation(duplicate)).toBe(true);
    expect(client.isRetryable(duplicate)).toBe(false);
    const missing = await failure('INSERT INTO no_such_table (id) VALUES (1)');
    expect(client.isUniqueViolation(missing)).toBe(false);
    expect(client.isRetryable(missing)).toBe(false);
  });
});

describe('SqliteSqlClient file', () => {
  it('creates a new SQLite file readable by owner and group only', async () => {
    const db = await createTestDatabase('sqlite');
    const client = openSqlClient(db.url, '/');
    await client.execute('CREATE TABLE t (id INTEGER)');
    expect(statSync(db.name).mode & 0o777).toBe(0o640);
    await client.close();
    await db.drop();
  });
});
