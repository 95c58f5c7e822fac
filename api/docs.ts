/** The interactive API reference at /svc/api/docs, served from swagger-ui-dist (no CDN). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Hono } from 'hono';

/**
 * The package's directory, found without loading it: its entry point evaluates the whole
 * 1.5 MB browser bundle (≈ 0.5 s of the main thread at every start) to export a path.
 */
function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

function page(specUrl: string, assetBase: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>netsvc API reference</title>
  <link rel="icon" href="${assetBase}/favicon-32x32.png">
  <link rel="stylesheet" href="${assetBase}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${assetBase}/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl)}, dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true });
  </script>
</body>
</html>`;
}

/** Mounts the docs page and its assets under `base` (e.g. /svc/api/docs). */
export function mountDocs(app: Hono<never>, base: string, specUrl: string): void {
  const dir = swaggerUiDir();
  const cache = new Map<string, Buffer>();
  app.get(base, (c) => c.html(page(specUrl, `${base}/assets`)));
  app.get(`${base}/assets/:file`, (c) => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      body = readFileSync(join(dir, file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
}
