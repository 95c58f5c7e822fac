/**
 * Prometheus metrics (prom-client) of the service: the flow collector's
 * counters per source and exporter, the embedded syslog receiver's
 * counters, plus the process's own metrics.
 *
 * Counters are not copied on every event: components keep plain numbers
 * (the decoder's per-exporter counters, the listener's queue counters) and
 * the registry reads them when scraped, through the providers registered
 * here. One registry per service instance; no global state.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { COUNTER_NAMES, type CounterName, type ExporterCounters } from '../collector/collector-counters.js';
import type { SyslogReceiverCounters } from '../collector/syslog-receiver.js';
import type { SocketStats, SourceStats } from '../collector/udp-listener.js';

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
}

/** The metrics registry of one service instance. */
export interface Metrics {
  readonly registry: Registry;
  /** Content-Type of `text()`. */
  readonly contentType: string;
  /** Adds the counters of a set of flow listeners (or an import run) to every scrape. */
  addFlowStats(provider: FlowStatsProvider): void;
  /** Adds the embedded syslog receiver's counters (`netsvc_syslog_*`); absent from scrapes until a receiver runs. */
  addSyslogReceiver(receiver: SyslogStatsProvider): void;
  /** The exposition text, for `GET /metrics`. */
  text(): Promise<string>;
}

/** Metric name prefix of the flow counters. */
export const FLOW_METRIC_PREFIX = 'netsvc_flow_';

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
  recordsWithoutAddress: 'Data records without an IP address, skipped',
  sequenceGaps: 'Forward jumps of the export sequence number',
  sequenceMissing: 'Units skipped by sequence jumps (v5 flows, v9 packets, IPFIX records)',
  pendingBuffered: 'Data sets held until their template arrives',
  pendingDecoded: 'Held data sets decoded when their template arrived',
  pendingExpired: 'Held data sets dropped after waiting too long',
  pendingDropped: 'Held data sets dropped because the buffer was full',
};

/** Metric name prefix of the syslog receiver's counters. */
export const SYSLOG_METRIC_PREFIX = 'netsvc_syslog_';

/** The receiver's counters other than the per-transport ones: metric name suffix and help text. */
const SYSLOG_COUNTERS: ReadonlyArray<readonly [keyof SyslogReceiverCounters, string, string]> = [
  ['stored', 'stored_total', 'Syslog messages written to SystemEvents'],
  ['malformed', 'malformed_total', 'Syslog messages stored from a best-effort parse (no or bad PRI, no header, bad timestamp or structured data)'],
  ['truncated', 'truncated_total', 'Syslog messages cut to fit: longer than maxMessageBytes, or host/tag longer than their SystemEvents column'],
  ['dropped', 'dropped_total', 'Syslog messages lost: the oldest queued while the database failed past maxQueue, or unwritten at shutdown'],
  ['writeErrors', 'write_errors_total', 'Batch writes to SystemEvents that failed (the batch stays queued and is retried)'],
  ['tcpConnections', 'tcp_connections_total', 'Syslog TCP connections accepted'],
  ['tcpRejected', 'tcp_rejected_total', 'Syslog TCP connections refused: over the connection limit, or while closing'],
];

/** `templatesAdded` → `netsvc_flow_templates_added_total`. */
export function flowMetricName(counter: CounterName): string {
  const snake = counter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  // `packets` would read as export packets next to `packets_in_flows`: name it for what it counts.
  return `${FLOW_METRIC_PREFIX}${snake === 'packets' ? 'datagrams' : snake}_total`;
}

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
  perSource(`${FLOW_METRIC_PREFIX}sink_lost_flows_total`, 'Flows in batches the storage writer failed to take', (s) => s.sinkLostFlows);

  const perSocket = (name: string, help: string, pick: (s: SocketStats) => number, counter: boolean): void => {
    const config = {
      name,
      help,
      labelNames: ['listen'] as const,
      registers: [registry],
    };
    if (counter) {
      new Counter({
        ...config,
        collect() {
          this.reset();
          for (const p of providers) for (const s of p.socketStats()) this.inc({ listen: s.listen }, pick(s));
        },
      });
    } else {
      new Gauge({
        ...config,
        collect() {
          this.reset();
          for (const p of providers) for (const s of p.socketStats()) this.set({ listen: s.listen }, pick(s));
        },
      });
    }
  };
  perSocket(`${FLOW_METRIC_PREFIX}unclaimed_datagrams_total`, 'Datagrams from exporters no flow source on the socket claims', (s) => s.unclaimed, true);
  perSocket(`${FLOW_METRIC_PREFIX}queue_depth`, 'Datagrams waiting to be decoded', (s) => s.queueDepth, false);
  perSocket(`${FLOW_METRIC_PREFIX}queue_high_water`, 'Most datagrams ever waiting at once', (s) => s.queueHighWater, false);
  perSocket(`${FLOW_METRIC_PREFIX}receive_buffer_bytes`, 'UDP receive buffer the kernel reports for the socket', (s) => s.receiveBufferGranted, false);

  const receivers: SyslogStatsProvider[] = [];
  const sum = (pick: (r: SyslogStatsProvider) => number): number => receivers.reduce((n, r) => n + pick(r), 0);
  // Registered with the first receiver, so an instance without one exposes no syslog series at all (rather than zeros).
  const registerSyslog = (): void => {
    new Counter({
      name: `${SYSLOG_METRIC_PREFIX}received_total`,
      help: 'Syslog messages received, by transport (udp: one per datagram; tcp: one per frame)',
      labelNames: ['transport'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ transport: 'udp' }, sum((r) => r.counters.receivedUdp));
        this.inc({ transport: 'tcp' }, sum((r) => r.counters.receivedTcp));
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

  return {
    registry,
    contentType: registry.contentType,
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
