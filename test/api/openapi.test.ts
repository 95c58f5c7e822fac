import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { AuthService } from '../../api/auth.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import { createLogger } from '../../src/log.js';

function app() {
  const store = new SqliteAdminStore(':memory:');
  const auth = new AuthService(store, {
    key: randomBytes(32),
    tokenTtlSec: 60,
    maxFailures: 5,
    failureWindowSec: 60,
    now: Date.now,
  });
  return createApp({ auth, logger: createLogger('silent'), bodyLimitBytes: 1024, areas: {} });
}

describe('OpenAPI document and docs page', () => {
  it('describes the three auth endpoints with their body and responses', async () => {
    const res = await app().request('/svc/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('3.1.0');
    for (const area of ['netflow', 'logviewer', 'hotspot']) {
      const op = doc.paths[`/svc/api/${area}/auth`]?.post;
      expect(op, area).toBeDefined();
      const body = op.requestBody.content['application/json'].schema;
      const schema = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
      expect(schema.required).toEqual(expect.arrayContaining(['api_id', 'secret']));
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
      expect(op.security).toEqual([]);
    }
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('serves a docs page whose scripts and styles load from this server', async () => {
    const a = app();
    const page = await a.request('/svc/api/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/svc/api/openapi.json');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      const res = await a.request(asset);
      expect(res.status, asset).toBe(200);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
  });
});
