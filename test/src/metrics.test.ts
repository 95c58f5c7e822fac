import { createSocket } from 'node:dgram';
import { rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummarySink } from '../../common/flow-sink.js';
import { createFlowListeners } from '../../collector/listen/udp-listener.js';
import type { FlowListeners } from '../../collector/listen/flow-listeners.js';
import { parseMetrics, statusFromSamples } from '../../src/commands/status-run.js';
import { createMetrics, flowMetricName } from '../../src/metrics.js';
import { CaptureRetention } from '../../storage/capture/retention.js';
import { listCaptureFiles } from '../../storage/capture/reader.js';
import { CaptureWriter } from '../../storage/capture/writer.js';
import { CaptureNetflowQuery } from '../../storage/kpi/capture-netflow-query.js';
import { KpiBuilder } from '../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
import * as F from '../collector/decode/fidelity-datagrams.js';
import { flowFixtures } from '../helpers/flow-fixtures.js';
import { FakeClock, randomFlows, tempDataDir } from '../storage/capture/flows.js';

const fixture = flowFixtures().find((f) => f.name === '2/softflowd-v10')!;
let listeners: FlowListeners;

beforeAll(async () => {
  listeners = createFlowListeners(
    { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
    { sink: new SummarySink() },
  );
  await listeners.start();
  const s = createSocket('udp4');
  const payloads = fixture.datagrams().map((d) => d.payload);
  // and one datagram per reason a record is refused (docs/netflow.md, "Records netsvc does not store")
  const refusals = [F.notAFlow(), F.reservedSet(), F.malformedAfterRecords()];
  for (const p of [...payloads, Buffer.from('garbage!'), ...refusals]) {
    await new Promise<void>((r) => s.send(p, listeners.addresses().netflow!.port, '127.0.0.1', () => r()));
  }
  s.close();
  while (listeners.sourceStats()[0]!.received < payloads.length + 4) await new Promise((r) => setTimeout(r, 5));
  await listeners.idle();
});
afterAll(async () => {
  await listeners.close();
});

describe('Prometheus metrics', () => {
  it('exposes per-source, per-exporter flow counters as counters', async () => {
    const metrics = createMetrics();
    metrics.addFlowStats(listeners);
    const text = await metrics.text();
    const ref = fixture.reference();
    expect(text).toContain(`# TYPE ${flowMetricName('flows')} counter`);
    expect(text).toContain(`netsvc_flow_flows_total{source="netflow",exporter="127.0.0.1"} ${ref.totals.flows}`);
    expect(text).toContain(`netsvc_flow_bytes_total{source="netflow",exporter="127.0.0.1"} ${ref.totals.bytes}`);
    expect(text).toContain(`netsvc_flow_packets_in_flows_total{source="netflow",exporter="127.0.0.1"} ${ref.totals.packets}`);
    expect(text).toContain(`netsvc_flow_datagrams_total{source="netflow",exporter="127.0.0.1"} ${ref.datagrams_replayed + 4}`);
    expect(text).toContain('netsvc_flow_unknown_version_total{source="netflow",exporter="127.0.0.1"} 1');
    // every refused record under its reason
    expect(text).toContain('netsvc_flow_records_not_flows_total{source="netflow",exporter="127.0.0.1"} 2');
    expect(text).toContain('netsvc_flow_sets_reserved_total{source="netflow",exporter="127.0.0.1"} 1');
    expect(text).toContain('netsvc_flow_records_in_malformed_total{source="netflow",exporter="127.0.0.1"} 2');
    expect(text).toContain('netsvc_flow_malformed_total{source="netflow",exporter="127.0.0.1"} 1');
    expect(text).toContain('netsvc_flow_queue_drops_total{source="lentor"} 0');
    expect(text).toContain('netsvc_flow_decoder_errors_total{source="netflow"} 0');
    expect(text).toMatch(/netsvc_flow_templates_added_total\{source="netflow",exporter="127.0.0.1"\} [1-9]/);
    expect(text).toMatch(/netsvc_flow_receive_buffer_bytes\{listen="127\.0\.0\.1:\d+"\} \d+/);
    // Process metrics come along.
    expect(text).toContain('netsvc_process_cpu_seconds_total');
  });

  it('reads back, through the status parser, exactly what the listeners count', async () => {
    const metrics = createMetrics();
    metrics.addFlowStats(listeners);
    const report = statusFromSamples('x', parseMetrics(await metrics.text()));
    for (const s of listeners.sourceStats()) {
      expect(report.sources[s.source]).toEqual({
        received: s.received,
        queueDrops: s.queueDrops,
        sinkErrors: s.sinkErrors,
        sinkLostFlows: s.sinkLostFlows,
        total: s.total,
        exporters: s.exporters,
      });
    }
    expect(Object.keys(report.sockets)).toHaveLength(2);
  });

  it('keeps one registry per instance', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.addFlowStats(listeners);
    expect(await b.text()).not.toContain('exporter="127.0.0.1"');
  });
});

describe('Prometheus metrics of the capture storage', () => {
  const H8 = Date.UTC(2026, 2, 25, 8);
  const HOUR = 3_600_000;

  it('counts what the writer wrote, a damaged file skipped by a query and by the KPI builder, and retention', async () => {
    const dir = tempDataDir();
    const clock = new FakeClock(H8 + 60_000);
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
    await writer.start();
    writer.write('netflow', randomFlows(500, { received: H8 + 1000 }));
    clock.t = H8 + HOUR + 100_000;
    await writer.close();
    const file = listCaptureFiles(dir, 'netflow', 'UTC').find((f) => f.kind === 'sealed')!;
    expect(file).toBeDefined();
    // Cut off at half: no footer, a torn block.
    truncateSync(file.path, Math.floor(file.size / 2));

    const cache = new SqliteKpiCache(join(dir, 'kpi.sqlite'));
    const query = new CaptureNetflowQuery({ dataDir: dir, timezone: 'UTC', sources: ['netflow'], cache, now: clock.now });
    const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC', yieldEvery: 0 });
    const retention = new CaptureRetention({
      dataDir: dir,
      timezone: 'UTC',
      maxAgeHours: 24,
      sources: ['netflow'],
      now: () => H8 + 100 * HOUR,
    });
    const metrics = createMetrics();
    metrics.addStorageStats({ writer, query, retention, kpiBuilder: builder });
    try {
      const first = await metrics.text();
      expect(first).toContain('# TYPE netsvc_capture_write_errors_total counter');
      expect(first).toContain('netsvc_capture_rows_written_total 500');
      expect(first).toContain('netsvc_capture_rows_lost_total 0');
      expect(first).toContain('netsvc_capture_hours_sealed_total 1');
      expect(first).toContain('netsvc_query_corrupt_files_total 0');

      // A part of the hour: the query scans the file, finds it damaged and skips it.
      await query.kpi('netflow', H8, H8 + HOUR - 60_000);
      expect(await builder.buildHour({ ...file, size: Math.floor(file.size / 2) })).toBe(false);
      const removed = retention.runOnce();
      expect(removed).toHaveLength(1);

      const text = await metrics.text();
      expect(text).toContain('netsvc_query_corrupt_files_total 1');
      expect(text).toContain('netsvc_kpi_build_corrupt_files_total 1');
      expect(text).toContain('netsvc_retention_files_removed_total 1');
      expect(text).toContain(`netsvc_retention_bytes_freed_total ${Math.floor(file.size / 2)}`);
    } finally {
      cache.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows no storage series in a registry without storage', async () => {
    expect(await createMetrics().text()).not.toContain('netsvc_capture_');
  });
});
