/** The console's files at `/` (api/console.ts): routes get index.html, assets are cached and compressed. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountConsole } from '../../api/console.js';

describe('console static files', () => {
  let dir: string;
  let app: Hono;
  const script = `console.log(${JSON.stringify('x'.repeat(4000))});`;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-console-files-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>netsvc</title>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), script);
    app = new Hono();
    app.get('/svc/api/netflow/latest', (c) => c.json({ status: true }));
    mountConsole(app, dir, ['/svc/api', '/health', '/metrics']);
    app.notFound((c) => c.json({ status: false, errorMessage: 'Not found' }, 404));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the page for / and for console routes, never cached, with a same-origin-only policy', async () => {
    for (const path of ['/', '/netflow', '/hotspot/users?q=x']) {
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<title>netsvc</title>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    }
  });

  it('serves hashed assets gzip-compressed to browsers that take it, cached for good', async () => {
    const res = await app.request('/assets/index-abc123.js', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('immutable');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBeLessThan(script.length / 10);
    expect(gunzipSync(body).toString()).toBe(script);
    const plain = await app.request('/assets/index-abc123.js');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(script);
  });

  it('leaves missing assets and the API paths to the API', async () => {
    expect((await app.request('/assets/missing.js')).status).toBe(404);
    expect(await (await app.request('/svc/api/netflow/latest')).json()).toEqual({ status: true });
    const apiMiss = await app.request('/svc/api/nothing');
    expect(apiMiss.status).toBe(404);
    expect(await apiMiss.json()).toMatchObject({ status: false });
    expect((await app.request('/health')).status).toBe(404);
  });

  it('says how to build the console when it is not built', async () => {
    const bare = new Hono();
    mountConsole(bare, join(dir, 'not-there'), ['/svc/api']);
    const res = await bare.request('/netflow');
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });
});
