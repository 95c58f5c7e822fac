/** The authentication log (radpostauth). */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NAME_MAX } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { paged } from '../../envelope.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import { json, pagedSchema, pageQuery, q, tags, timeParams, timeRange, unavailable, type HotspotKit } from './shared.js';

const attemptRecord = z
  .object({ id: z.number().int(), username: z.string(), pass: z.literal('********'), reply: z.string(), authdate: z.string() })
  .openapi('LoginAttempt');

const attemptsRoute = createRoute({
  method: 'get',
  path: '/login-attempts',
  tags,
  summary: 'Authentication log (radpostauth), newest first; the password is never shown',
  request: {
    query: z.object({
      username: q('username', NAME_MAX, 'Exact user name'),
      reply: z
        .enum(['Access-Accept', 'Access-Reject'])
        .optional()
        .openapi({ param: { name: 'reply', in: 'query' }, description: 'Access-Accept or Access-Reject' }),
      ...timeParams,
      ...pageQuery,
    }),
  },
  responses: { 200: json(pagedSchema(attemptRecord, 'LoginAttempts'), 'Paged login attempts'), ...authFailures, ...unavailable },
});

/** The login attempt routes. */
export function loginAttemptRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { zone, pageFor, storeFor, call } = kit;

  router.openapi(attemptsRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).loginAttempts({ username: qy.username, reply: qy.reply, ...timeRange(qy, zone) }, page),
    );
    return c.json(paged(rows, page.page, page.perPage) as z.infer<ReturnType<typeof pagedSchema<typeof attemptRecord>>>, 200);
  });

  return router;
}
