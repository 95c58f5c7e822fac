import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedReverseDns } from '../../../storage/dns/cached-reverse-dns.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { flowFixture } from '../../helpers/flow-fixtures.js';
import { getJson } from '../../helpers/http.js';
import { startNetflowApi, type NetflowApi } from '../../helpers/netflow-api.js';
import { nfdumpFlows, nfdumpReference, threeHourCapture, type ThreeHourCapture } from '../../helpers/netflow-data.js';

describe('netflow routes over a loopback server', () => {
  let hours: ThreeHourCapture;
  let dnsServer: TestDnsServer;
  let dns: CachedReverseDns;
  let api: NetflowApi;
  let token: string;
  let otherToken: string;
  const a = flowFixture('1/softflowd-v9');
  const b = flowFixture('2/softflowd-v9');
  const c = flowFixture('1/pmacct-v10');
  const dstOfA = nfdumpFlows(a).sort((x, y) => y.start - x.start)[0]!.dstIp;

  const get = (path: string, t = token) => getJson(`${api.url}/svc/api/netflow${path}`, t);
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

  beforeAll(async () => {
    // 08:00 and 09:00 sealed and cached, 10:00 open, the clock at 10:30.
    hours = await threeHourCapture('netsvc-netflow-', [a, b, c]);

    dnsServer = await startDnsServer(
      { '192.0.2.10': 'web.example.net', '2001:db8::53': 'ns1.example.net', [dstOfA]: 'dst.example.org' },
      ['203.0.113.99'],
    );
    dns = new CachedReverseDns({
      servers: [dnsServer.address],
      timeoutMs: 5000,
      positiveTtlSec: 3600,
      negativeTtlSec: 60,
      maxEntries: 1000,
      now: hours.now,
    });

    api = await startNetflowApi({ query: hours.query, dns, timezone: 'UTC' }, hours.now);
    ({ token, otherToken } = api);
  });

  afterAll(async () => {
    await api.close();
    dns.close();
    await dnsServer.close();
    await hours.close();
  });

  it('latest names the open hour and the span of all files', async () => {
    const res = await get('/latest');
    expect(res).toEqual({
      status: 200,
      body: {
        status: true,
        result: {
          start: '2026/03/25 10:00',
          end: '2026/03/25 10:59',
          latest_file: 'nfcapd.202603251000',
          interval_sec: 3600,
          interval_label: '1h',
          is_cached: false,
          data_start: '2026/03/25 08:00',
          data_end: '2026/03/25 10:59',
        },
      },
    });
  });

  it('kpi for one sealed hour answers from the cache with nfdump’s figures', async () => {
    const res = await get(`/kpi${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59' })}`);
    expect(res.status).toBe(200);
    const r = res.body.result;
    const ref = nfdumpReference(a);
    expect(r.meta).toEqual({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', source: 'hourly_cache' });
    expect(r.kpi.total_bytes).toBe(ref.totals.bytes);
    expect(r.kpi.active_flows).toBe(ref.totals.flows);
    expect(r.kpi.denied_flows).toBe(ref.rst.flows);
    expect(r.kpi.avg_throughput_mbps).toBe(Math.round(((ref.totals.bytes * 8) / 3600 / 1e6) * 100) / 100);
    expect(r.kpi.total_traffic).toBe(`${Math.round((ref.totals.bytes / 1024 ** 2) * 10) / 10} M`);
    expect(r.top_src).toEqual(ref.top_src_ip_by_bytes);
    expect(r.top_dst_ip).toEqual(ref.top_dst_ip_by_bytes);
    expect(r.protocols).toEqual(
      ref.protocols_by_bytes.map((p) => ({
        proto: { ICMP6: 'ICMPv6' }[p.name] ?? p.name,
        proto_num: p.number,
        bytes: p.bytes,
        flows: p.flows,
        pct: Math.round((p.bytes / ref.totals.bytes) * 10000) / 100,
      })),
    );
    expect(r.top_dst.length).toBeGreaterThan(0);
    expect(r.top_dst.length).toBeLessThanOrEqual(10);
    expect(r.top_dst.find((e: { port: number }) => e.port === 443)).toMatchObject({ label: 'https' });
    expect(r.top_dst.find((e: { port: number }) => e.port === 53)).toMatchObject({ label: 'domain' });
    expect(r.timeseries).toEqual([{ timestamp: '2026-03-25T08:00:00Z', bytes: ref.totals.bytes, flows: ref.totals.flows }]);
  });

  it('kpi over cached hours and the open hour is fallback, with one point per hour including empty ones', async () => {
    const res = await get(`/kpi${q({ start: '2026/03/25 07:00', end: '2026/03/25 10:59' })}`);
    const r = res.body.result;
    const [ra, rb, rc] = [a, b, c].map((f) => nfdumpReference(f).totals);
    expect(r.meta.source).toBe('fallback');
    expect(r.kpi.total_bytes).toBe(ra!.bytes + rb!.bytes + rc!.bytes);
    expect(r.kpi.active_flows).toBe(ra!.flows + rb!.flows + rc!.flows);
    expect(r.timeseries).toEqual([
      { timestamp: '2026-03-25T07:00:00Z', bytes: 0, flows: 0 },
      { timestamp: '2026-03-25T08:00:00Z', bytes: ra!.bytes, flows: ra!.flows },
      { timestamp: '2026-03-25T09:00:00Z', bytes: rb!.bytes, flows: rb!.flows },
      { timestamp: '2026-03-25T10:00:00Z', bytes: rc!.bytes, flows: rc!.flows },
    ]);
    expect(r.kpi.avg_throughput_mbps).toBe(
      Math.round((((ra!.bytes + rb!.bytes + rc!.bytes) * 8) / (4 * 3600) / 1e6) * 100) / 100,
    );
    const pctSum = r.protocols.reduce((s: number, p: { pct: number }) => s + p.pct, 0);
    expect(Math.abs(pctSum - 100)).toBeLessThan(0.05);
  });

  it('a partly covered hour is computed live with the same numbers as the cached hour', async () => {
    const cached = (await get(`/kpi${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59' })}`)).body.result;
    const partial = (await get(`/kpi${q({ start: '2026/03/25 08:05', end: '2026/03/25 08:59' })}`)).body.result;
    expect(partial.meta.source).toBe('fallback');
    const strip = (r: Record<string, unknown>) => ({
      ...r,
      meta: undefined,
      kpi: { ...(r.kpi as object), avg_throughput_mbps: 0 },
    });
    expect(strip(partial)).toEqual(strip(cached));
  });

  it('flows are newest first with the 200 cap, nfdump’s fields and a verdict', async () => {
    const res = await get(`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '1000' })}`);
    expect(res.status).toBe(200);
    const { flows, total } = res.body.result;
    expect(total).toBe(200);
    expect(flows).toHaveLength(200);
    const ref = nfdumpFlows(a).sort((x, y) => y.start - x.start);
    // nfdump prints the same records; compare the newest 200 field by field. Order within one start time is
    // ours (by received time), so rows tied with the 200th start may be any of nfdump's rows of that start.
    const key = (f: { ts: string; src_ip: string; dst_ip: string; src_port: string; dst_port: string }) =>
      `${f.ts}|${f.src_ip}|${f.dst_ip}|${f.src_port}|${f.dst_port}`;
    const boundary = ref[199]!.start;
    const expected = ref
      .filter((f) => f.start >= boundary)
      .map((f) => ({
        ts: f.startUtc.slice(0, 19),
        src_ip: f.srcIp,
        dst_ip: f.dstIp,
        src_port: f.srcPort,
        dst_port: f.dstPort,
        proto: { 1: 'ICMP', 6: 'TCP', 17: 'UDP', 47: 'GRE', 50: 'ESP', 58: 'ICMPv6', 112: 'VRRP' }[f.proto],
        flags: f.proto === 6 ? f.flags.slice(2) : '......',
        packets: String(f.packets),
        bytes: String(f.bytes),
        duration: f.duration,
        verdict: f.proto === 6 && f.flags.includes('R') && !f.flags.includes('S') ? 'Deny' : 'Allow',
      }));
    expect(flows.map(key)).toEqual(
      flows
        .map(key)
        .slice()
        .sort((x: string, y: string) => (x.slice(0, 19) < y.slice(0, 19) ? 1 : x.slice(0, 19) > y.slice(0, 19) ? -1 : 0)),
    );
    const strip = ({ dst_fqdn: _, ...rest }: Record<string, string>) => rest;
    const byKey = (rows: Array<Record<string, string>>) =>
      rows.map(strip).sort((x, y) => (key(x as never) < key(y as never) ? -1 : 1));
    const atBoundary = (rows: Array<Record<string, string>>) =>
      rows.filter((f) => f.ts === new Date(boundary * 1000).toISOString().slice(0, 19).replace('T', ' '));
    const newer = (rows: Array<Record<string, string>>) => rows.filter((f) => !atBoundary([f]).length);
    expect(byKey(newer(flows))).toEqual(byKey(newer(expected as never)));
    const pool = byKey(atBoundary(expected as never)).map((r) => JSON.stringify(r));
    for (const row of byKey(atBoundary(flows))) expect(pool).toContain(JSON.stringify(row));
    expect(flows.every((f: { dst_fqdn: string }) => typeof f.dst_fqdn === 'string')).toBe(true);
    // A smaller limit gives the head of the same list (dst_fqdn may have been filled in meanwhile).
    const three = (await get(`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '3' })}`)).body.result.flows;
    expect(three.map(strip)).toEqual(flows.slice(0, 3).map(strip));
  });

  it('fills dst_fqdn from the PTR cache without waiting for it', async () => {
    const path = `/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '200' })}`;
    await get(path); // starts background lookups for the destinations
    await new Promise((r) => setTimeout(r, 300));
    const { flows } = (await get(path)).body.result;
    const names: Record<string, string> = { '192.0.2.10': 'web.example.net', [dstOfA]: 'dst.example.org' };
    for (const f of flows as Array<{ dst_ip: string; dst_fqdn: string }>)
      expect([f.dst_ip, f.dst_fqdn]).toEqual([f.dst_ip, names[f.dst_ip] ?? '']);
    expect(flows.some((f: { dst_fqdn: string }) => f.dst_fqdn !== '')).toBe(true);
  });

  it('resolve returns PTR names, "" for unknown IPs, skips invalid ones and keeps at most 20', async () => {
    const res = await get(`/resolve${q({ ips: ' 192.0.2.10 , not-an-ip, 2001:db8::53,192.0.2.10,010.1.1.1, 198.51.100.1' })}`);
    expect(res).toEqual({
      status: 200,
      body: { status: true, result: { '192.0.2.10': 'web.example.net', '2001:db8::53': 'ns1.example.net', '198.51.100.1': '' } },
    });
    const many = Array.from({ length: 25 }, (_, i) => `198.51.100.${i + 1}`).join(',');
    const capped = await get(`/resolve${q({ ips: many })}`);
    expect(Object.keys(capped.body.result)).toEqual(Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 1}`));
    // A long list is cut to 20, never refused.
    const huge = Array.from({ length: 900 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(',');
    const cut = await get(`/resolve${q({ ips: huge })}`);
    expect(cut.status).toBe(200);
    expect(Object.keys(cut.body.result)).toHaveLength(20);
    expect(await get('/resolve')).toEqual({ status: 200, body: { status: true, result: {} } });
  });

  it('resolve answers within 2 s when the DNS server stays silent', async () => {
    dnsServer.silent = true;
    try {
      const t0 = performance.now();
      const res = await get(`/resolve${q({ ips: '203.0.113.99,203.0.113.98' })}`);
      const took = performance.now() - t0;
      expect(res.body).toEqual({ status: true, result: { '203.0.113.99': '', '203.0.113.98': '' } });
      expect(took).toBeLessThan(2500);
    } finally {
      dnsServer.silent = false;
    }
  });

  it('rejects malformed parameters with 400 naming them', async () => {
    const cases: Array<[string, string]> = [
      [`/kpi${q({ end: '2026/03/25 08:59' })}`, 'start'],
      [`/kpi${q({ start: 'yesterday', end: '2026/03/25 08:59' })}`, 'start'],
      [`/kpi${q({ start: '2026/02/30 08:00', end: '2026/03/25 08:59' })}`, 'start'],
      [`/kpi${q({ start: '2026/03/25 08:00', end: '2026/03/25 25:00' })}`, 'end'],
      [`/kpi${q({ start: '2026/03/25 09:00', end: '2026/03/25 08:59' })}`, 'end'],
      [`/kpi${q({ start: '2026/03/01 00:00', end: '2026/04/01 00:00' })}`, 'end'],
      [`/kpi${q({ start: '1926/03/25 00:00', end: '2026/03/25 08:59' })}`, 'end'],
      [`/flows${q({ start: '2026/03/01 00:00', end: '2026/04/01 00:00' })}`, 'end'],
      [`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '0' })}`, 'limit'],
      [`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '-5' })}`, 'limit'],
      [`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: '1.5' })}`, 'limit'],
      [`/flows${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59', limit: 'ten' })}`, 'limit'],
      [`/latest${q({ entity: 'no such/source' })}`, 'entity'],
    ];
    for (const [path, param] of cases) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.status).toBe(false);
      expect(res.body.errorMessage).toContain(`'${param}'`);
    }
  });

  it("takes ISO 8601 and dashed times as logviewer and hotspot do, with the same answer as api.md's form", async () => {
    const slash = await get(`/kpi${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59' })}`);
    const iso = await get(`/kpi${q({ start: '2026-03-25T08:00:00Z', end: '2026-03-25 08:59' })}`);
    expect(slash.status).toBe(200);
    expect(iso.status).toBe(200);
    expect(iso.body.result.kpi).toEqual(slash.body.result.kpi);
    expect(iso.body.result.meta.start).toBe('2026-03-25T08:00:00Z');
    const bad = await get(`/kpi${q({ start: '2026-03-25T08:00:00', end: '25/03/2026 08:59' })}`);
    expect(bad.body.errorMessage).toBe(
      "Invalid parameter 'end': '25/03/2026 08:59' is not a valid time (YYYY/MM/DD HH:mm, YYYY-MM-DD HH:mm or ISO 8601 (e.g. 2026-03-25T09:00Z)).",
    );
  });

  it('answers the longest window (744 hours) and refuses one minute more, naming end', async () => {
    const longest = await get(`/kpi${q({ start: '2026/03/01 00:00', end: '2026/03/31 23:59' })}`);
    expect(longest.status).toBe(200);
    expect(longest.body.result.timeseries).toHaveLength(744);
    const over = await get(`/kpi${q({ start: '2026/03/01 00:00', end: '2026/04/01 00:00' })}`);
    expect(over.status).toBe(400);
    expect(over.body.errorMessage).toContain("'end'");
    expect(over.body.errorMessage).toContain('744');
  });

  it('refuses a flow source the token’s entity does not own (403)', async () => {
    expect((await get(`/latest${q({ entity: 'lentor' })}`)).status).toBe(403);
    expect((await get(`/kpi${q({ start: '2026/03/25 08:00', end: '2026/03/25 08:59' })}`, otherToken)).status).toBe(403);
    const own = await get(`/latest${q({ entity: 'lentor' })}`, otherToken);
    expect(own.status).toBe(200);
    expect((await get('/latest', 'not-a-token')).status).toBe(401);
  });

  it('documents the four routes in the OpenAPI document', async () => {
    const doc = (await getJson(`${api.url}/svc/api/openapi.json`)).body;
    for (const p of ['latest', 'kpi', 'flows', 'resolve']) expect(doc.paths[`/svc/api/netflow/${p}`]?.get).toBeDefined();
    const params = doc.paths['/svc/api/netflow/flows'].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(['start', 'end', 'limit', 'entity']));
  });
});
