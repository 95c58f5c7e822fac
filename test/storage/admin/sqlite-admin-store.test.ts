import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AdminStoreError } from '../../../storage/admin/admin-store.js';
import { generateCredential, hashSecret, verifySecret } from '../../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../../storage/admin/sqlite-admin-store.js';

describe('SqliteAdminStore', () => {
  it('keeps entities, users and their per-area switches', () => {
    const store = new SqliteAdminStore(':memory:');
    store.addEntity('acme', { netflow: true });
    store.addUser('acme', 'bob', { hotspot: true });
    expect(store.listEntities()).toMatchObject([{ name: 'acme', areas: { netflow: true, logviewer: false, hotspot: false } }]);
    store.setUserArea('acme', 'bob', 'logviewer', true);
    expect(store.listUsers('acme')).toMatchObject([
      { name: 'bob', areas: { netflow: false, logviewer: true, hotspot: true }, apiId: null },
    ]);
    expect(() => store.addEntity('acme', {})).toThrow(AdminStoreError);
    expect(() => store.addUser('nope', 'x', {})).toThrow(/entity 'nope' does not exist/);
    expect(() => store.addUser('acme', "bob'; DROP TABLE users;--", {})).toThrow(/must be 1-64 characters/);
    store.close();
  });

  it('stores the secret only as an scrypt hash, nowhere in clear', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-admin-'));
    const path = join(dir, 'admin.sqlite');
    const store = new SqliteAdminStore(path);
    store.addEntity('acme', { netflow: true });
    store.addUser('acme', 'alice', { netflow: true });
    const { apiId, secret } = generateCredential();
    store.replaceCredential('acme', 'alice', apiId, await hashSecret(secret));
    store.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const raw = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f)).toString('latin1'))
      .join('');
    expect(raw).toContain(apiId);
    expect(raw).not.toContain(secret);
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT secret_hash FROM users').get() as { secret_hash: string };
    db.close();
    expect(row.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifySecret(secret, row.secret_hash)).toBe(true);
    expect(await verifySecret(`${secret}x`, row.secret_hash)).toBe(false);
  });
});
