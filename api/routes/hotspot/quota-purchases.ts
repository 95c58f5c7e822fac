/** The quota purchase report. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { DateTime } from 'luxon';
import { NAME_MAX } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { paged } from '../../envelope.js';
import { BadRequestError } from '../../errors.js';
import { checkYears } from '../../params.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import { json, pagedSchema, pageQuery, q, tags, timeParams, timeRange, unavailable, type HotspotKit } from './shared.js';

const purchaseRecord = z
  .object({
    id: z.number().int(),
    transaction_time: z.string(),
    username: z.string(),
    plan_name: z.string(),
    currency: z.string(),
    amount: z.string().openapi({ example: '10.00' }),
    user_profiles: z.string(),
    remarks: z.string(),
    create_by: z.string(),
    create_at: z.string(),
  })
  .openapi('QuotaPurchase');

const quotaRoute = createRoute({
  method: 'get',
  path: '/quota-purchase-report',
  tags,
  summary: 'Quota purchases, newest first; remarks is a substring match, the rest exact',
  request: {
    query: z.object({
      transaction_time: q('transaction_time', 19, 'YYYY-MM-DD (that day) or YYYY-MM-DD HH:mm:ss (exact)'),
      username: q('username', NAME_MAX, 'Exact user name'),
      plan_name: q('plan_name', 128, 'Exact plan name'),
      user_profiles: q('user_profiles', 500, 'Exact profile list'),
      remarks: q('remarks', 1000, 'Substring of the remarks'),
      ...timeParams,
      ...pageQuery,
    }),
  },
  responses: { 200: json(pagedSchema(purchaseRecord, 'QuotaPurchases'), 'Paged purchases'), ...authFailures, ...unavailable },
});

/** The quota purchase routes. */
export function quotaPurchaseRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { zone, pageFor, storeFor, call } = kit;

  router.openapi(quotaRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    if (qy.transaction_time !== undefined) {
      const tt = qy.transaction_time;
      const valid =
        (/^\d{4}-\d{2}-\d{2}$/.test(tt) && DateTime.fromISO(tt).isValid) ||
        (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(tt) && DateTime.fromFormat(tt, 'yyyy-LL-dd HH:mm:ss').isValid);
      if (!valid)
        throw new BadRequestError(
          'transaction_time',
          `Invalid parameter 'transaction_time': '${tt}' is not YYYY-MM-DD or YYYY-MM-DD HH:mm:ss.`,
        );
      checkYears('transaction_time', DateTime.fromISO(tt.slice(0, 10), { zone }));
    }
    const rows = await call(c, () =>
      storeFor(c).quotaPurchases(
        {
          transaction_time: qy.transaction_time,
          username: qy.username,
          plan_name: qy.plan_name,
          user_profiles: qy.user_profiles,
          remarks: qy.remarks,
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  return router;
}
