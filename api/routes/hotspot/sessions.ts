/** Accounting sessions (radacct): the historical list and the online list. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NAME_MAX } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { paged } from '../../envelope.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import {
  ipParam,
  json,
  macParam,
  pagedSchema,
  pageQuery,
  q,
  tags,
  timeParams,
  timeRange,
  unavailable,
  type HotspotKit,
} from './shared.js';

const sessionFilterParams = {
  username: q('username', NAME_MAX, 'Exact user name'),
  hotspot: q('hotspot', 64, 'NAS identifier: the shortname of the NAS in FreeRADIUS\u2019s nas table'),
  nas: q('nas', 45, 'NAS IP address', '10.0.0.1'),
  macaddress: q('macaddress', 32, 'Client MAC, any common notation', 'AA-BB-CC-DD-EE-FF'),
  calledstationid: q('calledstationid', 32, 'Device (called station) MAC, any common notation'),
};

const historicalRecord = z
  .object({
    radacctid: z.number().int(),
    hotspot: z.string(),
    username: z.string(),
    macaddress: z.string().openapi({ example: 'AA-BB-CC-DD-EE-FF' }),
    ipaddress: z.string(),
    acctstarttime: z.string().nullable().openapi({ example: '2026-03-25 09:00:00' }),
    acctstoptime: z.string().nullable(),
    acctsessiontime: z.number().int().openapi({ description: 'Seconds' }),
    calledstationid: z.string(),
    acctinputoctets: z.number().int(),
    acctoutputoctets: z.number().int(),
    acctterminatecause: z.string(),
    nas: z.string(),
  })
  .openapi('HistoricalSession');

const onlineRecord = z
  .object({
    radacctid: z.number().int(),
    hotspot: z.string(),
    username: z.string(),
    nas: z.string(),
    macaddress: z.string(),
    calledstationid: z.string(),
    ipaddress: z.string(),
    starttime: z.string().nullable(),
    traffic: z.string().openapi({ example: '1.50 MB' }),
    name: z.string(),
    totaltime: z.string().openapi({ example: '1d 01:00:00' }),
  })
  .openapi('OnlineSession');

const historicalRoute = createRoute({
  method: 'get',
  path: '/historical-sessions',
  tags,
  summary: 'Accounting sessions (radacct), newest first; filters exact, MACs in any notation',
  request: { query: z.object({ ...sessionFilterParams, ipaddress: q('ipaddress', 45, 'User IP'), ...timeParams, ...pageQuery }) },
  responses: {
    200: json(pagedSchema(historicalRecord, 'HistoricalSessions'), 'Paged sessions'),
    ...authFailures,
    ...unavailable,
  },
});

const onlineRoute = createRoute({
  method: 'get',
  path: '/online-sessions',
  tags,
  summary: 'Sessions without a stop time, newest first',
  request: { query: z.object({ ...sessionFilterParams, ...timeParams, ...pageQuery }) },
  responses: { 200: json(pagedSchema(onlineRecord, 'OnlineSessions'), 'Paged online sessions'), ...authFailures, ...unavailable },
});

/** The session routes. */
export function sessionRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { zone, pageFor, storeFor, call } = kit;

  router.openapi(historicalRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).historicalSessions(
        {
          username: qy.username,
          hotspot: qy.hotspot,
          nas: ipParam('nas', qy.nas),
          macaddress: macParam('macaddress', qy.macaddress),
          calledstationid: macParam('calledstationid', qy.calledstationid),
          ipaddress: ipParam('ipaddress', qy.ipaddress),
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(onlineRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).onlineSessions(
        {
          username: qy.username,
          hotspot: qy.hotspot,
          nas: ipParam('nas', qy.nas),
          macaddress: macParam('macaddress', qy.macaddress),
          calledstationid: macParam('calledstationid', qy.calledstationid),
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  return router;
}
