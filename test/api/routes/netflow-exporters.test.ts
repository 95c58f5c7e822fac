import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceCounterValues } from '../../../api/routes/netflow-exporters.js';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import type { NetflowQuery } from '../../../storage/kpi/netflow-query.js';
import type { ReverseDns } from '../../../storage/dns/reverse-dns.js';
import { flowFixture } from '../../helpers/flow-fixtures.js';
import { getJson } from '../../helpers/http.js';
import { startNetflowApi, type NetflowApi } from '../../helpers/netflow-api.js';

describe('GET /netflow/exporters (netsvc extension)', () => {
  let api: NetflowApi;
  let token: string;
  let otherToken: string;
  let sources: SourceCounterValues[];

  /** A source's counters after its decoder read real export datagrams. */
  const decoded = (source: string, fixtures: string[], sampling: Record<string, number> = {}): SourceCounterValues => {
    const decoder = createFlowDecoder();
    let received = 0;
    for (const name of fixtures) {
      for (const d of flowFixture(name).datagrams()) {
        decoder.decode(d.payload, exporterRef(d.srcAddr), d.timeMs, new FlowBatch(8192));
        received++;
      }
    }
    const snap = decoder.counters.snapshot();
    return { source, listen: '127.0.0.1:2055', received, queueDrops: 0, exporters: snap.exporters, sampling };
  };

  beforeAll(async () => {
    const netflow = decoded('netflow', ['1/softflowd-v9', '1/pmacct-v10']);
    const first = Object.keys(netflow.exporters)[0]!;
    sources = [{ ...netflow, sampling: { [first]: 100 } }, decoded('lentor', ['2/softflowd-v9'])];
    api = await startNetflowApi({
      // Not reached by this route.
      query: {} as NetflowQuery,
      dns: {} as ReverseDns,
      timezone: 'UTC',
      exporters: { sources: () => sources },
    });
    ({ token, otherToken } = api);
  });

  afterAll(async () => {
    await api.close();
  });

  it('reports the decoder’s own counters per exporter of the caller’s sources only', async () => {
    const res = await getJson(`${api.url}/svc/api/netflow/exporters`, token);
    expect(res.status).toBe(200);
    const r = res.body.result;
    expect(r.sources.map((s: any) => s.source)).toEqual(['netflow']);
    const s = r.sources[0];
    const want = sources[0]!;
    expect(s.datagrams_received).toBe(want.received);
    expect(s.exporters.map((e: any) => e.address).sort()).toEqual(Object.keys(want.exporters).sort());
    let datagrams = 0;
    for (const e of s.exporters) {
      const c = want.exporters[e.address]!;
      expect(e).toMatchObject({
        datagrams: c.packets,
        flows: c.flows,
        bytes: c.bytes,
        packets: c.packetsInFlows,
        malformed: c.malformed,
        templates_added: c.templatesAdded,
        templates_updated: c.templatesUpdated,
        templates_withdrawn: c.templatesWithdrawn,
        sampling_interval: want.sampling[e.address] ?? null,
      });
      datagrams += e.datagrams;
      expect(e.flows).toBeGreaterThan(0);
    }
    // Every datagram read was handed to a decoder and counted against its exporter.
    expect(datagrams).toBe(want.received);
    // Most datagrams first.
    const counts = s.exporters.map((e: any) => e.datagrams);
    expect(counts).toEqual([...counts].sort((x: number, y: number) => y - x));
    expect(s.exporters.some((e: any) => e.sampling_interval === 100)).toBe(true);
  });

  it('another entity sees only its own source; no token is refused', async () => {
    const other = await getJson(`${api.url}/svc/api/netflow/exporters`, otherToken);
    expect(other.body.result.sources.map((s: any) => s.source)).toEqual(['lentor']);
    const none = await getJson(`${api.url}/svc/api/netflow/exporters`);
    expect(none.status).toBe(401);
    expect(none.body.status).toBe(false);
  });

  it('is marked as a netsvc extension in the OpenAPI document', async () => {
    const doc = (await getJson(`${api.url}/svc/api/openapi.json`)).body;
    expect(doc.paths['/svc/api/netflow/exporters'].get['x-netsvc-extension']).toBe(true);
  });
});
