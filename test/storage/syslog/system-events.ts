/**
 * Test support: SystemEvents tables created from the schema files as they
 * are, rows inserted the way rsyslog's stock templates insert them, and an
 * independent model of the logviewer's filter and order rules to check the
 * stores against.
 */
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import type { Dialect, SqlClient } from '../../../storage/sql/sql-client.js';
import { schemaStatements } from '../../../storage/syslog/schema-files.js';
import type { SyslogFilter } from '../../../storage/syslog/syslog-store.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/databases.js';

/** A row as a test inserts it. */
export interface SeedRow {
  receivedAt: string | null;
  deviceReportedTime: string;
  host: string;
  tag: string;
  priority: number;
  facility: number;
  message: string;
  processId?: string;
}

/** A seeded row with the ID the database gave it. */
export interface StoredRow extends SeedRow {
  id: number;
}

/** Creates SystemEvents (+ SystemEventsProperties) from the dialect's schema file. */
export async function createSystemEvents(client: SqlClient, options: { processIdColumn?: boolean } = {}): Promise<void> {
  for (const stmt of schemaStatements(client.dialect)) await client.execute(stmt);
  if (options.processIdColumn) {
    // LogAnalyzer's schema adds this column to rsyslog's table.
    await client.execute("ALTER TABLE SystemEvents ADD ProcessID varchar(60) NOT NULL DEFAULT ''");
  }
}

/** Opens a client on a test database URL. */
export function clientFor(url: string): SqlClient {
  return openSqlClient(url, '/');
}

/** A per-run test database holding an empty SystemEvents table, and a client on it. */
export interface SystemEventsDatabase {
  db: TestDatabase;
  client: SqlClient;
  /** Closes the client and drops the database. */
  close(): Promise<void>;
}

/** Creates a test database (`prefix…`) on the dialect with SystemEvents from its schema file; drops it again if that fails. */
export async function createSystemEventsDatabase(
  dialect: Dialect,
  prefix: string,
  options: { processIdColumn?: boolean } = {},
): Promise<SystemEventsDatabase> {
  const db = await createTestDatabase(dialect, prefix);
  const client = clientFor(db.url);
  const close = async () => {
    await client.close();
    await db.drop();
  };
  try {
    await createSystemEvents(client, options);
  } catch (err) {
    await close();
    throw err;
  }
  return { db, client, close };
}

/** Inserts rows in order (IDs grow with the array index) and returns them with their IDs. */
export async function seed(
  client: SqlClient,
  rows: SeedRow[],
  options: { processIdColumn?: boolean } = {},
): Promise<StoredRow[]> {
  const out: StoredRow[] = [];
  for (const r of rows) {
    const cols = ['Message', 'Facility', 'FromHost', 'Priority', 'DeviceReportedTime', 'ReceivedAt', 'InfoUnitID', 'SysLogTag'];
    const params: unknown[] = [r.message, r.facility, r.host, r.priority, r.deviceReportedTime, r.receivedAt, 1, r.tag];
    if (options.processIdColumn) {
      cols.push('ProcessID');
      params.push(r.processId ?? '');
    }
    await client.execute(`INSERT INTO SystemEvents (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, params);
  }
  const ids = await client.query<{ id: number }>('SELECT ID AS id FROM SystemEvents ORDER BY ID');
  ids.forEach((row, i) => out.push({ ...rows[i]!, id: Number(row.id) }));
  return out;
}

/** How many rows the table holds. */
export async function countRows(client: SqlClient): Promise<number> {
  const [row] = await client.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM SystemEvents');
  return Number(row?.n ?? 0);
}

function program(tag: string): string {
  let t = tag;
  if (t.endsWith(':')) t = t.slice(0, -1);
  const open = t.lastIndexOf('[');
  return open > 0 && t.endsWith(']') ? t.slice(0, open) : t;
}

/** The rules of decisions.md, written out independently of the stores. */
export function modelMatches(row: StoredRow, f: SyslogFilter): boolean {
  if (f.host !== undefined && row.host !== f.host) return false;
  if (f.priority !== undefined && row.priority !== f.priority) return false;
  if (f.tag !== undefined) {
    const p = program(f.tag.trim());
    if (!(row.tag === p || row.tag === `${p}:` || row.tag.startsWith(`${p}[`))) return false;
  }
  if (f.message !== undefined && !asciiLower(row.message).includes(asciiLower(f.message))) return false;
  if (f.startTime !== undefined && (row.receivedAt === null || row.receivedAt < f.startTime)) return false;
  if (f.endTime !== undefined && (row.receivedAt === null || row.receivedAt > f.endTime)) return false;
  return true;
}

function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Newest first: ReceivedAt desc (missing last), then ID desc. */
export function modelOrder(a: StoredRow, b: StoredRow): number {
  if (a.receivedAt !== b.receivedAt) {
    if (a.receivedAt === null) return 1;
    if (b.receivedAt === null) return -1;
    return a.receivedAt < b.receivedAt ? 1 : -1;
  }
  return b.id - a.id;
}

/** IDs the store should return for a page: the page plus one more row when a next page exists. */
export function modelPage(rows: StoredRow[], f: SyslogFilter, page: number, perPage: number): number[] {
  const all = rows.filter((r) => modelMatches(r, f)).sort(modelOrder);
  return all.slice((page - 1) * perPage, page * perPage + 1).map((r) => r.id);
}

/** Every dialect's name as the suites print it. */
export const DIALECT_LABEL: Record<Dialect, string> = { sqlite: 'SQLite', mysql: 'MariaDB', postgres: 'PostgreSQL' };
