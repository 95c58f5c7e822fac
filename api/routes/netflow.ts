/**
 * The netflow area (api.md 2.2 and 4.1, decisions.md Netflow): `latest`,
 * `kpi`, `flows` and `resolve`. Storage is reached only through
 * NetflowQuery and ReverseDns; this module parses parameters and formats.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import ipaddr from 'ipaddr.js';
import type { ReverseDns } from '../../storage/dns/reverse-dns.js';
import { serviceName } from '../../storage/kpi/iana-names.js';
import type { FlowAnalytics } from '../../storage/flow-query/flow-analytics.js';
import type { NetflowQuery } from '../../storage/kpi/netflow-query.js';
import type { AppEnv } from '../context.js';
import { ok } from '../envelope.js';
import { BadRequestError, ForbiddenError } from '../errors.js';
import { createRouter } from '../router.js';
import { addAnalyticsRoutes } from './netflow-analytics.js';
import { addExportersRoute, type ExporterCounterSource } from './netflow-exporters.js';
import { authFailures } from '../schemas.js';
import {
  countJson,
  formatDuration,
  formatFlowTime,
  formatIsoUtc,
  formatPorts,
  formatQueryMinute,
  formatTcpFlags,
  formatTraffic,
  isRepresentableTime,
  parseQueryMinute,
  QUERY_TIME_FORMS,
  percent,
  protocolName,
  throughputMbps,
  verdict,
} from './netflow-format.js';

/** What the netflow routes are built from. */
export interface NetflowRouteDeps {
  query: NetflowQuery;
  dns: ReverseDns;
  /** IANA zone of query times and flow `ts`. */
  timezone: string;
  /** Flow sources an entity owns (config `entities.<name>.flowSources`). */
  sourcesOf: (entity: string) => readonly string[];
  /** Longest a `resolve` request waits for answers, in ms. */
  resolveBudgetMs?: number;
  /** Flow analytics (`top`, `series`, `search`, netsvc extensions); absent: those routes are not served. */
  analytics?: FlowAnalytics;
  /** The collector's counters (`exporters`, a netsvc extension); absent: that route is not served. */
  exporters?: ExporterCounterSource;
}

/** Flow records per request (api.md 8). */
export const FLOWS_CAP = 200;
/** IPs per resolve request (api.md 8). */
export const RESOLVE_CAP = 20;
/** Longest `kpi`/`flows` window, in hours (31 days): bounds the hourly points and files one request reads. */
export const WINDOW_CAP_HOURS = 744;
const DEFAULT_SOURCE = 'netflow';
const MINUTE_MS = 60_000;

const minute = (name: string) =>
  z
    .string()
    .max(40, `must be a time: ${QUERY_TIME_FORMS}`)
    .openapi({
      param: { name, in: 'query' },
      description: `A minute, inclusive, in the configured time zone: ${QUERY_TIME_FORMS} (seconds are dropped; an ISO time with an offset is converted)`,
      example: name === 'start' ? '2026/03/25 09:00' : '2026/03/25 09:59',
    });

const entityParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a flow source name')
  .optional()
  .openapi({
    param: { name: 'entity', in: 'query' },
    description: 'Flow source, `netflow` (default) or `lentor`; the token’s entity must own it',
    example: 'netflow',
  });

const latestSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      start: z.string().openapi({ example: '2026/03/25 09:00' }),
      end: z.string().openapi({ example: '2026/03/25 09:59' }),
      latest_file: z.string().openapi({ example: 'nfcapd.202603250900' }),
      interval_sec: z.number().int().openapi({ example: 3600 }),
      interval_label: z.string().openapi({ example: '1h' }),
      is_cached: z.boolean(),
      data_start: z.string().openapi({ example: '2026/03/01 00:00' }),
      data_end: z.string().openapi({ example: '2026/03/25 09:59' }),
    }),
  })
  .openapi('NetflowLatest');

/** A count in JSON (countJson): exact, a number up to 2^53 − 1 and a string of decimal digits above. */
const count = z.union([z.number().int().min(0), z.string().regex(/^\d+$/)]).openapi({
  description: 'Exact count: a JSON number up to 2^53 − 1 (9007199254740991), above that a string of decimal digits',
  example: 1500,
});

const addressTop = z.object({ ip: z.string(), bytes: count, packets: count, flows: count });

const kpiSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      meta: z.object({
        start: z.string(),
        end: z.string(),
        source: z.enum(['hourly_cache', 'fallback']),
      }),
      kpi: z.object({
        total_traffic: z.string().openapi({ example: '169 G' }),
        total_bytes: count,
        active_flows: z.number().int(),
        avg_throughput_mbps: z.number(),
        denied_flows: z.number().int(),
      }),
      top_src: z.array(addressTop),
      top_dst_ip: z.array(addressTop),
      top_dst: z.array(
        z.object({
          port: z.number().int(),
          label: z.string().openapi({ example: 'https' }),
          flows: z.number().int(),
          bytes: count,
        }),
      ),
      protocols: z.array(
        z.object({
          proto: z.string().openapi({ example: 'TCP' }),
          proto_num: z.number().int(),
          bytes: count,
          flows: z.number().int(),
          pct: z.number(),
        }),
      ),
      timeseries: z.array(
        z.object({ timestamp: z.string().openapi({ example: '2026-03-25T09:00:00Z' }), bytes: count, flows: z.number().int() }),
      ),
    }),
  })
  .openapi('NetflowKpi');

const flowRecord = z
  .object({
    ts: z.string().openapi({ example: '2026-03-25 09:41:07' }),
    src_ip: z.string(),
    dst_ip: z.string(),
    dst_fqdn: z.string(),
    src_port: z.string(),
    dst_port: z.string(),
    proto: z.string(),
    flags: z.string().openapi({ example: '.AP...' }),
    packets: z.string().openapi({
      description: 'Exact decimal count, up to 2^64 − 1 and beyond (scaled by sampling)',
      example: '18446744073709551615',
    }),
    bytes: z
      .string()
      .openapi({ description: 'Exact decimal count, up to 2^64 − 1 and beyond (scaled by sampling)', example: '1500' }),
    duration: z.string().openapi({ example: '1.250' }),
    verdict: z.enum(['Allow', 'Deny']),
  })
  .openapi('FlowRecord');

const flowsSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      flows: z.array(flowRecord),
      total: z.number().int().openapi({
        description:
          'Records returned (api.md 3.1.0), at most `limit`; not the number of flows in the window, which kpi.active_flows gives',
      }),
    }),
  })
  .openapi('NetflowFlows');

const resolveSchema = z
  .object({ status: z.literal(true), result: z.record(z.string(), z.string()) })
  .openapi('NetflowResolve', { example: { status: true, result: { '8.8.8.8': 'dns.google', '192.0.2.1': '' } } });

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const latestRoute = createRoute({
  method: 'get',
  path: '/latest',
  tags: ['netflow'],
  summary: 'Time range of the latest capture file and of all stored data',
  request: { query: z.object({ entity: entityParam }) },
  responses: { 200: json(latestSchema, 'Latest-file range'), ...authFailures },
});

const kpiRoute = createRoute({
  method: 'get',
  path: '/kpi',
  tags: ['netflow'],
  summary: 'Traffic KPIs, top talkers, protocols and an hourly timeseries for a window (both ends inclusive minutes)',
  request: { query: z.object({ start: minute('start'), end: minute('end'), entity: entityParam }) },
  responses: { 200: json(kpiSchema, 'KPI result'), ...authFailures },
});

const flowsRoute = createRoute({
  method: 'get',
  path: '/flows',
  tags: ['netflow'],
  summary: 'Flow records received in a window, newest first (at most 200)',
  request: {
    query: z.object({
      start: minute('start'),
      end: minute('end'),
      limit: z
        .string()
        .regex(/^\d+$/, 'must be an integer of at least 1')
        .optional()
        .openapi({
          param: { name: 'limit', in: 'query' },
          description: 'Default 200; above 200 is reduced to 200',
          example: '200',
        }),
      entity: entityParam,
    }),
  },
  responses: { 200: json(flowsSchema, 'Flows result'), ...authFailures },
});

const resolveRoute = createRoute({
  method: 'get',
  path: '/resolve',
  tags: ['netflow'],
  summary: 'Reverse DNS of up to 20 IPs (invalid ones skipped, unanswered ones "")',
  request: {
    query: z.object({
      ips: z
        .string()
        .optional()
        .openapi({
          param: { name: 'ips', in: 'query' },
          description: 'Comma-separated IPv4/IPv6 addresses',
          example: '8.8.8.8,2001:4860:4860::8888',
        }),
    }),
  },
  responses: { 200: json(resolveSchema, 'Resolve map'), 400: authFailures[400], 401: authFailures[401], 403: authFailures[403] },
});

/** The time window `[from, to)` of two inclusive minutes; 400 naming the parameter when one is not a valid time. */
export function parseWindow(start: string, end: string, zone: string): { from: number; to: number } {
  const from = parseQueryMinute(start, zone);
  if (from === undefined)
    throw new BadRequestError('start', `Invalid parameter 'start': '${start}' is not a valid time (${QUERY_TIME_FORMS}).`);
  const last = parseQueryMinute(end, zone);
  if (last === undefined)
    throw new BadRequestError('end', `Invalid parameter 'end': '${end}' is not a valid time (${QUERY_TIME_FORMS}).`);
  if (last < from) throw new BadRequestError('end', `Invalid parameter 'end': it must not be before 'start'.`);
  const to = last + MINUTE_MS;
  if (to - from > WINDOW_CAP_HOURS * 3_600_000) {
    throw new BadRequestError(
      'end',
      `Invalid parameter 'end': the window may span at most ${WINDOW_CAP_HOURS} hours (31 days) from 'start'.`,
    );
  }
  return { from, to };
}

/** The IPs of a `resolve` request: split on commas, trimmed, invalid ones skipped, de-duplicated, the first 20. */
export function parseIpList(text: string | undefined): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of (text ?? '').split(',')) {
    const ip = raw.trim();
    let normal: string;
    if (ipaddr.IPv4.isValidFourPartDecimal(ip)) normal = ip;
    else if (!ip.includes('%') && ipaddr.IPv6.isValid(ip)) normal = ipaddr.IPv6.parse(ip).toNormalizedString();
    else continue;
    if (seen.has(normal)) continue;
    seen.add(normal);
    out.push(ip);
    if (out.length === RESOLVE_CAP) break;
  }
  return out;
}

function intervalLabel(sec: number): string {
  if (sec % 3600 === 0) return `${sec / 3600}h`;
  if (sec % 60 === 0) return `${sec / 60}m`;
  return `${sec}s`;
}

/** Builds the netflow routes (mounted under /svc/api/netflow behind the area's bearer auth). */
export function createNetflowRoutes(deps: NetflowRouteDeps): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const zone = deps.timezone;
  const budget = deps.resolveBudgetMs ?? 2000;

  /** The flow source a request names, once the token's entity is known to own it. */
  const sourceFor = (entity: string, requested: string | undefined): string => {
    const source = requested ?? DEFAULT_SOURCE;
    if (!deps.sourcesOf(entity).includes(source) || !deps.query.sources().includes(source)) {
      throw new ForbiddenError(`Flow source '${source}' does not belong to entity '${entity}'.`);
    }
    return source;
  };

  router.openapi(latestRoute, (c) => {
    const source = sourceFor(c.get('principal').entity, c.req.valid('query').entity);
    const l = deps.query.latest(source);
    return c.json(
      ok({
        start: formatQueryMinute(l.hourStart, zone),
        end: formatQueryMinute(l.hourEnd - MINUTE_MS, zone),
        latest_file: l.fileName,
        interval_sec: l.intervalSec,
        interval_label: intervalLabel(l.intervalSec),
        is_cached: l.cached,
        data_start: formatQueryMinute(l.dataStart, zone),
        data_end: formatQueryMinute(l.dataEnd - MINUTE_MS, zone),
      }) as z.infer<typeof latestSchema>,
      200,
    );
  });

  router.openapi(kpiRoute, async (c) => {
    const q = c.req.valid('query');
    const source = sourceFor(c.get('principal').entity, q.entity);
    const { from, to } = parseWindow(q.start, q.end, zone);
    const k = await deps.query.kpi(source, from, to);
    return c.json(
      ok({
        meta: { start: q.start, end: q.end, source: k.origin },
        kpi: {
          total_traffic: formatTraffic(k.bytes),
          total_bytes: countJson(k.bytes),
          active_flows: k.flows,
          avg_throughput_mbps: throughputMbps(k.bytes, to - from),
          denied_flows: k.rstFlows,
        },
        top_src: k.topSrc.map((e) => ({
          ip: e.ip,
          bytes: countJson(e.bytes),
          packets: countJson(e.packets),
          flows: countJson(e.flows),
        })),
        top_dst_ip: k.topDst.map((e) => ({
          ip: e.ip,
          bytes: countJson(e.bytes),
          packets: countJson(e.packets),
          flows: countJson(e.flows),
        })),
        top_dst: k.topPorts.map((e) => ({ port: e.port, label: serviceName(e.port), flows: e.flows, bytes: countJson(e.bytes) })),
        protocols: k.protocols.map((p) => ({
          proto: protocolName(p.proto),
          proto_num: p.proto,
          bytes: countJson(p.bytes),
          flows: p.flows,
          pct: percent(p.bytes, k.bytes),
        })),
        timeseries: k.hours.map((h) => ({ timestamp: formatIsoUtc(h.hourStart), bytes: countJson(h.bytes), flows: h.flows })),
      }) as z.infer<typeof kpiSchema>,
      200,
    );
  });

  router.openapi(flowsRoute, async (c) => {
    const q = c.req.valid('query');
    const source = sourceFor(c.get('principal').entity, q.entity);
    const { from, to } = parseWindow(q.start, q.end, zone);
    const asked = q.limit === undefined ? FLOWS_CAP : Number(q.limit);
    if (!(asked >= 1)) throw new BadRequestError('limit', `Invalid parameter 'limit': must be an integer of at least 1.`);
    const rows = await deps.query.flows(source, from, to, Math.min(asked, FLOWS_CAP));
    const flows = rows.map((f) => ({
      // Decoders clamp implausible times; a start from an older file that no Date holds shows the received time.
      ts: formatFlowTime(isRepresentableTime(f.start) ? f.start : f.received, zone),
      src_ip: f.srcIp,
      dst_ip: f.dstIp,
      // From the PTR cache only: a miss starts a lookup for the next request and never holds this one.
      dst_fqdn: deps.dns.peek(f.dstIp),
      ...formatPorts(f.proto, f.srcPort, f.dstPort),
      proto: protocolName(f.proto),
      flags: formatTcpFlags(f.tcpFlags, f.proto),
      packets: String(f.packets),
      bytes: String(f.bytes),
      duration: formatDuration(f.start, f.end),
      verdict: f.proto === 6 ? verdict(f.tcpFlags) : ('Allow' as const),
    }));
    return c.json(ok({ flows, total: flows.length }) as z.infer<typeof flowsSchema>, 200);
  });

  router.openapi(resolveRoute, async (c) => {
    const ips = parseIpList(c.req.valid('query').ips);
    const names = ips.length ? await deps.dns.resolve(ips, budget) : new Map<string, string>();
    const result: Record<string, string> = {};
    for (const ip of ips) result[ip] = names.get(ip) ?? '';
    return c.json(ok(result) as z.infer<typeof resolveSchema>, 200);
  });

  if (deps.analytics) addAnalyticsRoutes(router, { analytics: deps.analytics, timezone: zone, sourceFor, parseWindow });
  if (deps.exporters) addExportersRoute(router, { counters: deps.exporters, sourcesOf: deps.sourcesOf });

  return router;
}
