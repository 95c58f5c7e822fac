/**
 * The safety net under the API's checks: each client turns its database's
 * refusal of a bound value into SqlInputError (the client's input, a 400),
 * and leaves every other error as it was (a duplicate key is the store's to
 * read, a syntax error is a bug).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { SqlInputError, type Dialect, type SqlClient, type SqlInputReason } from '../../../storage/sql/sql-client.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../../helpers/databases.js';

const dialects = await availableDialects();

/** A statement the database refuses for its value alone, and why. */
interface Refusal {
  what: string;
  sql: string;
  params: unknown[];
  reason: SqlInputReason;
}

const REFUSALS: Record<Dialect, Refusal[]> = {
  postgres: [
    { what: 'a NUL byte', sql: 'SELECT name FROM t WHERE name = ?', params: ['a\u0000b'], reason: 'encoding' },
    { what: 'an id past int4', sql: 'SELECT name FROM t WHERE id = ?', params: [2 ** 31], reason: 'out_of_range' },
    { what: 'the year 0', sql: 'SELECT name FROM t WHERE d >= ?', params: ['0000-01-01 00:00:00'], reason: 'out_of_range' },
    {
      what: 'a text too long',
      sql: 'INSERT INTO t (id, name) VALUES (?, ?)',
      params: [7, 'x'.repeat(61)],
      reason: 'out_of_range',
    },
    { what: 'no date at all', sql: 'SELECT name FROM t WHERE d >= ?', params: ['yesterday-ish'], reason: 'malformed' },
  ],
  mysql: [
    { what: 'an id past INT', sql: 'INSERT INTO t (id, name) VALUES (?, ?)', params: [2 ** 31, 'x'], reason: 'out_of_range' },
    {
      what: 'a text too long',
      sql: 'INSERT INTO t (id, name) VALUES (?, ?)',
      params: [7, 'x'.repeat(61)],
      reason: 'out_of_range',
    },
    {
      what: 'no date at all',
      sql: 'INSERT INTO t (id, name, d) VALUES (?, ?, ?)',
      params: [8, 'x', '2025-13-45 99:00:00'],
      reason: 'malformed',
    },
    {
      what: 'a 4-byte character in a latin1 column',
      sql: 'INSERT INTO t (id, name, l) VALUES (?, ?, ?)',
      params: [9, 'x', '\u{1F600}'],
      reason: 'encoding',
    },
  ],
  sqlite: [
    {
      what: 'a text as an INTEGER PRIMARY KEY',
      sql: 'INSERT INTO t (id, name) VALUES (?, ?)',
      params: ['seven', 'x'],
      reason: 'malformed',
    },
  ],
};

const TABLE: Record<Dialect, string> = {
  postgres: 'CREATE TABLE t (id integer PRIMARY KEY, name varchar(60) NOT NULL, d timestamp NULL)',
  mysql:
    'CREATE TABLE t (id int PRIMARY KEY, name varchar(60) NOT NULL, d datetime NULL, l varchar(10) CHARACTER SET latin1 NULL) ENGINE=InnoDB',
  sqlite: 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, d TEXT NULL)',
};

describe.each(dialects)('refused values on %s', (dialect) => {
  let db: TestDatabase;
  let client: SqlClient;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'netsvc_sql_input');
    client = openSqlClient(db.url, '/');
    await client.execute(TABLE[dialect]);
    await client.execute('INSERT INTO t (id, name) VALUES (?, ?)', [1, 'one']);
  });

  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  it.each(REFUSALS[dialect].map((r) => [r.what, r] as const))(
    '%s is SqlInputError, alone and in a transaction',
    async (_what, r) => {
      const alone = await client.execute(r.sql, r.params).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(alone).toBeInstanceOf(SqlInputError);
      expect((alone as SqlInputError).reason).toBe(r.reason);
      const inTx = await client
        .transaction((tx) => tx.execute(r.sql, r.params))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(inTx).toBeInstanceOf(SqlInputError);
      // The failed transaction left the connection usable.
      expect(await client.query('SELECT name FROM t WHERE id = ?', [1])).toEqual([{ name: 'one' }]);
    },
  );

  it('leaves a duplicate key and a syntax error as they are', async () => {
    const dup = await client.execute('INSERT INTO t (id, name) VALUES (?, ?)', [1, 'again']).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(dup).toBeInstanceOf(Error);
    expect(dup).not.toBeInstanceOf(SqlInputError);
    const syntax = await client.query('SELEC name FROM t').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(syntax).toBeInstanceOf(Error);
    expect(syntax).not.toBeInstanceOf(SqlInputError);
  });
});
