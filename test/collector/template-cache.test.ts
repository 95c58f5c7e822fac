import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../collector/decoder.js';
import { FlowBatch } from '../../collector/flow-batch.js';
import { rows } from './rows.js';
import { ipv4, set, uint, v9Packet, v9Templates } from './wire.js';

const HDR = { uptimeMs: 1000, unixSecs: 1_700_000_000 };
const T0 = 1_700_000_100_000;

// Same template id 256, two layouts.
const layoutA = v9Templates({ id: 256, fields: [[8, 4], [12, 4], [1, 4], [7, 2]] });
const layoutB = v9Templates({ id: 256, fields: [[1, 8], [7, 2], [12, 4], [8, 4]] });
const dataA = set(256, Buffer.concat([ipv4('10.0.0.1'), ipv4('10.0.0.2'), uint(111, 4), uint(1111, 2)]));
const dataB = set(256, Buffer.concat([uint(222, 8), uint(2222, 2), ipv4('10.0.1.2'), ipv4('10.0.1.1')]));

describe('template store', () => {
  it('keys templates by exporter: two exporters, same id, different layouts, each decodes its own', () => {
    const a = exporterRef('192.0.2.1');
    const b = exporterRef('192.0.2.2');
    const d = createFlowDecoder();
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, layoutA), a, T0, batch);
    d.decode(v9Packet(HDR, layoutB), b, T0, batch);
    d.decode(v9Packet(HDR, dataA), a, T0, batch);
    d.decode(v9Packet(HDR, dataB), b, T0, batch);
    expect(rows(batch).map((r) => [r.exporter, r.src, r.dst, r.bytes, r.srcPort])).toEqual([
      ['192.0.2.1', '10.0.0.1', '10.0.0.2', 111, 1111],
      ['192.0.2.2', '10.0.1.1', '10.0.1.2', 222, 2222],
    ]);
    expect(d.counters.exporter('192.0.2.1').templatesUpdated).toBe(0);
  });

  it('keys templates by source id within one exporter too', () => {
    const a = exporterRef('192.0.2.1');
    const d = createFlowDecoder();
    const batch = new FlowBatch();
    d.decode(v9Packet({ ...HDR, sourceId: 1 }, layoutA), a, T0, batch);
    d.decode(v9Packet({ ...HDR, sourceId: 2 }, dataA), a, T0, batch);
    expect(batch.length).toBe(0);
    expect(d.counters.exporter(a.address).dataWithoutTemplate).toBe(1);
  });

  it('a changed layout under the same id counts as an update and decodes with the new layout', () => {
    const a = exporterRef('192.0.2.1');
    const d = createFlowDecoder();
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, layoutA, dataA), a, T0, batch);
    d.decode(v9Packet(HDR, layoutB, dataB), a, T0, batch);
    d.decode(v9Packet(HDR, layoutB), a, T0, batch); // same again: a refresh
    const c = d.counters.exporter(a.address);
    expect([c.templatesAdded, c.templatesUpdated]).toEqual([1, 1]);
    expect(rows(batch).map((r) => r.bytes)).toEqual([111, 222]);
  });

  it('holds data that arrives before its template and decodes it when the template comes', () => {
    const a = exporterRef('192.0.2.1');
    const d = createFlowDecoder();
    const batch = new FlowBatch();
    const first = d.decode(v9Packet(HDR, dataA), a, T0, batch);
    expect(first).toEqual({ status: 'ok', version: 9, flows: 0 });
    const second = d.decode(v9Packet(HDR, layoutA), a, T0 + 2000, batch);
    expect(second.flows).toBe(1);
    const [f] = rows(batch);
    // Keeps the time it was received, not the template's.
    expect(f).toMatchObject({ src: '10.0.0.1', bytes: 111, received: T0 });
    const c = d.counters.exporter(a.address);
    expect([c.dataWithoutTemplate, c.pendingBuffered, c.pendingDecoded, c.flows]).toEqual([1, 1, 1, 1]);
  });

  it('drops held data that waited too long, and past the buffer bound, counting both', () => {
    const a = exporterRef('192.0.2.1');
    const d = createFlowDecoder({ pendingMaxAgeMs: 5000, pendingMaxSets: 2 });
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, dataA), a, T0, batch);
    d.decode(v9Packet(HDR, layoutA), a, T0 + 6000, batch);
    expect(batch.length).toBe(0);
    const c = d.counters.exporter(a.address);
    expect(c.pendingExpired).toBe(1);

    const other = exporterRef('192.0.2.3');
    for (let k = 0; k < 3; k++) d.decode(v9Packet({ ...HDR, sourceId: 9 }, dataA), other, T0 + 7000, batch);
    expect(d.counters.exporter(other.address).pendingDropped).toBe(1);
    d.decode(v9Packet({ ...HDR, sourceId: 9 }, layoutA), other, T0 + 7001, batch);
    expect(batch.length).toBe(2);
  });

  it('forgets templates not re-announced within the TTL (fake clock)', () => {
    const a = exporterRef('192.0.2.1');
    const d = createFlowDecoder({ templateTtlMs: 60_000 });
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, layoutA), a, T0, batch);
    d.decode(v9Packet(HDR, layoutA), a, T0 + 50_000, batch); // refreshed
    d.decode(v9Packet(HDR, dataA), a, T0 + 100_000, batch);
    expect(batch.length).toBe(1);
    d.expire(T0 + 200_000);
    expect(d.counters.exporter(a.address).templatesExpired).toBe(1);
    expect(d.templates.size).toBe(0);
    d.decode(v9Packet(HDR, dataA), a, T0 + 200_001, batch);
    expect(batch.length).toBe(1);
  });
});
