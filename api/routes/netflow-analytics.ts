/**
 * Flow analytics, a netsvc extension of the netflow area (not in client API
 * 3.1.0): `top` (top-N by one to three dimensions, with `other`), `series`
 * (a metric per 1 min / 5 min / 1 h step, per top group) and `search`
 * (matching flows, paged by cursor), each for a window and an nfdump-syntax
 * filter. Same auth and flow-source rules as the 3.1.0 routes.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import {
  DIMENSION_NAMES,
  DimensionError,
  keyRecord,
  parseDimensions,
  type Dimension,
} from '../../storage/flow-query/dimensions.js';
import type { FlowAnalytics } from '../../storage/flow-query/flow-analytics.js';
import { FlowAnalyticsBusyError, FlowCursorError } from '../../storage/flow-query/flow-analytics.js';
import { FilterCompileError } from '../../storage/flow-query/filter-compile.js';
import { FilterSyntaxError } from '../../storage/flow-query/filter-parse.js';
import { MAX_PAGE } from '../../storage/flow-query/flow-pages.js';
import { MAX_POINTS, STEPS, stepPoints, type StepName } from '../../storage/flow-query/series.js';
import { MAX_TOP, TooManyGroupsError, type Counts } from '../../storage/flow-query/top-n.js';
import { GeoDataError } from '../../storage/geo/geo-error.js';
import type { AppEnv } from '../context.js';
import { ok } from '../envelope.js';
import { BadRequestError, UnavailableError } from '../errors.js';
import type { createRouter } from '../router.js';
import { authFailures, failureSchema, netsvcExtension } from '../schemas.js';
import { formatFlowTime, formatIsoUtc, isRepresentableTime, QUERY_TIME_FORMS } from './netflow-format.js';

const tags = ['netflow (netsvc extension)'];

const text = (name: string, description: string, example?: string, max = 4096) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .optional()
    .openapi({ param: { name, in: 'query' }, description, example });

const minute = (name: 'start' | 'end') =>
  z
    .string()
    .max(40, `must be a time: ${QUERY_TIME_FORMS}`)
    .openapi({
      param: { name, in: 'query' },
      description: `A minute, inclusive, in the configured time zone: ${QUERY_TIME_FORMS}`,
      example: name === 'start' ? '2026/03/25 09:00' : '2026/03/25 09:59',
    });

const common = {
  start: minute('start'),
  end: minute('end'),
  entity: text('entity', 'Flow source, `netflow` (default); the token’s entity must own it', 'netflow', 64),
  filter: text(
    'filter',
    'nfdump filter syntax, e.g. `proto tcp and dst port 443 and not src net 10.0.0.0/8`; plus `src|dst country CC`',
    'dst port 443',
  ),
};
const metricParam = z
  .enum(['bytes', 'packets', 'flows'])
  .optional()
  .openapi({ param: { name: 'metric', in: 'query' }, description: 'What groups are ranked by (default bytes)' });
const byParam = (required: boolean) =>
  text(
    'by',
    `Comma-separated dimensions, one to three of ${DIMENSION_NAMES.join(', ')}; an address may be cut to a prefix: src_ip/24 (IPv4 /24, IPv6 /64) or src_ip/24/48${required ? '' : '; none: totals only'}`,
    'src_ip,dst_port',
    200,
  );
const countParam = (name: string, max: number, def: number) => text(name, `1 to ${max}, default ${def}`, String(def), 8);

const counts = z.object({ flows: z.number(), packets: z.number(), bytes: z.number() });
const keyed = z.record(z.string(), z.union([z.string(), z.number()]));

const topSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      rows: z.array(z.intersection(keyed, counts)).openapi({
        description: 'One row per group, largest first; the dimensions by name (proto as its number), then the counts',
        example: [{ src_ip: '192.0.2.1', dst_port: 443, flows: 12, packets: 340, bytes: 410_000 }],
      }),
      other: counts,
      total: counts,
      groups: z.number().int().openapi({ description: 'Distinct groups matched (rows and those in other)' }),
    }),
  })
  .openapi('FlowTop');

const seriesSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      step: z.enum(['1m', '5m', '1h']),
      metric: z.enum(['bytes', 'packets', 'flows']),
      points: z.array(z.string()).openapi({ description: 'Start of each step, ISO 8601 UTC' }),
      lines: z.array(z.object({ key: keyed, total: z.number(), values: z.array(z.number()) })),
      other: z.array(z.number()),
      total: z.array(z.number()),
    }),
  })
  .openapi('FlowSeries');

const flowSchema = z.object({
  ts: z.string(),
  received: z.string(),
  start: z.string(),
  end: z.string(),
  src_ip: z.string(),
  dst_ip: z.string(),
  src_port: z.number().int(),
  dst_port: z.number().int(),
  proto: z.number().int(),
  tcp_flags: z.number().int(),
  tos: z.number().int(),
  input_if: z.number().int(),
  output_if: z.number().int(),
  src_as: z.number().int(),
  dst_as: z.number().int(),
  exporter: z.string(),
  packets: z.string(),
  bytes: z.string(),
});

const searchSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      flows: z.array(flowSchema),
      total: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'Flows matching the filter in [start, as_of); null with count=false' }),
      as_of: z.string().openapi({ description: 'The snapshot every page of this search reads: flows received before it' }),
      next_cursor: z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; null on the last' }),
    }),
  })
  .openapi('FlowSearch');

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** What the analytics routes can answer besides 200 (asBadRequest below says which error is which). */
const analyticsFailures = {
  ...authFailures,
  503: {
    description:
      'Too many flow queries are running and waiting already (two scan, eight wait), or the AS and country tables cannot be read; try again shortly',
    content: { 'application/json': { schema: failureSchema } },
  },
};

const topRoute = createRoute({
  method: 'get',
  path: '/top',
  tags,
  summary: 'Top-N groups of matching flows by one to three dimensions, with the rest as `other` (netsvc extension)',
  ...netsvcExtension,
  request: {
    query: z.object({ ...common, by: byParam(true), metric: metricParam, limit: countParam('limit', MAX_TOP, 10) }),
  },
  responses: { 200: json(topSchema, 'Top-N'), ...analyticsFailures },
});

const seriesRoute = createRoute({
  method: 'get',
  path: '/series',
  tags,
  summary: 'A metric per step for the top-N groups plus `other`, or for the total (netsvc extension)',
  ...netsvcExtension,
  request: {
    query: z.object({
      ...common,
      by: byParam(false),
      metric: metricParam,
      limit: countParam('limit', 100, 10),
      step: z
        .enum(['1m', '5m', '1h'])
        .optional()
        .openapi({ param: { name: 'step', in: 'query' }, description: 'Step length (default 5m)' }),
    }),
  },
  responses: { 200: json(seriesSchema, 'Series'), ...analyticsFailures },
});

const searchRoute = createRoute({
  method: 'get',
  path: '/search',
  tags,
  summary: 'Matching flows, by time or bytes, a page at a time with a cursor (netsvc extension)',
  ...netsvcExtension,
  request: {
    query: z.object({
      ...common,
      order: z
        .enum(['time', 'bytes'])
        .optional()
        .openapi({
          param: { name: 'order', in: 'query' },
          description: 'time: newest flow start first (default); bytes: largest first',
        }),
      limit: countParam('limit', MAX_PAGE, 100),
      cursor: text('cursor', 'The `next_cursor` of the previous page', undefined, 2048),
      count: z
        .enum(['true', 'false'])
        .optional()
        .openapi({
          param: { name: 'count', in: 'query' },
          description: 'false: do not count the matches (a scan of the whole window); `total` is then null. Default true',
        }),
    }),
  },
  responses: { 200: json(searchSchema, 'A page of flows'), ...analyticsFailures },
});

/** What the analytics routes need from the netflow routes. */
export interface AnalyticsRouteDeps {
  analytics: FlowAnalytics;
  timezone: string;
  /** The flow source a request names, checked against the token's entity (403 otherwise). */
  sourceFor: (entity: string, requested: string | undefined) => string;
  parseWindow: (start: string, end: string, zone: string) => { from: number; to: number };
}

function integer(name: string, raw: string | undefined, max: number, def: number): number {
  if (raw === undefined) return def;
  const n = /^\d{1,8}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) throw new BadRequestError(name, `Invalid parameter '${name}': must be an integer from 1 to ${max}.`);
  return n;
}

function dimensions(raw: string | undefined, required: boolean): Dimension[] {
  if (raw === undefined || raw.trim() === '') {
    if (required) throw new BadRequestError('by', `Missing parameter 'by': one to three of ${DIMENSION_NAMES.join(', ')}.`);
    return [];
  }
  try {
    return parseDimensions(raw);
  } catch (err) {
    if (err instanceof DimensionError) throw new BadRequestError('by', `Invalid parameter 'by': ${err.message}.`);
    throw err;
  }
}

/** Runs a query, turning a filter or cursor mistake into a 400 naming the parameter. */
async function answeringAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asBadRequest(err);
  }
}

function asBadRequest(err: unknown): unknown {
  {
    if (err instanceof FilterSyntaxError) {
      return new BadRequestError('filter', `Invalid parameter 'filter': ${err.message}`, {
        position: err.position,
        column: err.column,
        expected: err.expected,
      });
    }
    if (err instanceof FlowCursorError) return new BadRequestError('cursor', `Invalid parameter 'cursor': it ${err.message}.`);
    if (err instanceof TooManyGroupsError) return new BadRequestError('by', `Invalid parameter 'by': ${err.message}.`);
    if (err instanceof GeoDataError) return new UnavailableError('The AS and country tables cannot be read right now.');
    if (err instanceof FlowAnalyticsBusyError)
      return new UnavailableError(`Too many flow queries are running; try again shortly.`);
    if (err instanceof FilterCompileError) return new BadRequestError('filter', `Invalid parameter 'filter': ${err.message}`);
    return err;
  }
}

function row(dims: readonly Dimension[], key: ReadonlyArray<string | number>, c: Counts): Record<string, string | number> {
  return { ...keyRecord(dims, key), flows: c.flows, packets: c.packets, bytes: c.bytes };
}

/** Adds the analytics routes to the netflow router. */
export function addAnalyticsRoutes(
  router: OpenAPIHono<AppEnv> & ReturnType<typeof createRouter>,
  deps: AnalyticsRouteDeps,
): void {
  const zone = deps.timezone;

  router.openapi(topRoute, async (c) => {
    const q = c.req.valid('query');
    const source = deps.sourceFor(c.get('principal').entity, q.entity);
    const { from, to } = deps.parseWindow(q.start, q.end, zone);
    const by = dimensions(q.by, true);
    const limit = integer('limit', q.limit, MAX_TOP, 10);
    const t = await answeringAsync(() =>
      deps.analytics.top({ source, from, to, filter: q.filter, by, metric: q.metric ?? 'bytes', limit }),
    );
    return c.json(
      ok({
        rows: t.rows.map((r) => row(by, r.key, r)),
        other: t.other,
        total: t.total,
        groups: t.groups,
      }) as z.infer<typeof topSchema>,
      200,
    );
  });

  router.openapi(seriesRoute, async (c) => {
    const q = c.req.valid('query');
    const source = deps.sourceFor(c.get('principal').entity, q.entity);
    const { from, to } = deps.parseWindow(q.start, q.end, zone);
    const by = dimensions(q.by, false);
    const limit = integer('limit', q.limit, 100, 10);
    const step: StepName = q.step ?? '5m';
    if (stepPoints(from, to, step).length > MAX_POINTS) {
      throw new BadRequestError(
        'step',
        `Invalid parameter 'step': ${step} steps over this window make more than ${MAX_POINTS} points; choose a longer step (${Object.keys(STEPS).join(', ')}).`,
      );
    }
    const metric = q.metric ?? 'bytes';
    const s = await answeringAsync(() => deps.analytics.series({ source, from, to, filter: q.filter, by, metric, limit, step }));
    return c.json(
      ok({
        step: s.step,
        metric,
        points: s.points.map(formatIsoUtc),
        lines: s.lines.map((l) => ({
          key: keyRecord(by, l.key),
          total: l.total,
          values: l.values,
        })),
        other: s.other,
        total: s.total,
      }) as z.infer<typeof seriesSchema>,
      200,
    );
  });

  router.openapi(searchRoute, async (c) => {
    const q = c.req.valid('query');
    const source = deps.sourceFor(c.get('principal').entity, q.entity);
    const { from, to } = deps.parseWindow(q.start, q.end, zone);
    const limit = integer('limit', q.limit, MAX_PAGE, 100);
    const page = await answeringAsync(() =>
      deps.analytics.flows({
        source,
        from,
        to,
        filter: q.filter,
        order: q.order ?? 'time',
        limit,
        cursor: q.cursor,
        count: q.count !== 'false',
      }),
    );
    const flows = page.flows.map((f) => ({
      ts: formatFlowTime(isRepresentableTime(f.start) ? f.start : f.received, zone),
      received: formatIsoUtc(f.received),
      start: isRepresentableTime(f.start) ? formatIsoUtc(f.start) : '',
      end: isRepresentableTime(f.end) ? formatIsoUtc(f.end) : '',
      src_ip: f.srcIp,
      dst_ip: f.dstIp,
      src_port: f.srcPort,
      dst_port: f.dstPort,
      proto: f.proto,
      tcp_flags: f.tcpFlags,
      tos: f.tos,
      input_if: f.inputIf,
      output_if: f.outputIf,
      src_as: f.srcAs,
      dst_as: f.dstAs,
      exporter: f.exporter,
      packets: String(f.packets),
      bytes: String(f.bytes),
    }));
    return c.json(
      ok({ flows, total: page.total, as_of: formatIsoUtc(page.asOf), next_cursor: page.cursor ?? null }) as z.infer<
        typeof searchSchema
      >,
      200,
    );
  });
}
