/**
 * The HTTP app: `/svc/api/{netflow,logviewer,hotspot}` with per-area auth,
 * the OpenAPI document and docs page, `/metrics`, request logging and the
 * one error handler that turns every failure into the envelope.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { Log } from '../common/log.js';
import { AREAS, type Area } from '../storage/admin/admin-store.js';
import { authPrecheck, bearerAuth, registerAuthRoute, type AuthService } from './auth.js';
import type { AppEnv } from './context.js';
import { mountConsole } from './console.js';
import { mountDocs } from './docs.js';
import { fail } from './envelope.js';
import { ApiError, PayloadTooLargeError, RateLimitedError } from './errors.js';
import { createRouter } from './router.js';

/** Base path of every API route. */
export const API_BASE = '/svc/api';

/** What the app is built from; area routers are optional so each area can be wired on its own. */
export interface AppDeps {
  auth: AuthService;
  logger: Log;
  bodyLimitBytes: number;
  /** Routes of each area, relative to `/svc/api/<area>`; bearer auth is applied here. */
  areas: Partial<Record<Area, OpenAPIHono<AppEnv>>>;
  /** Prometheus exposition text for `/metrics`. */
  metrics?: () => Promise<string>;
  /** Each entity's databases as last checked, for `/health` (src/database-health.ts). */
  health?: () => Promise<ReadonlyArray<{ entity: string; area: string; kind: string; state: string }>>;
  /** The built web console (dist/console); when set, served at `/` (api/console.ts). */
  consoleDir?: string;
  /** Client address of a request (the socket's remote address under @hono/node-server). */
  clientAddress?: (c: Context) => string;
}

function socketAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}

/** Builds the Hono app; it holds no sockets, `src/main.ts` serves it. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = createRouter();
  const clientAddress = deps.clientAddress ?? socketAddress;

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    deps.logger.info(
      { method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round((performance.now() - started) * 10) / 10 },
      'request',
    );
  });

  // Before the body is read: in a login storm most attempts are refused here, cheaply (auth.ts).
  app.use(`${API_BASE}/:area/auth`, authPrecheck(deps.auth, clientAddress));

  app.use(
    `${API_BASE}/*`,
    bodyLimit({
      maxSize: deps.bodyLimitBytes,
      onError: () => {
        throw new PayloadTooLargeError(`Request body exceeds ${deps.bodyLimitBytes} bytes.`);
      },
    }),
  );

  for (const area of AREAS) {
    const base = `${API_BASE}/${area}`;
    const router = createRouter();
    registerAuthRoute(router, area, deps.auth, clientAddress);
    const guard = bearerAuth(deps.auth, area);
    router.use('*', async (c, next) => (c.req.method === 'POST' && c.req.path === `${base}/auth` ? next() : guard(c, next)));
    const routes = deps.areas[area];
    if (routes) router.route('/', routes);
    app.route(base, router);
  }

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  app.doc31(`${API_BASE}/openapi.json`, {
    openapi: '3.1.0',
    info: {
      title: 'netsvc: Network Traffic, Syslog and Hotspot Management API',
      version: '3.1.0',
      description:
        'Flow records (netflow), syslog search (logviewer) and FreeRADIUS hotspot management (hotspot). Each area has its own POST /{area}/auth.',
    },
    security: [{ bearerAuth: [] }],
  });
  mountDocs(app as never, `${API_BASE}/docs`, `${API_BASE}/openapi.json`);

  if (deps.health) {
    const health = deps.health;
    // Unauthenticated like /metrics: states and the kind of server only (SQLite, MariaDB or
    // PostgreSQL: which one serve really uses), no URL and no driver message (those go to the log).
    app.get('/health', async (c) => {
      const databases = (await health()).map(({ entity, area, kind, state }) => ({ entity, area, kind, state }));
      return c.json({ status: databases.every((d) => d.state === 'ok') ? 'ok' : 'degraded', databases });
    });
  }
  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', async (c) =>
      c.text(await metrics(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }),
    );
  }

  if (deps.consoleDir !== undefined) mountConsole(app as never, deps.consoleDir, [API_BASE, '/health', '/metrics']);

  app.notFound((c) => c.json(fail(`Not found: ${c.req.method} ${c.req.path}`), 404));

  app.onError((err, c) => {
    if (err instanceof ApiError) {
      if (err instanceof RateLimitedError) c.header('retry-after', String(err.retryAfterSec));
      return c.json(fail(err.message, err.extra), err.status);
    }
    if (err instanceof HTTPException) {
      // zod-openapi's media-type gate says only 'Unsupported Media Type': say what is expected
      // (every body this API takes is JSON).
      if (err.status === 415) {
        const sent = c.req.header('content-type');
        return c.json(
          fail(
            `Unsupported Media Type: send the body as JSON with Content-Type: application/json${sent ? ` (got '${sent}')` : ' (none was sent)'}.`,
          ),
          415,
        );
      }
      // Hono's own refusals (e.g. the JSON validator's 'Malformed JSON in request body').
      return c.json(fail(err.message || 'Bad request.'), err.status);
    }
    deps.logger.error({ err, method: c.req.method, path: c.req.path }, 'unhandled error');
    return c.json(fail('Internal server error.'), 500);
  });

  return app;
}
