/**
 * Prometheus metrics (prom-client) of the service: the flow collector's
 * counters per source and exporter, the embedded syslog receiver's
 * counters, the capture storage's counters (writer, queries, retention, KPI
 * cache builds), plus the process's own metrics.
 *
 * Counters are not copied on every event: components keep plain numbers
 * (the decoder's per-exporter counters, the listener's queue counters) and
 * the registry reads them when scraped, through the providers registered
 * here. One registry per service instance; no global state.
 */
import { FLOW_METRIC_PREFIX, flowMetricName, SYSLOG_METRIC_PREFIX } from './metric-names.js';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { COUNTER_NAMES, type CounterName, type ExporterCounters } from '../collector/decode/collector-counters.js';
import type { SyslogReceiverCounters, SyslogUdpStats } from '../collector/syslog/syslog-receiver.js';
import type { SocketStats, SourceStats } from '../collector/listen/flow-listeners.js';
import type { ReadStats } from '../storage/capture/reader.js';
import type { WriterCounters } from '../storage/capture/writer-context.js';
import type { QueryCounters } from '../storage/kpi/netflow-query.js';

/** What the flow listeners report at scrape time. */
export interface FlowStatsProvider {
  sourceStats(): SourceStats[];
  socketStats(): SocketStats[];
}

/** What the embedded syslog receiver reports at scrape time (SyslogReceiver fits). */
export interface SyslogStatsProvider {
  readonly counters: Readonly<SyslogReceiverCounters>;
  readonly queueDepth: number;
  readonly openConnections: number;
  /** The UDP socket's receive buffer and kernel drops, when UDP listens. */
  udpStats?(): SyslogUdpStats | undefined;
}

/**
 * The capture storage's counter objects, read at scrape time (CaptureWriter,
 * CaptureNetflowQuery, CaptureRetention and KpiBuilder fit); any may be absent.
 */
export interface StorageStatsProvider {
  writer?: { readonly counters: Readonly<WriterCounters> };
  query?: { readonly counters: Readonly<QueryCounters> };
  retention?: { readonly counters: Readonly<{ filesRemoved: number; bytesFreed: number; errors: number }> };
  kpiBuilder?: { readonly stats: Readonly<ReadStats> };
}

/** What the auth endpoints report at scrape time (AuthService fits). */
export interface AuthStatsProvider {
  readonly counters: Readonly<{ rateLimited: number; verifications: number; busyRefused: number; knownSecretHits: number }>;
  readonly verifyQueueDepth: number;
}

export { FLOW_METRIC_PREFIX, flowMetricName, SYSLOG_METRIC_PREFIX } from './metric-names.js';

/** The metrics registry of one service instance. */
export interface Metrics {
  readonly registry: Registry;
  /** Content-Type of `text()`. */
  readonly contentType: string;
  /** Adds the counters of a set of flow listeners (or an import run) to every scrape. */
  addFlowStats(provider: FlowStatsProvider): void;
  /** Adds the embedded syslog receiver's counters (`netsvc_syslog_*`); absent from scrapes until a receiver runs. */
  addSyslogReceiver(receiver: SyslogStatsProvider): void;
  /** Adds the capture storage's counters (`netsvc_capture_*`, `netsvc_query_*`, `netsvc_retention_*`, `netsvc_kpi_build_*`). */
  addStorageStats(provider: StorageStatsProvider): void;
  /** Adds the auth endpoints' counters (`netsvc_auth_*`). */
  addAuthStats(provider: AuthStatsProvider): void;
  /** The exposition text, for `GET /metrics`. */
  text(): Promise<string>;
}

/** Help text per decoder counter. */
const HELP: Record<CounterName, string> = {
  packets: 'Export datagrams handed to the decoder',
  flows: 'Flow records decoded',
  bytes: 'Bytes of the decoded flows (scaled by sampling)',
  packetsInFlows: 'Packets of the decoded flows (scaled by sampling)',
  malformed: 'Datagrams dropped because their contents did not fit together',
  unknownVersion: 'Datagrams with a version other than 5, 9 or 10',
  dataWithoutTemplate: 'Data sets that arrived before or without their template',
  templatesAdded: 'Templates learned',
  templatesUpdated: 'Templates re-announced with a different layout',
  templatesWithdrawn: 'Templates withdrawn by the exporter (IPFIX)',
  templatesExpired: 'Templates forgotten after their time to live',
  optionsRecords: 'Options data records read (sampling, system init time)',
  recordsWithoutAddress: 'Data records with counters but no IP address, kept with the unspecified address',
  recordsNotFlows: 'Data records with neither an IP address nor a byte or packet counter, skipped',
  recordsInMalformed: 'Data records taken back because the rest of their datagram or held set was malformed',
  setsReserved: 'Sets with a reserved set id, skipped unread',
  sequenceGaps: 'Forward jumps of the export sequence number',
  sequenceMissing: 'Units skipped by sequence jumps (v5 flows, v9 packets, IPFIX records)',
  pendingBuffered: 'Data sets held until their template arrives',
  pendingDecoded: 'Held data sets decoded when their template arrived',
  pendingExpired: 'Held data sets dropped after waiting too long',
  pendingDropped: 'Held data sets dropped because the buffer was full',
  templatesRefused: 'Templates not stored: too many fields, or the exporter spent its template budget',
  templatesEvicted: 'Templates forgotten to respect a cap, least recently announced first',
  domainsEvicted: 'Observation domains forgotten to respect a cap, least recently used first',
  timestampsClamped: 'Flow times outside the plausible window, replaced by the export time',
  samplingRefused: 'Sampling intervals above the bound, not applied',
  sectionsUnreadable:
    'Sampled-packet records dropped: their packet section held no readable IP header and the template no addresses',
  reverseFlows:
    'Flow rows made from the return direction of two-way records (RFC 5103 biflows, ASA NSEL responder counts), included in flows',
};

/** The receiver's counters other than the per-transport ones: metric name suffix and help text. */
const SYSLOG_COUNTERS: ReadonlyArray<readonly [keyof SyslogReceiverCounters, string, string]> = [
  ['stored', 'stored_total', 'Syslog messages written to SystemEvents'],
  [
    'malformed',
    'malformed_total',
    'Syslog messages stored from a best-effort parse (no or bad PRI, no header, bad timestamp or structured data)',
  ],
  [
    'truncated',
    'truncated_total',
    'Syslog messages cut to fit: longer than maxMessageBytes, or host/tag longer than their SystemEvents column',
  ],
  [
    'dropped',
    'dropped_total',
    'Syslog messages lost: the oldest queued while the database failed past maxQueue, or unwritten at shutdown',
  ],
  ['writeErrors', 'write_errors_total', 'Batch writes to SystemEvents that failed (the batch stays queued and is retried)'],
  ['tcpConnections', 'tcp_connections_total', 'Syslog TCP connections accepted'],
  ['tcpIdleClosed', 'tcp_idle_closed_total', 'Syslog TCP connections closed by netsvc after tcpIdleTimeoutSec without data'],
];

/** Why TCP connections were refused: the `reason` label and the counter behind it. */
const SYSLOG_TCP_REFUSALS: ReadonlyArray<readonly [string, keyof SyslogReceiverCounters]> = [
  ['address_limit', 'tcpRejectedAddressLimit'],
  ['connection_limit', 'tcpRejectedConnectionLimit'],
  ['closing', 'tcpRejectedClosing'],
];

/** Storage counters: metric name, help text, and how to read it from a provider (undefined: that part is absent). */
const STORAGE_COUNTERS: ReadonlyArray<readonly [string, string, (p: StorageStatsProvider) => number | undefined]> = [
  ['netsvc_capture_rows_received_total', 'Flow rows handed to the capture writer', (p) => p.writer?.counters.rowsReceived],
  ['netsvc_capture_rows_written_total', 'Flow rows written to capture files', (p) => p.writer?.counters.rowsWritten],
  ['netsvc_capture_blocks_written_total', 'Blocks written to capture files', (p) => p.writer?.counters.blocksWritten],
  ['netsvc_capture_bytes_written_total', 'Bytes of the blocks written to capture files', (p) => p.writer?.counters.bytesWritten],
  ['netsvc_capture_write_errors_total', 'Capture file opens and block writes that failed', (p) => p.writer?.counters.writeErrors],
  [
    'netsvc_capture_rows_lost_total',
    'Flow rows lost because their block could not be written',
    (p) => p.writer?.counters.rowsLost,
  ],
  ['netsvc_capture_hours_opened_total', 'Hourly capture files opened', (p) => p.writer?.counters.hoursOpened],
  ['netsvc_capture_hours_sealed_total', 'Hourly capture files sealed', (p) => p.writer?.counters.hoursSealed],
  ['netsvc_capture_hours_reopened_total', 'Sealed hours reopened for late rows', (p) => p.writer?.counters.hoursReopened],
  ['netsvc_capture_seal_errors_total', 'Seals of an hour that failed (retried later)', (p) => p.writer?.counters.sealErrors],
  [
    'netsvc_capture_recovered_files_total',
    'Open capture files recovered at start (left by a crash)',
    (p) => p.writer?.counters.recoveredFiles,
  ],
  [
    'netsvc_capture_recovered_dropped_blocks_total',
    'Torn blocks cut off while recovering open files',
    (p) => p.writer?.counters.recoveredDroppedBlocks,
  ],
  [
    'netsvc_capture_recovered_dropped_bytes_total',
    'Bytes cut off while recovering open files',
    (p) => p.writer?.counters.recoveredDroppedBytes,
  ],
  [
    'netsvc_capture_damaged_files_moved_aside_total',
    'Unreadable open capture files moved aside at start',
    (p) => p.writer?.counters.damagedFilesMovedAside,
  ],
  [
    'netsvc_query_corrupt_files_total',
    'Damaged or truncated capture files skipped by API queries',
    (p) => p.query?.counters.corruptFiles,
  ],
  ['netsvc_query_corrupt_blocks_total', 'Damaged blocks skipped by API queries', (p) => p.query?.counters.corruptBlocks],
  ['netsvc_query_blocks_read_total', 'Capture blocks read by API queries', (p) => p.query?.counters.blocksRead],
  [
    'netsvc_query_blocks_skipped_total',
    'Capture blocks skipped by API queries by their index (outside the window)',
    (p) => p.query?.counters.blocksSkipped,
  ],
  ['netsvc_retention_files_removed_total', 'Capture files removed by retention', (p) => p.retention?.counters.filesRemoved],
  ['netsvc_retention_bytes_freed_total', 'Bytes freed by retention', (p) => p.retention?.counters.bytesFreed],
  ['netsvc_retention_errors_total', 'Capture files retention failed to remove', (p) => p.retention?.counters.errors],
  [
    'netsvc_kpi_build_corrupt_files_total',
    'Sealed capture files the KPI cache builder could not read (hour not cached)',
    (p) => p.kpiBuilder?.stats.corruptFiles,
  ],
  [
    'netsvc_kpi_build_corrupt_blocks_total',
    'Damaged blocks skipped while building the KPI cache',
    (p) => p.kpiBuilder?.stats.corruptBlocks,
  ],
];

/** Builds a registry with the flow metrics and the default process metrics. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'netsvc_' });
  const providers: FlowStatsProvider[] = [];

  const forEachExporter = (fn: (source: string, exporter: string, c: ExporterCounters) => void): void => {
    for (const p of providers) {
      for (const s of p.sourceStats()) for (const [addr, c] of Object.entries(s.exporters)) fn(s.source, addr, c);
    }
  };

  for (const name of COUNTER_NAMES) {
    new Counter({
      name: flowMetricName(name),
      help: HELP[name],
      labelNames: ['source', 'exporter'],
      registers: [registry],
      collect() {
        this.reset();
        forEachExporter((source, exporter, c) => this.inc({ source, exporter }, c[name]));
      },
    });
  }
  const perSource = (name: string, help: string, pick: (s: SourceStats) => number): void => {
    new Counter({
      name,
      help,
      labelNames: ['source'],
      registers: [registry],
      collect() {
        this.reset();
        for (const p of providers) for (const s of p.sourceStats()) this.inc({ source: s.source }, pick(s));
      },
    });
  };
  perSource(`${FLOW_METRIC_PREFIX}received_datagrams_total`, 'Datagrams taken from the socket for a source', (s) => s.received);
  perSource(`${FLOW_METRIC_PREFIX}queue_drops_total`, 'Datagrams dropped because the ingest queue was full', (s) => s.queueDrops);
  perSource(`${FLOW_METRIC_PREFIX}sink_errors_total`, 'Flow batches the storage writer failed to take', (s) => s.sinkErrors);
  perSource(
    `${FLOW_METRIC_PREFIX}sink_lost_flows_total`,
    'Flows in batches the storage writer failed to take',
    (s) => s.sinkLostFlows,
  );
  perSource(
    `${FLOW_METRIC_PREFIX}decoder_errors_total`,
    'Datagrams the decoder failed on unexpectedly (dropped; ingest goes on)',
    (s) => s.decoderErrors,
  );
  perSource(
    `${FLOW_METRIC_PREFIX}ingest_errors_total`,
    'Failed flush, template expiry or save steps of the flow decode thread (counted; ingest goes on)',
    (s) => s.ingestErrors,
  );

  /** A series per socket; a socket whose value is unknown (kernel drops outside Linux) has none. */
  const perSocket = (name: string, help: string, pick: (s: SocketStats) => number | undefined, counter: boolean): void => {
    const config = {
      name,
      help,
      labelNames: ['listen'] as const,
      registers: [registry],
    };
    // Each socket's value (none where it is unknown), for a counter's inc or a gauge's set.
    const each = (put: (labels: { listen: string }, v: number) => void): void => {
      for (const p of providers) {
        for (const s of p.socketStats()) {
          const v = pick(s);
          if (v !== undefined) put({ listen: s.listen }, v);
        }
      }
    };
    if (counter) {
      new Counter({
        ...config,
        collect() {
          this.reset();
          each((labels, v) => this.inc(labels, v));
        },
      });
    } else {
      new Gauge({
        ...config,
        collect() {
          this.reset();
          each((labels, v) => this.set(labels, v));
        },
      });
    }
  };
  perSocket(
    `${FLOW_METRIC_PREFIX}unclaimed_datagrams_total`,
    'Datagrams from exporters no flow source on the socket claims',
    (s) => s.unclaimed,
    true,
  );
  perSocket(`${FLOW_METRIC_PREFIX}queue_depth`, 'Datagrams waiting to be decoded', (s) => s.queueDepth, false);
  perSocket(`${FLOW_METRIC_PREFIX}queue_high_water`, 'Most datagrams ever waiting at once', (s) => s.queueHighWater, false);
  perSocket(
    `${FLOW_METRIC_PREFIX}receive_buffer_bytes`,
    'UDP receive buffer the kernel set for the socket (at most net.core.rmem_max)',
    (s) => s.receiveBufferGranted,
    false,
  );
  perSocket(
    `${FLOW_METRIC_PREFIX}kernel_drops_total`,
    'Datagrams the kernel dropped on the socket because its receive buffer was full (never reached netsvc; Linux)',
    (s) => s.kernelDrops,
    true,
  );
  perSocket(
    `${FLOW_METRIC_PREFIX}reader_restarts_total`,
    'Times the thread reading the socket died and was started again',
    (s) => s.readerRestarts,
    true,
  );

  const receivers: SyslogStatsProvider[] = [];
  const sum = (pick: (r: SyslogStatsProvider) => number): number => receivers.reduce((n, r) => n + pick(r), 0);
  /** The sum over the receivers whose value is known; undefined when none is (the series then has no sample). */
  const sumKnown = (pick: (r: SyslogStatsProvider) => number | undefined): number | undefined => {
    const known = receivers.map(pick).filter((v): v is number => v !== undefined);
    return known.length ? known.reduce((a, b) => a + b, 0) : undefined;
  };
  // Registered with the first receiver, so an instance without one exposes no syslog series at all (rather than zeros).
  const registerSyslog = (): void => {
    new Counter({
      name: `${SYSLOG_METRIC_PREFIX}received_total`,
      help: 'Syslog messages received, by transport (udp: one per datagram; tcp: one per frame)',
      labelNames: ['transport'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc(
          { transport: 'udp' },
          sum((r) => r.counters.receivedUdp),
        );
        this.inc(
          { transport: 'tcp' },
          sum((r) => r.counters.receivedTcp),
        );
      },
    });
    // Next to received_total: what never reached netsvc, so that received + kernel drops is what was sent.
    new Counter({
      name: `${SYSLOG_METRIC_PREFIX}kernel_drops_total`,
      help: 'Syslog UDP datagrams the kernel dropped because the receive buffer was full (never reached netsvc; Linux)',
      registers: [registry],
      collect() {
        this.reset();
        const drops = sumKnown((r) => r.udpStats?.()?.kernelDrops);
        if (drops !== undefined) this.inc(drops);
      },
    });
    new Gauge({
      name: `${SYSLOG_METRIC_PREFIX}receive_buffer_bytes`,
      help: 'UDP receive buffer the kernel set for the syslog socket (at most net.core.rmem_max)',
      registers: [registry],
      collect() {
        this.reset();
        const granted = sumKnown((r) => r.udpStats?.()?.receiveBufferGranted);
        if (granted !== undefined) this.set(granted);
      },
    });
    new Counter({
      name: `${SYSLOG_METRIC_PREFIX}tcp_rejected_total`,
      help: 'Syslog TCP connections refused, by reason: address_limit (maxConnectionsPerAddress), connection_limit (maxConnections), closing',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [reason, key] of SYSLOG_TCP_REFUSALS)
          this.inc(
            { reason },
            sum((r) => r.counters[key]),
          );
      },
    });
    for (const [key, suffix, help] of SYSLOG_COUNTERS) {
      new Counter({
        name: `${SYSLOG_METRIC_PREFIX}${suffix}`,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(sum((r) => r.counters[key]));
        },
      });
    }
    new Gauge({
      name: `${SYSLOG_METRIC_PREFIX}queue_depth`,
      help: 'Syslog messages received and not yet written to SystemEvents',
      registers: [registry],
      collect() {
        this.set(sum((r) => r.queueDepth));
      },
    });
    new Gauge({
      name: `${SYSLOG_METRIC_PREFIX}tcp_open_connections`,
      help: 'Syslog TCP connections open now',
      registers: [registry],
      collect() {
        this.set(sum((r) => r.openConnections));
      },
    });
  };

  const storage: StorageStatsProvider[] = [];
  // Registered with the first provider, like the syslog series.
  const registerStorage = (): void => {
    for (const [name, help, pick] of STORAGE_COUNTERS) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(storage.reduce((n, p) => n + (pick(p) ?? 0), 0));
        },
      });
    }
  };

  const auths: AuthStatsProvider[] = [];
  // Registered with the first provider, like the syslog series.
  const registerAuth = (): void => {
    const counters: ReadonlyArray<readonly [string, string, keyof AuthStatsProvider['counters']]> = [
      ['netsvc_auth_rate_limited_total', 'Auth attempts refused (429) by the per-address failure limit', 'rateLimited'],
      ['netsvc_auth_verifications_total', 'Secrets checked by scrypt', 'verifications'],
      [
        'netsvc_auth_busy_refused_total',
        'Auth attempts refused (429) without hashing because the scrypt budget was full',
        'busyRefused',
      ],
      ['netsvc_auth_known_secret_hits_total', 'Logins with a secret verified before, answered without scrypt', 'knownSecretHits'],
    ];
    for (const [name, help, key] of counters) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(auths.reduce((n, a) => n + a.counters[key], 0));
        },
      });
    }
    new Gauge({
      name: 'netsvc_auth_verify_queue_depth',
      help: 'Auth attempts waiting for the scrypt budget',
      registers: [registry],
      collect() {
        this.set(auths.reduce((n, a) => n + a.verifyQueueDepth, 0));
      },
    });
  };

  return {
    registry,
    contentType: registry.contentType,
    addAuthStats(provider) {
      if (!auths.length) registerAuth();
      auths.push(provider);
    },
    addStorageStats(provider) {
      if (!storage.length) registerStorage();
      storage.push(provider);
    },
    addFlowStats(provider) {
      providers.push(provider);
    },
    addSyslogReceiver(receiver) {
      if (!receivers.length) registerSyslog();
      receivers.push(receiver);
    },
    text() {
      return registry.metrics();
    },
  };
}
