import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { rows } from './rows.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, v9Packet, v9Templates } from './wire.js';

const HDR = { uptimeMs: 1000, unixSecs: 1_700_000_000 };
const T0 = 1_700_000_100_000;

// Same template id 256, two layouts.
const layoutA = v9Templates({
  id: 256,
  fields: [
    [8, 4],
    [12, 4],
    [1, 4],
    [7, 2],
  ],
});
const layoutB = v9Templates({
  id: 256,
  fields: [
    [1, 8],
    [7, 2],
    [12, 4],
    [8, 4],
  ],
});
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

describe('template store bounds (hostile exporters)', () => {
  const ipfixTpl = (id: number, fieldCount: number, domain: number) =>
    ipfixMessage(
      { exportSecs: T0 / 1000, domain },
      set(
        2,
        ipfixTemplateRecord(id, [
          [8, 4],
          [12, 4],
          ...Array.from({ length: fieldCount - 2 }, (_, k): [number, number] => [k % 2 === 0 ? 1 : 2, 4]),
        ]),
        false,
      ),
    );
  const flowOf = (id: number) => set(id, Buffer.concat([ipv4('10.0.0.1'), ipv4('10.0.0.2'), Buffer.alloc(0)]));

  it('a flood of header-only datagrams with new domain ids holds at most the per-exporter cap, counted', () => {
    const d = createFlowDecoder({ templateLimits: { maxDomainsPerExporter: 64 } });
    const attacker = exporterRef('198.51.100.7');
    const honest = exporterRef('192.0.2.1');
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, layoutA), honest, T0, batch);
    for (let k = 0; k < 5000; k++) d.decode(ipfixMessage({ exportSecs: T0 / 1000, domain: k }), attacker, T0 + k, batch);
    expect(d.templates.domainCount).toBe(65);
    expect(d.counters.exporter(attacker.address).domainsEvicted).toBe(5000 - 64);
    d.decode(v9Packet(HDR, dataA), honest, T0 + 6000, batch);
    expect(rows(batch).map((r) => r.bytes)).toEqual([111]);
  });

  it('a domain in steady use survives a flood of new domains from many addresses (total cap)', () => {
    const d = createFlowDecoder({ templateLimits: { maxDomains: 100 } });
    const honest = exporterRef('192.0.2.1');
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, layoutA), honest, T0, batch);
    for (let k = 0; k < 2000; k++) {
      d.decode(ipfixMessage({ exportSecs: T0 / 1000, domain: 1 }), exporterRef(`198.51.${k >> 8}.${k & 255}`), T0 + k, batch);
      if (k % 50 === 0) d.decode(v9Packet(HDR, dataA), honest, T0 + k, batch);
    }
    expect(d.templates.domainCount).toBeLessThanOrEqual(100);
    expect(batch.length).toBe(40);
    expect(d.counters.total.domainsEvicted).toBeGreaterThan(1800);
  });

  it('refuses a template with more fields than the cap, and forgets the one it replaced', () => {
    const d = createFlowDecoder({ templateLimits: { maxFieldsPerTemplate: 100 } });
    const a = exporterRef('192.0.2.9');
    const batch = new FlowBatch();
    d.decode(ipfixTpl(300, 10, 0), a, T0, batch);
    d.decode(ipfixTpl(300, 16_000, 0), a, T0, batch);
    const c = d.counters.exporter(a.address);
    expect([c.templatesAdded, c.templatesRefused, c.malformed]).toEqual([1, 1, 0]);
    expect(d.templates.size).toBe(0);
    // Data for it waits for a template instead of being read with the old layout.
    d.decode(ipfixMessage({ exportSecs: T0 / 1000 }, flowOf(300)), a, T0, batch);
    expect([batch.length, c.dataWithoutTemplate]).toEqual([0, 1]);
  });

  it('one exporter churning templates spends its own budget and its own room, never the others’', () => {
    const d = createFlowDecoder({
      templateLimits: { maxTemplatesPerExporter: 50, maxTemplates: 80, budgetBurst: 2000, budgetPerSec: 500 },
    });
    const honest = exporterRef('192.0.2.1');
    const attacker = exporterRef('198.51.100.7');
    const batch = new FlowBatch();
    for (let id = 256; id < 276; id++) d.decode(ipfixTpl(id, 10, 0), honest, T0, batch);
    // 1 000 new templates in 10 s: the burst (2 000 fields) plus 500 fields/s pays for (2000 + 5000) / 18 of them.
    for (let k = 0; k < 1000; k++) d.decode(ipfixTpl(256 + (k % 4000), 10, k % 7), attacker, T0 + k * 10, batch);
    const c = d.counters.exporter(attacker.address);
    expect(c.templatesAdded).toBe(Math.floor(7000 / 18));
    expect(c.templatesRefused).toBe(1000 - c.templatesAdded);
    expect(d.templates.findExporter(attacker.address)!.templates).toBe(50);
    expect(c.templatesEvicted).toBe(c.templatesAdded - 50);
    expect(d.templates.findExporter(honest.address)!.templates).toBe(20);
    expect(d.counters.exporter(honest.address).templatesEvicted).toBe(0);
  });

  it('the total cap evicts from the exporter holding most: an exporter within its share keeps its templates', () => {
    const d = createFlowDecoder({ templateLimits: { maxTemplates: 30 } });
    const honest = exporterRef('192.0.2.1');
    const batch = new FlowBatch();
    for (let id = 256; id < 266; id++) d.decode(ipfixTpl(id, 4, 0), honest, T0, batch);
    for (let k = 0; k < 2; k++) {
      const a = exporterRef(`198.51.100.${k}`);
      for (let id = 256; id < 290; id++) d.decode(ipfixTpl(id, 4, 0), a, T0 + id, batch);
    }
    expect(d.templates.size).toBe(30);
    expect(d.templates.findExporter(honest.address)!.templates).toBe(10);
    // Each sender kept its most recently announced ones.
    expect([...d.templates.findDomain('198.51.100.1', 10, 0)!.templates.keys()].sort()).toEqual(
      Array.from({ length: 10 }, (_, k) => 280 + k),
    );
  });

  it('held data is bounded per exporter and in bytes: a sender whose data never finds a template keeps only its share', () => {
    const d = createFlowDecoder({ pendingMaxSetsPerExporter: 8, pendingMaxBytes: 64 * 1024 });
    const attacker = exporterRef('198.51.100.7');
    const honest = exporterRef('192.0.2.1');
    const batch = new FlowBatch();
    d.decode(v9Packet(HDR, dataA), honest, T0, batch);
    const big = set(400, Buffer.alloc(4000));
    for (let k = 0; k < 100; k++) d.decode(ipfixMessage({ exportSecs: T0 / 1000 }, big), attacker, T0, batch);
    expect(d.counters.exporter(attacker.address).pendingDropped).toBe(92);
    d.decode(v9Packet(HDR, layoutA), honest, T0 + 1, batch);
    expect(batch.length).toBe(1);
    const d2 = createFlowDecoder({ pendingMaxSetsPerExporter: 1000, pendingMaxBytes: 20_000 });
    for (let k = 0; k < 100; k++) d2.decode(ipfixMessage({ exportSecs: T0 / 1000 }, big), attacker, T0, batch);
    expect(d2.counters.exporter(attacker.address).pendingDropped).toBe(95); // 5 sets of 4 000 bytes fit in 20 000
  });
});
