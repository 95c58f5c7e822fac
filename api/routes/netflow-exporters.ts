/**
 * `GET /netflow/exporters`, a netsvc extension: the collector's counters per flow source and per
 * exporter address (datagrams, flows, bytes, drops, templates, sampling), for the caller's entity's
 * flow sources only. The counters come in through a small interface handed in by src/ (api/ does not
 * see the collector): the same numbers /metrics and `netsvc status` show.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';
import { ok } from '../envelope.js';
import type { createRouter } from '../router.js';
import { authFailures, netsvcExtension } from '../schemas.js';

/** The decoder counters of one exporter that the route reports (a subset of the collector's). */
export interface ExporterCounterValues {
  readonly packets: number;
  readonly flows: number;
  readonly bytes: number;
  readonly packetsInFlows: number;
  readonly malformed: number;
  readonly unknownVersion: number;
  readonly dataWithoutTemplate: number;
  readonly templatesAdded: number;
  readonly templatesUpdated: number;
  readonly templatesWithdrawn: number;
  readonly templatesExpired: number;
  readonly templatesRefused: number;
  readonly sequenceGaps: number;
  readonly sequenceMissing: number;
  readonly pendingExpired: number;
  readonly pendingDropped: number;
  readonly samplingRefused: number;
}

/** One flow source's counters, as the listeners keep them. */
export interface SourceCounterValues {
  readonly source: string;
  readonly listen: string;
  /** Datagrams taken from the socket for this source. */
  readonly received: number;
  /** Datagrams dropped because the decode queue was full. */
  readonly queueDrops: number;
  readonly exporters: Readonly<Record<string, ExporterCounterValues>>;
  /** Configured sampling intervals by exporter address (the per-exporter override). */
  readonly sampling: Readonly<Record<string, number>>;
}

/** Where the route reads the counters from (src/ adapts the running listeners). */
export interface ExporterCounterSource {
  sources(): readonly SourceCounterValues[];
}

const exporterSchema = z.object({
  address: z.string().openapi({ example: '192.0.2.10' }),
  datagrams: z.number().int().openapi({ description: 'Datagrams handed to the decoder' }),
  flows: z.number().int(),
  bytes: z.number().openapi({ description: 'Bytes of the decoded flows (scaled by sampling)' }),
  packets: z.number().openapi({ description: 'Packets of the decoded flows (scaled by sampling)' }),
  malformed: z.number().int().openapi({ description: 'Datagrams dropped because something in them did not fit' }),
  unknown_version: z.number().int(),
  data_without_template: z.number().int().openapi({ description: 'Data sets that arrived before (or without) their template' }),
  pending_dropped: z.number().int().openapi({ description: 'Held data sets dropped (waited too long, or buffer full)' }),
  sequence_gaps: z.number().int(),
  sequence_missing: z
    .number()
    .int()
    .openapi({ description: 'Units the sequence jumps skipped (v5: flows, v9: packets, IPFIX: records)' }),
  templates_added: z.number().int(),
  templates_updated: z.number().int(),
  templates_withdrawn: z.number().int(),
  templates_expired: z.number().int(),
  templates_refused: z.number().int(),
  sampling_refused: z.number().int(),
  sampling_interval: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'The configured sampling override for this exporter; null: none (wire intervals apply per flow)' }),
});

const exportersSchema = z
  .object({
    status: z.literal(true),
    result: z.object({
      sources: z.array(
        z.object({
          source: z.string().openapi({ example: 'netflow' }),
          listen: z.string().openapi({ example: '0.0.0.0:2055' }),
          datagrams_received: z.number().int().openapi({ description: 'Datagrams taken from the socket for this source' }),
          queue_drops: z.number().int().openapi({ description: 'Datagrams dropped because the decode queue was full' }),
          exporters: z.array(exporterSchema).openapi({ description: 'One per exporter address, most datagrams first' }),
        }),
      ),
    }),
  })
  .openapi('NetflowExporters');

const exportersRoute = createRoute({
  method: 'get',
  path: '/exporters',
  tags: ['netflow (netsvc extension)'],
  summary: 'Collector counters per flow source and exporter address, since serve started (netsvc extension)',
  ...netsvcExtension,
  responses: {
    200: { description: 'Counters', content: { 'application/json': { schema: exportersSchema } } },
    401: authFailures[401],
    403: authFailures[403],
  },
});

/** Adds `/exporters` to the netflow router. */
export function addExportersRoute(
  router: OpenAPIHono<AppEnv> & ReturnType<typeof createRouter>,
  deps: { counters: ExporterCounterSource; sourcesOf: (entity: string) => readonly string[] },
): void {
  router.openapi(exportersRoute, (c) => {
    const owned = new Set(deps.sourcesOf(c.get('principal').entity));
    const sources = deps.counters
      .sources()
      .filter((s) => owned.has(s.source))
      .map((s) => ({
        source: s.source,
        listen: s.listen,
        datagrams_received: s.received,
        queue_drops: s.queueDrops,
        exporters: Object.entries(s.exporters)
          .map(([address, e]) => ({
            address,
            datagrams: e.packets,
            flows: e.flows,
            bytes: e.bytes,
            packets: e.packetsInFlows,
            malformed: e.malformed,
            unknown_version: e.unknownVersion,
            data_without_template: e.dataWithoutTemplate,
            pending_dropped: e.pendingExpired + e.pendingDropped,
            sequence_gaps: e.sequenceGaps,
            sequence_missing: e.sequenceMissing,
            templates_added: e.templatesAdded,
            templates_updated: e.templatesUpdated,
            templates_withdrawn: e.templatesWithdrawn,
            templates_expired: e.templatesExpired,
            templates_refused: e.templatesRefused,
            sampling_refused: e.samplingRefused,
            sampling_interval: s.sampling[address] ?? null,
          }))
          .sort((a, b) => b.datagrams - a.datagrams || a.address.localeCompare(b.address)),
      }));
    return c.json(ok({ sources }) as z.infer<typeof exportersSchema>, 200);
  });
}
