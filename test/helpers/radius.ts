/**
 * FreeRADIUS databases for tests: a per-run database on one backend with
 * FreeRADIUS's own schema.sql loaded as shipped, netsvc's tables migrated,
 * and helpers that write accounting and post-auth rows the way FreeRADIUS
 * 3.2 does on that backend (MariaDB datetime wall clock, PostgreSQL
 * timestamptz, SQLite epoch integers).
 */
import { defaultCatalogue } from '../../storage/radius/attribute-catalogue.js';
import { openSqlClient } from '../../storage/sql/open-sql-client.js';
import { dialectSupport } from '../../storage/sql/dialect-support.js';
import type { Dialect, SqlClient, SqlStatements } from '../../storage/sql/sql-client.js';
import { radiusStoreFor } from '../../storage/radius/open-radius-store.js';
import type { AttributeWrite, RadiusStore } from '../../storage/radius/radius-store.js';
import { freeradiusSchemaStatements } from '../../storage/radius/schema-files.js';
import type { RadiusStoreOptions } from '../../storage/radius/sql-radius-store.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** A FreeRADIUS database with a store over it and a second raw client for assertions. */
export interface RadiusTestDatabase {
  dialect: Dialect;
  db: TestDatabase;
  store: RadiusStore;
  /** Separate connection, for arranging rows and checking what the store wrote. */
  raw: SqlClient;
  close(): Promise<void>;
}

/** Creates the database, loads FreeRADIUS's schema.sql, runs `migrate()`. */
export async function createRadiusDatabase(dialect: Dialect, options: RadiusStoreOptions = {}): Promise<RadiusTestDatabase> {
  const db = await createTestDatabase(dialect, 'netsvc_radius');
  const raw = openSqlClient(db.url, '/');
  for (const stmt of freeradiusSchemaStatements(dialect)) await raw.execute(stmt);
  const store = radiusStoreFor(openSqlClient(db.url, '/'), options);
  await store.migrate();
  return {
    dialect,
    db,
    store,
    raw,
    async close() {
      await store.close();
      await raw.close();
      await db.drop();
    },
  };
}

/** A radacct time value as FreeRADIUS 3.2 writes it on the dialect (zone UTC). */
export function acctTime(dialect: Dialect, ms: number): string | number {
  if (dialect === 'sqlite') return Math.floor(ms / 1000);
  const iso = new Date(ms).toISOString();
  return dialect === 'postgres' ? iso : iso.slice(0, 19).replace('T', ' ');
}

/** One accounting row; unset fields take what FreeRADIUS writes for an absent attribute. */
export interface AcctRow {
  sessionId: string;
  username: string;
  nas?: string;
  mac?: string;
  called?: string;
  ip?: string;
  start: number;
  stop?: number;
  sessionTime?: number;
  input?: number;
  output?: number;
  cause?: string;
}

let uniq = 0;

/** Inserts an accounting row like FreeRADIUS's accounting queries do. */
export async function insertAcct(client: SqlClient, row: AcctRow): Promise<void> {
  const d = client.dialect;
  await client.execute(
    `INSERT INTO radacct (acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, nasporttype,
       acctstarttime, acctupdatetime, acctstoptime, acctsessiontime, acctauthentic, acctinputoctets, acctoutputoctets,
       calledstationid, callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.sessionId,
      `${row.sessionId}-${++uniq}-${Date.now()}`.slice(0, 32),
      row.username,
      d === 'postgres' ? null : '',
      row.nas ?? '127.0.0.1',
      '7',
      'Wireless-802.11',
      acctTime(d, row.start),
      acctTime(d, row.stop ?? row.start),
      row.stop === undefined ? null : acctTime(d, row.stop),
      row.sessionTime ?? 0,
      'RADIUS',
      row.input ?? 0,
      row.output ?? 0,
      row.called ?? (d === 'postgres' ? null : ''),
      row.mac ?? (d === 'postgres' ? null : ''),
      row.cause ?? (d === 'postgres' ? null : ''),
      'Framed-User',
      'PPP',
      row.ip ?? (d === 'postgres' ? null : ''),
    ],
  );
}

/** Inserts a post-auth row like FreeRADIUS's post-auth query (password in clear, as FreeRADIUS stores it). */
export async function insertPostAuth(
  client: SqlClient,
  username: string,
  pass: string,
  reply: string,
  ms: number,
): Promise<void> {
  const d = client.dialect;
  const wall = new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
  await client.execute('INSERT INTO radpostauth (username, pass, reply, authdate) VALUES (?, ?, ?, ?)', [
    username,
    pass,
    reply,
    d === 'postgres' ? new Date(ms).toISOString() : wall,
  ]);
}

const catalogue = defaultCatalogue();

/** Catalogue attribute `name` at `value` in the client's unit, as a write on a user or a profile (each with the catalogue's operator). */
function attributeWrite(on: 'user' | 'profile', name: string, value: string | number): AttributeWrite {
  const def = catalogue.get(name)!;
  const stored = catalogue.toStored(def, value);
  if (!stored.ok) throw new Error(stored.error);
  return on === 'user' ? catalogue.userWrite(def, stored.value) : catalogue.profileWrite(def, stored.value);
}

/** A user attribute write: `value` in the client's unit, converted by the default catalogue (throws when it refuses it). */
export function userAttribute(name: string, value: string | number): AttributeWrite {
  return attributeWrite('user', name, value);
}

/** A profile (group) attribute write: `value` in the client's unit, converted by the default catalogue (throws when it refuses it). */
export function profileAttribute(name: string, value: string | number): AttributeWrite {
  return attributeWrite('profile', name, value);
}

/**
 * `inner` with `before(sql, client)` run ahead of every statement, on the same
 * connection and inside the same transaction: how a test makes a write meet
 * another writer's row, or fail, part-way through.
 */
export function interceptedClient(inner: SqlClient, before: (sql: string, client: SqlClient) => Promise<void>): SqlClient {
  const wrap = (c: SqlClient): SqlClient => {
    const statements: SqlStatements = {
      dialect: c.dialect,
      async query<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
        await before(sql, c);
        return c.query<T>(sql, params);
      },
      async execute(sql: string, params?: readonly unknown[]) {
        await before(sql, c);
        return c.execute(sql, params);
      },
    };
    // The schema is read through the intercepted statements too.
    return {
      ...statements,
      ...dialectSupport(statements),
      transaction: (fn) => c.transaction((tx) => fn(wrap(tx))),
      close: () => c.close(),
    };
  };
  return wrap(inner);
}
