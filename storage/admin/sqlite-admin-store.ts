import type Database from 'better-sqlite3';
import { openSqlite } from '../sql/sqlite-driver.js';
import { prepareSqliteFile } from '../sql/sqlite-file.js';
import {
  AdminStoreError,
  AREAS,
  type AdminStore,
  type Area,
  type AreaSwitches,
  type CredentialRecord,
  type EntityRecord,
  type PrincipalState,
  type UserRecord,
} from './admin-store.js';

const NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entities (
  name TEXT PRIMARY KEY,
  netflow INTEGER NOT NULL DEFAULT 0,
  logviewer INTEGER NOT NULL DEFAULT 0,
  hotspot INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
  entity TEXT NOT NULL REFERENCES entities(name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  netflow INTEGER NOT NULL DEFAULT 0,
  logviewer INTEGER NOT NULL DEFAULT 0,
  hotspot INTEGER NOT NULL DEFAULT 0,
  api_id TEXT UNIQUE,
  secret_hash TEXT,
  credential_version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  PRIMARY KEY (entity, name)
);
CREATE TABLE IF NOT EXISTS auth_unlocks (
  address TEXT PRIMARY KEY,
  requested_at INTEGER NOT NULL
);
`;

interface AreaRow {
  netflow: number;
  logviewer: number;
  hotspot: number;
}
interface EntityRow extends AreaRow {
  name: string;
  created_at: string;
}
interface UserRow extends AreaRow {
  entity: string;
  name: string;
  api_id: string | null;
  secret_hash: string | null;
  credential_version: number;
  created_at: string;
}

function switches(row: AreaRow): AreaSwitches {
  return { netflow: row.netflow === 1, logviewer: row.logviewer === 1, hotspot: row.hotspot === 1 };
}

function checkName(kind: string, name: string): void {
  if (!NAME.test(name))
    throw new AdminStoreError('invalid', `${kind} name '${name}' must be 1-64 characters of A-Z a-z 0-9 _ . @ -`);
}

// Column names come from this fixed list, never from input.
function areaColumn(area: Area): Area {
  if (!AREAS.includes(area)) throw new AdminStoreError('invalid', `unknown area '${String(area)}'`);
  return area;
}

/** The admin store in the service's own SQLite file. */
export class SqliteAdminStore implements AdminStore {
  private readonly db: Database.Database;
  // Prepared once: these two run on every login and every authenticated request, and preparing
  // cost more than the query (a tenth of a millisecond each in a storm of logins).
  private readonly credentialByApiId: Database.Statement<[string], UserRow>;
  private readonly principalByName: Database.Statement<[string, string], Record<string, number>>;
  // Runs for every attempt from a locked-out address (a storm's refusals among them).
  private readonly unlockByAddress: Database.Statement<[string], { at: number | null }>;

  constructor(
    path: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    prepareSqliteFile(path, 0o600);
    this.db = openSqlite(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
    this.credentialByApiId = this.db.prepare('SELECT * FROM users WHERE api_id = ?');
    this.principalByName = this.db.prepare(
      `SELECT u.credential_version, u.netflow AS u_netflow, u.logviewer AS u_logviewer, u.hotspot AS u_hotspot,
              e.netflow AS e_netflow, e.logviewer AS e_logviewer, e.hotspot AS e_hotspot
         FROM users u JOIN entities e ON e.name = u.entity
        WHERE u.entity = ? AND u.name = ?`,
    );
    this.unlockByAddress = this.db.prepare("SELECT MAX(requested_at) AS at FROM auth_unlocks WHERE address IN (?, '*')");
  }

  requestUnlock(address: string): void {
    this.db
      .prepare(
        'INSERT INTO auth_unlocks (address, requested_at) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET requested_at = excluded.requested_at',
      )
      .run(address, this.now().getTime());
  }

  unlockRequestedAt(address: string): number {
    return this.unlockByAddress.get(address)?.at ?? 0;
  }

  private entityRow(name: string): EntityRow {
    const row = this.db.prepare('SELECT * FROM entities WHERE name = ?').get(name) as EntityRow | undefined;
    if (!row) throw new AdminStoreError('not_found', `entity '${name}' does not exist`);
    return row;
  }

  private userRow(entity: string, user: string): UserRow {
    this.entityRow(entity);
    const row = this.db.prepare('SELECT * FROM users WHERE entity = ? AND name = ?').get(entity, user) as UserRow | undefined;
    if (!row) throw new AdminStoreError('not_found', `user '${user}' of entity '${entity}' does not exist`);
    return row;
  }

  private toEntity(row: EntityRow): EntityRecord {
    return { name: row.name, areas: switches(row), createdAt: row.created_at };
  }

  private toUser(row: UserRow): UserRecord {
    return {
      entity: row.entity,
      name: row.name,
      areas: switches(row),
      apiId: row.api_id,
      credentialVersion: row.credential_version,
      createdAt: row.created_at,
    };
  }

  addEntity(name: string, areas: Partial<AreaSwitches>): EntityRecord {
    checkName('entity', name);
    const exists = this.db.prepare('SELECT 1 FROM entities WHERE name = ?').get(name);
    if (exists) throw new AdminStoreError('exists', `entity '${name}' already exists`);
    this.db
      .prepare('INSERT INTO entities (name, netflow, logviewer, hotspot, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(name, areas.netflow ? 1 : 0, areas.logviewer ? 1 : 0, areas.hotspot ? 1 : 0, this.now().toISOString());
    return this.toEntity(this.entityRow(name));
  }

  listEntities(): EntityRecord[] {
    return (this.db.prepare('SELECT * FROM entities ORDER BY name').all() as EntityRow[]).map((r) => this.toEntity(r));
  }

  setEntityArea(entity: string, area: Area, enabled: boolean): EntityRecord {
    this.entityRow(entity);
    this.db.prepare(`UPDATE entities SET ${areaColumn(area)} = ? WHERE name = ?`).run(enabled ? 1 : 0, entity);
    return this.toEntity(this.entityRow(entity));
  }

  addUser(entity: string, user: string, areas: Partial<AreaSwitches>): UserRecord {
    checkName('user', user);
    this.entityRow(entity);
    const exists = this.db.prepare('SELECT 1 FROM users WHERE entity = ? AND name = ?').get(entity, user);
    if (exists) throw new AdminStoreError('exists', `user '${user}' of entity '${entity}' already exists`);
    this.db
      .prepare('INSERT INTO users (entity, name, netflow, logviewer, hotspot, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(entity, user, areas.netflow ? 1 : 0, areas.logviewer ? 1 : 0, areas.hotspot ? 1 : 0, this.now().toISOString());
    return this.toUser(this.userRow(entity, user));
  }

  listUsers(entity?: string): UserRecord[] {
    if (entity !== undefined) this.entityRow(entity);
    const rows = (
      entity === undefined
        ? this.db.prepare('SELECT * FROM users ORDER BY entity, name').all()
        : this.db.prepare('SELECT * FROM users WHERE entity = ? ORDER BY name').all(entity)
    ) as UserRow[];
    return rows.map((r) => this.toUser(r));
  }

  setUserArea(entity: string, user: string, area: Area, enabled: boolean): UserRecord {
    this.userRow(entity, user);
    this.db.prepare(`UPDATE users SET ${areaColumn(area)} = ? WHERE entity = ? AND name = ?`).run(enabled ? 1 : 0, entity, user);
    return this.toUser(this.userRow(entity, user));
  }

  replaceCredential(entity: string, user: string, apiId: string, secretHash: string): UserRecord {
    this.userRow(entity, user);
    this.db
      .prepare(
        'UPDATE users SET api_id = ?, secret_hash = ?, credential_version = credential_version + 1 WHERE entity = ? AND name = ?',
      )
      .run(apiId, secretHash, entity, user);
    return this.toUser(this.userRow(entity, user));
  }

  findCredential(apiId: string): CredentialRecord | undefined {
    const row = this.credentialByApiId.get(apiId);
    if (!row || !row.secret_hash) return undefined;
    return { entity: row.entity, user: row.name, secretHash: row.secret_hash, credentialVersion: row.credential_version };
  }

  principalState(entity: string, user: string): PrincipalState | undefined {
    const row = this.principalByName.get(entity, user);
    if (!row) return undefined;
    return {
      credentialVersion: row.credential_version!,
      userAreas: { netflow: row.u_netflow === 1, logviewer: row.u_logviewer === 1, hotspot: row.u_hotspot === 1 },
      entityAreas: { netflow: row.e_netflow === 1, logviewer: row.e_logviewer === 1, hotspot: row.e_hotspot === 1 },
    };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
