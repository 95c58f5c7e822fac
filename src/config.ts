/**
 * The one typed configuration of netsvc.
 *
 * Sources, later ones winning: built-in defaults, the JSON file (`--config`,
 * else `netsvc.config.json` in the working directory when present), then
 * environment variables `NETSVC_<KEY>` where nested keys are joined with `__`
 * and camelCase becomes UPPER_SNAKE (`NETSVC_HTTP__PORT=9090`,
 * `NETSVC_DATA_DIR=/var/lib/netsvc`). Values are read as JSON when they parse,
 * else as strings. The result is validated once and frozen. This is the only
 * module that reads `process.env`.
 *
 * Flow sources: a declared source named like a default one (`netflow` on
 * UDP 2055, `lentor` on 2056) starts from that one's settings, so a partial
 * override (`NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC=0`) needs no
 * `listen`. Without `entities`, the default entity names the default
 * sources, and declared sources are added to them; with `entities`, the
 * declared sources are all there are.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.js';
import { DEFAULT_FLOW_SOURCES, flowSourcesSchema } from '../collector/listen/flow-source-config.js';
import { captureSchema } from '../storage/capture/capture-config.js';
import { geoSchema } from '../storage/geo/geo-config.js';
import { configInput, DEFAULT_ENTITY_STORES, finishConfig, type ConfigSources } from './config-sources.js';
export { ConfigError } from './config-error.js';
export { resolveSqlitePath } from './config-paths.js';
export type { ConfigSources } from './config-sources.js';

const databaseUrl = z
  .string()
  .regex(/^(sqlite:.+|mysql:\/\/.+|postgres(ql)?:\/\/.+)$/, 'must be sqlite:PATH, mysql://… or postgres://…');

const flowIngestSchema = z
  .object({
    /**
     * Nice value (1-19) given to every thread of the service but the one that reads the
     * flow sockets, so that under CPU pressure the socket is read first; 0 leaves all equal.
     */
    otherThreadsNice: z.number().int().min(0).max(19).default(10),
    /**
     * Read the flow sockets with recvmmsg batches through the native addon
     * built at install (Linux); false reads them through Node dgram, as
     * happens anyway when the addon is not built.
     */
    batchReceive: z.boolean().default(true),
  })
  .strict();

const dnsSchema = z
  .object({
    /** Resolvers for reverse lookups (`IP` or `IP:PORT`, IPv6 as `[ADDR]:PORT`); empty = the system's resolvers. */
    servers: z
      .array(
        z
          .string()
          .regex(
            /^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-fA-F:.]+\](:\d{1,5})?|[0-9a-fA-F]*:[0-9a-fA-F:.]+)$/,
            'must be IP, IP:PORT or [IPv6]:PORT',
          ),
      )
      .default([]),
    /** How long one PTR query may take before it is given up, in milliseconds. */
    timeoutMs: z.number().int().positive().default(1500),
    /** How long an answered PTR name is kept. */
    positiveTtlSec: z.number().int().nonnegative().default(3600),
    /** How long "no name" (NXDOMAIN, no PTR, timeout) is kept, so unknown addresses are not asked again at once. */
    negativeTtlSec: z.number().int().nonnegative().default(300),
    /** Most addresses the PTR cache remembers; the oldest go first. */
    maxEntries: z.number().int().positive().default(100_000),
  })
  .strict();

const syslogReceiverSchema = z
  .object({
    /** Runs the embedded syslog receiver when the entity below reads an `sqlite:` syslog database. */
    enabled: z.boolean().default(true),
    /**
     * Also when that entity's syslog database is MariaDB/PostgreSQL (usually fed by rsyslog):
     * the receiver then inserts into its SystemEvents as rsyslog's ommysql/ompgsql would.
     */
    feedExternal: z.boolean().default(false),
    /** Address the UDP and TCP listeners bind. */
    host: z.string().min(1).default('0.0.0.0'),
    /** One port for UDP and TCP; 514 needs root or CAP_NET_BIND_SERVICE. */
    port: z.number().int().min(0).max(65535).default(5514),
    udp: z.boolean().default(true),
    tcp: z.boolean().default(true),
    /** Entity whose `sqlite:` syslog database receives the messages. */
    entity: z.string().default('default'),
    /** Rows per INSERT transaction. */
    batchSize: z.number().int().positive().default(500),
    /** Longest a received message waits before it is written, in milliseconds. */
    flushIntervalMs: z.number().int().positive().default(1000),
    /** Longer messages are cut to this many bytes (and counted). */
    maxMessageBytes: z.number().int().min(480).max(1_048_576).default(65_536),
    /** Messages held while the database is slow; beyond this the oldest are dropped (and counted). */
    maxQueue: z.number().int().positive().default(100_000),
    /** TCP connections served at once; more are refused (and counted). */
    maxConnections: z.number().int().positive().default(512),
    /** TCP connections from one address at once, so one noisy address cannot take every slot. */
    maxConnectionsPerAddress: z.number().int().positive().default(32),
    /** A TCP connection that sends nothing for this long is closed (0 = never); rsyslog and syslog-ng senders reconnect. */
    tcpIdleTimeoutSec: z.number().int().min(0).default(300),
    /** UDP socket receive buffer in bytes (SO_RCVBUF), as for the flow sources; capped by net.core.rmem_max. */
    receiveBuffer: z
      .number()
      .int()
      .positive()
      .default(8 * 1024 * 1024),
  })
  .strict();

const hotspotSchema = z
  .object({
    /** radusergroup group whose radgroupcheck holds `Auth-Type := Reject`; daloRADIUS's name, so both tools agree on who is disabled. */
    disabledGroup: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 _ -')
      .default('daloRADIUS-Disabled-Users'),
    /** Largest hotspot `perPage`; larger values are reduced to it (api.md advises at most 1000). */
    maxPerPage: z.number().int().positive().default(2000),
  })
  .strict();

const databaseSchema = z
  .object({
    /** Opening one connection to a MariaDB/PostgreSQL server, in milliseconds. */
    connectTimeoutMs: z.number().int().positive().default(2000),
    /** One statement on such a server, in milliseconds. */
    statementTimeoutMs: z.number().int().positive().default(4000),
    /**
     * One whole store operation, waiting for a pooled connection included: a request
     * whose database is down, hung or restarting is answered 503 within this.
     */
    operationTimeoutMs: z.number().int().positive().default(5000),
  })
  .strict();

const entitySchema = z
  .object({
    flowSources: z.array(z.string()).default([]),
    radius: databaseUrl.optional(),
    syslog: databaseUrl.optional(),
  })
  .strict();

const defaultTimezone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Schema of the whole configuration; defaults live here and nowhere else. */
export const configSchema = z
  .object({
    dataDir: z.string().min(1).default('./data'),
    timezone: z
      .string()
      .refine((tz) => isValidTimezone(tz), 'must be an IANA time zone such as UTC or Europe/Paris')
      .default(defaultTimezone),
    http: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        /** Largest request body accepted, in bytes. */
        bodyLimit: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
    auth: z
      .object({
        /** Lifetime of an access token in seconds. */
        tokenTtlSec: z.number().int().positive().default(3600),
        /** HMAC key for tokens; when absent one is generated and kept in `<dataDir>/jwt.key`. */
        jwtSecret: z.string().min(32).optional(),
        /** Failed auth attempts allowed per client address within `failureWindowSec`. */
        maxFailures: z.number().int().positive().default(10),
        failureWindowSec: z.number().int().positive().default(300),
        /**
         * scrypt verifications running at once. One holds a core for ~60 ms; 1
         * leaves the other core of a 2-core machine to HTTP and flow ingest
         * whatever a wrong-secret storm sends (api/verify-budget.ts).
         */
        verifyConcurrency: z.number().int().positive().default(1),
        /**
         * Verifications waiting for a slot; beyond, 429 at once without hashing. Small, because
         * a login waits for those ranked with it or before it: (4 + 1) × ~60 ms at most.
         */
        verifyQueue: z.number().int().min(0).default(4),
        /** Verifications waiting from one client address. */
        verifyQueuePerAddress: z.number().int().positive().default(2),
        /** Secrets verified before that a login may reuse without scrypt, kept in memory (0: none; api/known-secrets.ts). */
        knownSecrets: z.number().int().min(0).default(1000),
      })
      .strict()
      .prefault({}),
    admin: z
      .object({
        /** The service's own store of entities, users and credentials. */
        database: z
          .string()
          .regex(/^sqlite:.+$/, 'must be sqlite:PATH')
          .default('sqlite:admin.sqlite'),
      })
      .strict()
      .prefault({}),
    capture: captureSchema.prefault({}),
    analytics: z
      .object({
        /**
         * Run a few flow queries over a small synthetic hour 3 s after serve listens, so that the
         * first real query finds its code compiled, in this thread and the scan worker's
         * (storage/flow-query/warm-up.ts; about 1 s of CPU once).
         */
        warmUp: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    /** Origin AS and country of flow addresses (storage/geo/geo-config.ts owns the schema). */
    geo: geoSchema.prefault({}),
    flowIngest: flowIngestSchema.prefault({}),
    dns: dnsSchema.prefault({}),
    syslogReceiver: syslogReceiverSchema.prefault({}),
    database: databaseSchema.prefault({}),
    hotspot: hotspotSchema.prefault({}),
    /** The collector's flow sources (collector/listen/flow-source-config.ts owns their schema and defaults). */
    flowSources: flowSourcesSchema,
    entities: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), entitySchema).default({
      default: { flowSources: Object.keys(DEFAULT_FLOW_SOURCES), ...DEFAULT_ENTITY_STORES },
    }),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    for (const [name, entity] of Object.entries(cfg.entities)) {
      entity.flowSources.forEach((source, i) => {
        if (!(source in cfg.flowSources)) {
          ctx.addIssue({
            code: 'custom',
            path: ['entities', name, 'flowSources', i],
            message: `names flow source '${source}', which is not declared in flowSources`,
          });
        }
      });
    }
  });

/** The validated, frozen configuration every component receives. */
export type Config = Readonly<z.infer<typeof configSchema>>;
export type { FlowSourceConfig } from '../collector/listen/flow-source-config.js';
export type EntityConfig = z.infer<typeof entitySchema>;
export type CaptureConfig = z.infer<typeof captureSchema>;
export type { GeoConfig } from '../storage/geo/geo-config.js';
export type DnsConfig = z.infer<typeof dnsSchema>;
export type DatabaseConfig = z.infer<typeof databaseSchema>;

/** The SQL clients' time limits the configuration sets. */
export function sqlTimeouts(config: Config): { connectMs: number; statementMs: number; operationMs: number } {
  const d = config.database;
  return { connectMs: d.connectTimeoutMs, statementMs: d.statementTimeoutMs, operationMs: d.operationTimeoutMs };
}

function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Builds the configuration from defaults, file, environment and flags; throws ConfigError naming the bad key. */
export function loadConfig(sources: ConfigSources = {}): Config {
  const cwd = sources.cwd ?? process.cwd();
  return finishConfig(validateConfigInput(configInput(sources, sources.env ?? process.env, cwd)), cwd);
}

/**
 * Validates what `configInput` gathered, applying every default; throws ConfigError naming the bad
 * key. The result is plain data, its dataDir not yet resolved nor frozen (`finishConfig`), as
 * config-cache.ts keeps it.
 */
export function validateConfigInput(raw: Record<string, unknown>): z.infer<typeof configSchema> {
  // In zod's own words, whatever process-wide wording was set since (api/router.ts sets one for
  // the routes at serve's start-up): a message never depends on what ran or was imported first.
  const result = configSchema.safeParse(raw, { error: (issue) => z.config().localeError?.(issue) ?? 'Invalid input' });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const key = issue.path.map(String).join('.') || '(root)';
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      const prefix = issue.path.length ? `${key}.` : '';
      const unknown = issue.keys.map((k) => `${prefix}${k}`).join(', ');
      throw new ConfigError(`invalid configuration: unknown key ${unknown}`, unknown);
    }
    message = `invalid configuration: ${key}: ${message}`;
    throw new ConfigError(message, key);
  }
  return result.data;
}
