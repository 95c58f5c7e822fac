/**
 * The web console's static files (built by Vite into dist/console) at `/`. Everything it shows comes
 * from the public API under /svc/api with the user's own tokens; this module only serves files.
 *
 * The files are read once at start (a few hundred KB) and kept with a gzip copy, so a page load costs
 * no disk access. Paths without a file extension are the console's own routes (`/netflow?…`) and get
 * index.html; a missing asset is a 404.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Hono } from 'hono';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/**
 * Nothing from elsewhere: scripts, styles, images and API calls from this origin only. uPlot sizes its
 * elements through style attributes, hence 'unsafe-inline' for styles (never for scripts).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface StaticFile {
  body: Uint8Array;
  gzip?: Uint8Array;
  type: string;
  /** Vite names assets by content hash: they never change under the same name. */
  immutable: boolean;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else out.push(path);
  }
  return out;
}

/** Reads every file under `dir` into memory, keyed by its URL path (`/assets/app-1a2b.js`). */
export function loadConsoleFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(dir)) return files;
  for (const path of walk(dir)) {
    const ext = extname(path);
    if (ext === '.map') continue;
    const body = new Uint8Array(readFileSync(path));
    const type = TYPES[ext] ?? 'application/octet-stream';
    const compressible = type.startsWith('text/') || type === 'application/json' || type === 'image/svg+xml';
    const urlPath = '/' + relative(dir, path).split(sep).join('/');
    files.set(urlPath, {
      body,
      type,
      gzip: compressible && body.length > 512 ? new Uint8Array(gzipSync(body, { level: 9 })) : undefined,
      immutable: urlPath.startsWith('/assets/'),
    });
  }
  return files;
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>netsvc console</title></head>
<body><h1>The console is not built</h1><p>Run <code>npm run build</code> in netsvc's directory, then restart <code>netsvc serve</code>.
The API is at <a href="/svc/api/docs">/svc/api/docs</a>.</p></body></html>`;

function send(c: Context, file: StaticFile): Response {
  const headers: Record<string, string> = {
    'content-type': file.type,
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    vary: 'accept-encoding',
  };
  const acceptsGzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
  if (file.gzip && acceptsGzip) {
    headers['content-encoding'] = 'gzip';
    return c.body(file.gzip as Uint8Array<ArrayBuffer>, 200, headers);
  }
  return c.body(file.body as Uint8Array<ArrayBuffer>, 200, headers);
}

/**
 * Mounts the console at `/`. Call it after every other route: it answers GET for any path the API,
 * `/health` and `/metrics` do not take (`reserved` prefixes are left to the app's 404).
 */
export function mountConsole(app: Hono, dir: string, reserved: readonly string[]): void {
  const files = loadConsoleFiles(dir);
  const index = files.get('/index.html');
  app.get('*', async (c, next) => {
    const path = c.req.path;
    if (reserved.some((p) => path === p || path.startsWith(`${p}/`))) return next();
    const file = files.get(path);
    if (file) return send(c, file);
    if (extname(path) !== '') return next();
    if (!index) return c.html(NOT_BUILT, 503);
    return send(c, index);
  });
}
