import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedReverseDns } from '../../../storage/dns/cached-reverse-dns.js';
import { FlowAnalytics } from '../../../storage/flow-query/flow-analytics.js';
import { flowFixture } from '../../helpers/flow-fixtures.js';
import { getJson } from '../../helpers/http.js';
import { startNetflowApi, type NetflowApi } from '../../helpers/netflow-api.js';
import { nfdumpFlows, threeHourCapture, type ThreeHourCapture } from '../../helpers/netflow-data.js';

describe('netflow analytics routes (netsvc extension)', () => {
  let hours: ThreeHourCapture;
  let dns: CachedReverseDns;
  let api: NetflowApi;
  let token: string;
  let otherToken: string;
  const a = flowFixture('1/softflowd-v9');
  const b = flowFixture('2/softflowd-v9');
  const c = flowFixture('1/pmacct-v10');

  const get = (path: string, params: Record<string, string>, t = token) =>
    getJson(`${api.url}/svc/api/netflow${path}?${new URLSearchParams(params).toString()}`, t);
  const hour8 = { start: '2026/03/25 08:00', end: '2026/03/25 08:59' };

  beforeAll(async () => {
    // 08:00 and 09:00 sealed and cached, 10:00 open, the clock at 10:30.
    hours = await threeHourCapture('netsvc-analytics-', [a, b, c]);
    dns = new CachedReverseDns({
      servers: ['127.0.0.1:9'],
      timeoutMs: 100,
      positiveTtlSec: 60,
      negativeTtlSec: 60,
      maxEntries: 10,
      now: hours.now,
    });
    const analytics = new FlowAnalytics({ dataDir: hours.dir, timezone: 'UTC', cache: hours.cache, now: hours.now });
    api = await startNetflowApi({ query: hours.query, analytics, dns, timezone: 'UTC' }, hours.now);
    ({ token, otherToken } = api);
  });

  afterAll(async () => {
    await api.close();
    dns.close();
    await hours.close();
  });

  it('top by dst_port of the UDP flows is nfdump’s list of the same flows, and rows + other = total', async () => {
    const res = await get('/top', { ...hour8, by: 'dst_port', metric: 'bytes', limit: '5', filter: 'proto udp' });
    expect(res.status).toBe(200);
    const ref = new Map<number, { flows: number; packets: number; bytes: number }>();
    for (const f of nfdumpFlows(a).filter((f) => f.proto === 17)) {
      const e = ref.get(Number(f.dstPort)) ?? { flows: 0, packets: 0, bytes: 0 };
      e.flows++;
      e.packets += f.packets;
      e.bytes += f.bytes;
      ref.set(Number(f.dstPort), e);
    }
    const r = res.body.result;
    const ranked = [...ref.values()].sort((x, y) => y.bytes - x.bytes);
    expect(r.rows.map((x: any) => x.bytes)).toEqual(ranked.slice(0, 5).map((e) => e.bytes));
    for (const row of r.rows) expect(ref.get(row.dst_port)).toEqual({ flows: row.flows, packets: row.packets, bytes: row.bytes });
    const all = [...ref.values()].reduce(
      (s, e) => ({ flows: s.flows + e.flows, packets: s.packets + e.packets, bytes: s.bytes + e.bytes }),
      {
        flows: 0,
        packets: 0,
        bytes: 0,
      },
    );
    expect(r.total).toEqual(all);
    expect(r.groups).toBe(ref.size);
    const sum = (k: 'flows' | 'packets' | 'bytes') => r.rows.reduce((s: number, x: any) => s + x[k], 0) + r.other[k];
    expect({ flows: sum('flows'), packets: sum('packets'), bytes: sum('bytes') }).toEqual(r.total);
  });

  it('series by proto: the cache and the files give the same answer, and every step adds up', async () => {
    const window = { start: '2026/03/25 08:00', end: '2026/03/25 09:59', by: 'proto', step: '5m', limit: '3' };
    const cached = await get('/series', window);
    // `any` is a filter: the answer comes from the capture files.
    const raw = await get('/series', { ...window, filter: 'any' });
    expect(cached.status).toBe(200);
    expect(raw.body).toEqual(cached.body);
    const s = cached.body.result;
    expect(s.points).toHaveLength(24);
    // A line's key names its group and nothing else.
    for (const l of s.lines) expect(Object.keys(l.key)).toEqual(['proto']);
    s.total.forEach((t: number, k: number) => {
      expect(s.lines.reduce((acc: number, l: any) => acc + l.values[k], 0) + s.other[k]).toBe(t);
    });
    const bytes = nfdumpFlows(a).reduce((acc, f) => acc + f.bytes, 0) + nfdumpFlows(b).reduce((acc, f) => acc + f.bytes, 0);
    expect(s.total.reduce((acc: number, v: number) => acc + v, 0)).toBe(bytes);
  });

  it('search pages through every matching flow once, with the count of matches', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let total = -1;
    for (let page = 0; page < 100; page++) {
      const params: Record<string, string> = { ...hour8, filter: 'proto tcp', limit: '17' };
      if (cursor) params.cursor = cursor;
      const res = await get('/search', params);
      expect(res.status).toBe(200);
      const r = res.body.result;
      total = r.total;
      for (const f of r.flows) {
        expect(f.proto).toBe(6);
        seen.push(JSON.stringify(f));
      }
      cursor = r.next_cursor;
      if (!cursor) break;
    }
    const tcp = nfdumpFlows(a).filter((f) => f.proto === 6).length;
    expect(total).toBe(tcp);
    expect(seen).toHaveLength(tcp);
    expect(new Set(seen).size).toBe(tcp);
  });

  it('count=false leaves the matches uncounted (total null) and pages the same flows', async () => {
    const counted = await get('/search', { ...hour8, filter: 'proto udp', limit: '1000' });
    const uncounted = await get('/search', { ...hour8, filter: 'proto udp', limit: '1000', count: 'false' });
    expect(uncounted.status).toBe(200);
    expect(uncounted.body.result.total).toBeNull();
    expect(uncounted.body.result.flows).toEqual(counted.body.result.flows);
    expect(counted.body.result.total).toBe(counted.body.result.flows.length);
    expect((await get('/search', { ...hour8, count: 'maybe' })).status).toBe(400);
  });

  it('a filter mistake is a 400 that names the parameter, the column and what was expected', async () => {
    const res = await get('/top', { ...hour8, by: 'src_ip', filter: 'proto tcp and port http' });
    expect(res.status).toBe(400);
    expect(res.body.status).toBe(false);
    expect(res.body.errorMessage).toMatch(
      /^Invalid parameter 'filter': column 20: expected a port number .*after 'port', found 'http'/,
    );
    expect(res.body.column).toBe(20);
    expect(res.body.expected.length).toBeGreaterThan(0);
    for (const [path, params, name] of [
      ['/top', { ...hour8, by: 'colour' }, 'by'],
      ['/top', { ...hour8 }, 'by'],
      ['/top', { ...hour8, by: 'src_ip', limit: '1001' }, 'limit'],
      ['/series', { ...hour8, step: '2m' }, 'step'],
      ['/search', { ...hour8, cursor: 'not-a-cursor' }, 'cursor'],
      ['/search', { ...hour8, filter: '(((' }, 'filter'],
      ['/top', { ...hour8, by: 'src_country', filter: 'src country XX1' }, 'filter'],
    ] as const) {
      const r = await get(path, params);
      expect(r.status, `${path} ${JSON.stringify(params)}`).toBe(400);
      expect(r.body.errorMessage, path).toContain(`'${name}'`);
    }
  });

  it('a cursor edited to reach past its window is refused', async () => {
    const first = await get('/search', { ...hour8, limit: '5' });
    const raw = JSON.parse(Buffer.from(first.body.result.next_cursor, 'base64url').toString('utf8'));
    for (const change of [{ a: 9e15 }, { s: -1 }, { l: [1, 2, 3] }]) {
      const forged = Buffer.from(JSON.stringify({ ...raw, ...change })).toString('base64url');
      const res = await get('/search', { ...hour8, limit: '5', cursor: forged });
      expect(res.status, JSON.stringify(change)).toBe(400);
    }
  });

  it('a cursor only continues its own query', async () => {
    const first = await get('/search', { ...hour8, limit: '5' });
    const res = await get('/search', { ...hour8, limit: '5', filter: 'proto udp', cursor: first.body.result.next_cursor });
    expect(res.status).toBe(400);
    expect(res.body.errorMessage).toMatch(/cursor.*another query/);
  });

  it('the token’s entity must own the source; no token is a 401', async () => {
    expect((await get('/top', { ...hour8, by: 'proto' }, otherToken)).status).toBe(403);
    expect((await get('/top', { ...hour8, by: 'proto' }, '')).status).toBe(401);
  });

  it('a query past the running and waiting ones is a 503 that says to try again', async () => {
    // No slot to run in and none to wait in: every scan is refused.
    const full = new FlowAnalytics({ dataDir: hours.dir, timezone: 'UTC', now: hours.now, maxRunning: 0, maxWaiting: 0 });
    const busy = await startNetflowApi({ query: hours.query, analytics: full, dns, timezone: 'UTC' }, hours.now);
    try {
      for (const path of ['/top', '/series', '/search']) {
        const params = { ...hour8, by: 'proto', filter: 'proto udp' };
        const res = await getJson(`${busy.url}/svc/api/netflow${path}?${new URLSearchParams(params).toString()}`, busy.token);
        expect(res.status, path).toBe(503);
        expect(res.body, path).toEqual({ status: false, errorMessage: 'Too many flow queries are running; try again shortly.' });
      }
    } finally {
      await busy.close();
    }
  });

  it('the OpenAPI document marks the three routes as netsvc extensions, with their 503', async () => {
    const doc = (await getJson(`${api.url}/svc/api/openapi.json`)).body;
    for (const path of ['/netflow/top', '/netflow/series', '/netflow/search']) {
      const op = doc.paths[`/svc/api${path}`]?.get ?? doc.paths[path]?.get;
      expect(op, path).toBeDefined();
      expect(op['x-netsvc-extension'], path).toBe(true);
      expect(Object.keys(op.responses), path).toEqual(expect.arrayContaining(['200', '400', '401', '403', '503']));
    }
    expect(
      doc.paths['/svc/api/netflow/kpi']?.get?.['x-netsvc-extension'] ?? doc.paths['/netflow/kpi']?.get?.['x-netsvc-extension'],
    ).toBeUndefined();
  });
});
