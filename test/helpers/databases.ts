/**
 * Per-run test databases on the three backends. Each call creates databases
 * with unique names and returns a drop function; a backend that cannot be
 * reached is skipped, unless NETSVC_REQUIRE_ALL=1 (CI), where it fails.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Dialect } from '../../storage/sql/sql-client.js';

export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';

/** True when a missing backend must fail the run instead of skipping. */
export const requireAll = process.env.NETSVC_REQUIRE_ALL === '1';

/** A database created for one test file. */
export interface TestDatabase {
  dialect: Dialect;
  /** URL netsvc's config takes (`sqlite:` URLs carry an absolute path). */
  url: string;
  /** Database name (file path for SQLite). */
  name: string;
  drop(): Promise<void>;
}

function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

async function mysqlReachable(): Promise<boolean> {
  try {
    const conn = await mysql.createConnection({ uri: MYSQL_ADMIN_URL, connectTimeout: 2000 });
    await conn.end();
    return true;
  } catch {
    return false;
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: `${POSTGRES_ADMIN_URL}/postgres`, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Dialects available on this machine; throws under NETSVC_REQUIRE_ALL when one is missing. */
export async function availableDialects(): Promise<Dialect[]> {
  const out: Dialect[] = ['sqlite'];
  const [my, pgOk] = await Promise.all([mysqlReachable(), postgresReachable()]);
  if (my) out.push('mysql');
  else if (requireAll) throw new Error(`MariaDB not reachable at ${MYSQL_ADMIN_URL} (NETSVC_REQUIRE_ALL=1)`);
  if (pgOk) out.push('postgres');
  else if (requireAll) throw new Error(`PostgreSQL not reachable at ${POSTGRES_ADMIN_URL} (NETSVC_REQUIRE_ALL=1)`);
  return out;
}

/** Creates an empty database on `dialect` with a unique name. */
export async function createTestDatabase(dialect: Dialect, prefix = 'netsvc_test'): Promise<TestDatabase> {
  const name = uniqueName(prefix);
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    const path = join(dir, `${name}.sqlite`);
    return { dialect, name: path, url: `sqlite:${path}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (dialect === 'mysql') {
    const conn = await mysql.createConnection({ uri: MYSQL_ADMIN_URL });
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
    await conn.end();
    return {
      dialect,
      name,
      url: `${MYSQL_ADMIN_URL}/${name}`,
      drop: async () => {
        const c = await mysql.createConnection({ uri: MYSQL_ADMIN_URL });
        await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
        await c.end();
      },
    };
  }
  const admin = new pg.Client({ connectionString: `${POSTGRES_ADMIN_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  return {
    dialect,
    name,
    url: `${POSTGRES_ADMIN_URL}/${name}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: `${POSTGRES_ADMIN_URL}/postgres` });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Ends every session other clients hold on the test database, as a server
 * restart does (PostgreSQL sends them 57P01 "terminating connection due to
 * administrator command"; MariaDB kills them). Answers how many were ended.
 */
export async function terminateSessions(db: TestDatabase): Promise<number> {
  if (db.dialect === 'sqlite') return 0;
  if (db.dialect === 'mysql') {
    const conn = await mysql.createConnection({ uri: MYSQL_ADMIN_URL });
    try {
      const [rows] = await conn.query('SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [
        db.name,
      ]);
      let n = 0;
      for (const { id } of rows as Array<{ id: number }>) {
        // A session may end on its own between the list and the kill.
        await conn.query('KILL CONNECTION ?', [id]).then(
          () => n++,
          () => undefined,
        );
      }
      return n;
    } finally {
      await conn.end();
    }
  }
  const admin = new pg.Client({ connectionString: `${POSTGRES_ADMIN_URL}/postgres` });
  await admin.connect();
  try {
    const res = await admin.query(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [db.name],
    );
    return res.rows.filter((r: { ended: boolean }) => r.ended).length;
  } finally {
    await admin.end();
  }
}

/** The database's URL with its host and port replaced by 127.0.0.1:`port` (a proxy in front of the server). */
export function urlThroughPort(db: TestDatabase, port: number): string {
  const u = new URL(db.url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

/** Host and port of the server a database lives on. */
export function serverOf(db: TestDatabase): { host: string; port: number } {
  const u = new URL(db.url);
  return { host: u.hostname, port: Number(u.port) };
}
