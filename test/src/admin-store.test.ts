import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTokenKey } from '../../src/admin-store.js';
import { loadConfig } from '../../src/config.js';
import { LOOPBACK_LISTENERS } from '../helpers/service.js';

function config(dataDir: string, env: Record<string, string> = {}) {
  return loadConfig({ cwd: dataDir, dataDir, env: { ...LOOPBACK_LISTENERS, NETSVC_HTTP__PORT: '0', ...env } });
}

describe('token key', () => {
  it('is generated once, kept 0600 in the data dir, and read back the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-key-'));
    const cfg = config(dir);
    const first = loadTokenKey(cfg);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(dir, 'jwt.key')).mode & 0o777).toBe(0o600);
    expect(Buffer.from(loadTokenKey(cfg)).equals(Buffer.from(first))).toBe(true);
    expect(readFileSync(join(dir, 'jwt.key'), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('comes from auth.jwtSecret when set, and then no key file is written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-key-'));
    const secret = 'x'.repeat(40);
    const key = loadTokenKey(config(dir, { NETSVC_AUTH__JWT_SECRET: JSON.stringify(secret) }));
    expect(Buffer.from(key).toString()).toBe(secret);
    expect(() => statSync(join(dir, 'jwt.key'))).toThrow();
  });
});
