import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummarySink } from '../../collector/flow-sink.js';
import { createFlowListeners, type FlowListeners } from '../../collector/udp-listener.js';
import { parseMetrics, statusFromSamples } from '../../src/commands/status.js';
import { createMetrics, flowMetricName } from '../../src/metrics.js';
import { flowFixtures } from '../helpers/flow-fixtures.js';

const fixture = flowFixtures().find((f) => f.name === '2/softflowd-v10')!;
let listeners: FlowListeners;

beforeAll(async () => {
  listeners = createFlowListeners({ netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } }, { sink: new SummarySink() });
  await listeners.start();
  const s = createSocket('udp4');
  const payloads = fixture.datagrams().map((d) => d.payload);
  for (const p of [...payloads, Buffer.from('garbage!')]) {
    await new Promise<void>((r) => s.send(p, listeners.addresses().netflow!.port, '127.0.0.1', () => r()));
  }
  s.close();
  while (listeners.sourceStats()[0]!.received < payloads.length + 1) await new Promise((r) => setTimeout(r, 5));
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
    expect(text).toContain(`netsvc_flow_datagrams_total{source="netflow",exporter="127.0.0.1"} ${ref.datagrams_replayed + 1}`);
    expect(text).toContain('netsvc_flow_unknown_version_total{source="netflow",exporter="127.0.0.1"} 1');
    expect(text).toContain('netsvc_flow_queue_drops_total{source="lentor"} 0');
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
