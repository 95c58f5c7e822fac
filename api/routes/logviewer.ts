/**
 * The logviewer area (api.md 2.3 and 4.2, decisions.md Syslog): `search`
 * and `latest` over rsyslog's SystemEvents. The database is reached only
 * through the token entity's SyslogStore; this module checks parameters and
 * shapes the paged envelope.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  SyslogInputError,
  SyslogStoreError,
  type PageRequest,
  type SyslogFilter,
  type SyslogRecord,
  type SyslogStore,
} from '../../storage/syslog/syslog-store.js';
import type { AppEnv } from '../context.js';
import { paged } from '../envelope.js';
import { BadRequestError, ForbiddenError, UnavailableError } from '../errors.js';
import { checkYears, pageOf, pageParams, parseTimeParam, textParam, timeParam } from '../params.js';
import { createRouter } from '../router.js';
import { authFailures, failureSchema } from '../schemas.js';

/** What the logviewer routes are built from. */
export interface LogviewerRouteDeps {
  /** The syslog store of an entity; undefined when the entity has no syslog database. */
  storeOf: (entity: string) => SyslogStore | undefined;
  /** IANA zone of ReceivedAt (rsyslog writes its local time): times without an offset are read in it, ISO ones converted to it. */
  timezone: string;
  /** Told about every syslog database that cannot be used (answered 503), with the driver's reason in `cause`, for the log. */
  onStoreError?: (entity: string, err: SyslogStoreError) => void;
}

// ------------------------------------------------------------------ schemas

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const filterParams = {
  host: textParam('host', 255, 'Exact FromHost (host name or IP as the message names it), case-sensitive', 'routerA'),
  message: textParam(
    'message',
    1000,
    'Substring of the message, any letter case; % _ and \\ are plain characters',
    'Accepted password',
  ),
  tag: textParam(
    'tag',
    255,
    'Program: `sshd`, `sshd:` and `sshd[812]:` all match the tags sshd:, sshd[812]:, sshd and sshd[812]',
    'sshd',
  ),
  priority: z
    .string()
    .regex(/^[0-7]$/, 'must be an integer from 0 to 7')
    .optional()
    .openapi({ param: { name: 'priority', in: 'query' }, description: 'Severity: 0 Emergency … 7 Debug', example: '3' }),
  ...pageParams(`Page size, default ${DEFAULT_PER_PAGE}; above ${MAX_PER_PAGE} is reduced to ${MAX_PER_PAGE}`),
};

const timeParams = {
  startTime: timeParam(
    'startTime',
    'From this ReceivedAt on (inclusive): YYYY-MM-DD (midnight), YYYY-MM-DD HH:mm[:ss] in the service zone, or ISO 8601 with an offset',
    '2025-07-05',
  ),
  endTime: timeParam('endTime', 'Up to this ReceivedAt (inclusive), same forms', '2025-07-06'),
};

const recordSchema = z
  .object({
    ID: z.number().int().openapi({ example: 183021 }),
    DeviceReportedTime: z.string().nullable().openapi({ example: '2025-07-05 10:41:07' }),
    ReceivedAt: z.string().nullable().openapi({ example: '2025-07-05 10:41:07' }),
    FromHost: z.string().openapi({ example: 'routerA' }),
    SysLogTag: z.string().openapi({ example: 'sshd[812]:' }),
    processid: z.string().openapi({ example: '812' }),
    Message: z.string().openapi({ example: ' Accepted password for bob from 192.0.2.7 port 51022 ssh2' }),
    Priority: z.number().int().nullable().openapi({ example: 6 }),
  })
  .openapi('SyslogRecord');

const pageSchema = z
  .object({
    status: z.literal(true),
    page: z.number().int(),
    perPage: z.number().int(),
    isLastPage: z.boolean(),
    message: z.string().openapi({ example: 'More records available. Use pagination to load next page.' }),
    result: z.array(recordSchema),
  })
  .openapi('SyslogPage');

const failures = {
  ...authFailures,
  503: {
    description: 'The entity’s syslog database cannot be reached, did not answer in time, or has no SystemEvents table',
    content: { 'application/json': { schema: failureSchema } },
  },
};

const searchRoute = createRoute({
  method: 'get',
  path: '/search',
  tags: ['logviewer'],
  summary: 'Syslog records matching the filters and time range, newest first (ReceivedAt, then ID)',
  request: { query: z.object({ ...filterParams, ...timeParams }) },
  responses: { 200: json(pageSchema, 'Paged syslog records'), ...failures },
});

const latestRoute = createRoute({
  method: 'get',
  path: '/latest',
  tags: ['logviewer'],
  summary: 'The most recent syslog records matching the filters, newest first; startTime/endTime are refused (400)',
  request: { query: z.object(filterParams) },
  responses: { 200: json(pageSchema, 'Paged syslog records'), ...failures },
});

// ------------------------------------------------------------------ parsing

/**
 * A startTime/endTime value as the `YYYY-MM-DD HH:MM:SS` wall clock ReceivedAt is stored in.
 * Fractions of a second round inward (a start up, an end down), since ReceivedAt has whole seconds.
 */
export function parseSyslogTime(name: 'startTime' | 'endTime', raw: string, zone: string): string {
  let t = parseTimeParam(name, raw, zone);
  if (t.millisecond > 0)
    t = name === 'startTime' ? checkYears(name, t.plus({ seconds: 1 }).startOf('second')) : t.startOf('second');
  return t.toFormat('yyyy-LL-dd HH:mm:ss');
}

interface Query {
  host?: string;
  message?: string;
  tag?: string;
  priority?: string;
  page?: string;
  perPage?: string;
  startTime?: string;
  endTime?: string;
}

/** The store filter of a request; empty text filters count as absent. */
export function filterOf(q: Query, zone: string, withTime: boolean): SyslogFilter {
  const f: SyslogFilter = {};
  if (q.host) f.host = q.host;
  if (q.message) f.message = q.message;
  if (q.tag && q.tag.trim()) f.tag = q.tag;
  if (q.priority !== undefined) f.priority = Number(q.priority);
  if (!withTime) {
    for (const name of ['startTime', 'endTime'] as const) {
      if (q[name] !== undefined)
        throw new BadRequestError(name, `Invalid parameter '${name}': latest takes no time range; use search.`);
    }
    return f;
  }
  if (q.startTime !== undefined) f.startTime = parseSyslogTime('startTime', q.startTime, zone);
  if (q.endTime !== undefined) f.endTime = parseSyslogTime('endTime', q.endTime, zone);
  if (f.startTime !== undefined && f.endTime !== undefined && f.endTime < f.startTime) {
    throw new BadRequestError('endTime', "Invalid parameter 'endTime': it must not be before 'startTime'.");
  }
  return f;
}

// ------------------------------------------------------------------ routes

/** Builds the logviewer routes (mounted under /svc/api/logviewer behind the area's bearer auth). */
export function createLogviewerRoutes(deps: LogviewerRouteDeps): OpenAPIHono<AppEnv> {
  const router = createRouter();

  /**
   * A database that cannot be used now (unreachable, too slow, full, no SystemEvents table) is a 503 the
   * operator is told about, as on the hotspot; any other failure (`failed`: the database answered and the
   * statement is at fault) goes on as it is, to the app's 500 and its log.
   */
  const unusable = (entity: string, err: unknown): unknown => {
    if (!(err instanceof SyslogStoreError)) return err;
    switch (err.code) {
      case 'unavailable':
      case 'schema_missing':
      case 'storage_full':
        deps.onStoreError?.(entity, err);
        return new UnavailableError('The syslog database cannot be read right now.', {}, { cause: err });
      case 'failed':
        return err;
    }
  };

  const run = async (c: Context<AppEnv>, q: Query, withTime: boolean) => {
    const entity = c.get('principal').entity;
    const filter = filterOf(q, deps.timezone, withTime);
    const page: PageRequest = pageOf(q, DEFAULT_PER_PAGE, MAX_PER_PAGE);
    const store = deps.storeOf(entity);
    if (!store) throw new ForbiddenError(`Entity '${entity}' has no syslog database.`);
    let rows: SyslogRecord[];
    try {
      rows = await store.find(filter, page);
    } catch (err) {
      // A value the checks above let through and the database refused: the client's, so a 400 and nothing for the operator.
      if (err instanceof SyslogInputError)
        throw new BadRequestError(undefined, 'Invalid input: a filter value is one the syslog database cannot compare.');
      throw unusable(entity, err);
    }
    return c.json(paged(rows, page.page, page.perPage) as z.infer<typeof pageSchema>, 200);
  };

  router.openapi(searchRoute, (c) => run(c, c.req.valid('query'), true));
  // latest's schema has no time parameters (validation would drop them): look at the raw query.
  router.openapi(latestRoute, (c) =>
    run(c, { ...c.req.valid('query'), startTime: c.req.query('startTime'), endTime: c.req.query('endTime') }, false),
  );
  return router;
}
