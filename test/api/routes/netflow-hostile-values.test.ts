/**
 * Issue 16, absurd values: the outside tester's IPFIX record with start,
 * end, octets and packets all 0xFF…, and options data announcing a sampling
 * interval of 2^32 − 1, through the real path (decoder → capture writer →
 * KPI cache, open-hour aggregates and flow query → API answers). Before:
 * `"ts":"NaN-NaN-NaN NaN:NaN:NaN"` sorted first, bytes `18446744073709552000`,
 * `total_bytes` `6.195e+30` and `total_traffic` `"5502805909007835 P"`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../api/app.js';
import { AuthService } from '../../../api/auth.js';
import { createNetflowRoutes } from '../../../api/routes/netflow.js';
import { createFlowDecoder, exporterRef, type FlowDecoder } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { generateCredential, hashSecret } from '../../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../../storage/admin/sqlite-admin-store.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { CachedReverseDns } from '../../../storage/dns/cached-reverse-dns.js';
import { CaptureNetflowQuery } from '../../../storage/kpi/capture-netflow-query.js';
import { KpiBuilder } from '../../../storage/kpi/kpi-builder.js';
import { localOpenHours, OpenHourAggregator } from '../../../storage/kpi/open-hour-aggregator.js';
import { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { createLogger } from '../../../src/log.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, type Spec } from '../../collector/decode/wire.js';

const H1 = Date.parse('2026-03-25T08:00:00Z');
const H2 = H1 + 3_600_000;
const U64_MAX = 2n ** 64n - 1n;
const exporter = exporterRef('192.0.2.50');

// sourceIPv4Address, destinationIPv4Address, octetDeltaCount, packetDeltaCount,
// flowStartMilliseconds, flowEndMilliseconds, protocolIdentifier, source and destination port.
const FIELDS: Spec[] = [
  [8, 4],
  [12, 4],
  [1, 8],
  [2, 8],
  [152, 8],
  [153, 8],
  [4, 1],
  [7, 2],
  [11, 2],
];
const RECORD_LENGTH = 45;

/** The datagrams one exporter sends in an hour, received at `received` (export time one second earlier). */
function datagrams(received: number): Buffer[] {
  const exportSecs = Math.floor(received / 1000) - 1;
  const template = set(2, ipfixTemplateRecord(256, FIELDS), false);
  const allOnes = set(256, Buffer.alloc(RECORD_LENGTH, 0xff), false);
  // Options template 300: scope observationDomainId (4), samplingInterval (4) = 2^32 − 1.
  const optionsTemplate = set(
    3,
    ipfixTemplateRecord(
      300,
      [
        [149, 4],
        [34, 4],
      ],
      1,
    ),
    false,
  );
  const options = set(300, Buffer.concat([uint(0, 4), uint(0xffffffff, 4)]), false);
  // An honest flow after the refused announcement, started after the export time of the 0xFF… one.
  const honest = set(
    256,
    Buffer.concat([
      ipv4('10.1.1.1'),
      ipv4('10.2.2.2'),
      uint(1500, 8),
      uint(3, 8),
      uint(received - 500, 8),
      uint(received - 100, 8),
      uint(6, 1),
      uint(40000, 2),
      uint(443, 2),
    ]),
    false,
  );
  return [
    ipfixMessage({ exportSecs, sequence: 0 }, template, allOnes),
    ipfixMessage({ exportSecs, sequence: 1 }, optionsTemplate, options, honest),
  ];
}

describe('netflow API over the 0xFF… record and a 2^32 − 1 sampling interval', () => {
  let dir: string;
  let clock = H1;
  let writer: CaptureWriter;
  let cache: SqliteKpiCache;
  let decoder: FlowDecoder;
  let admin: SqliteAdminStore;
  let dns: CachedReverseDns;
  let app: ReturnType<typeof createApp>;
  let token: string;
  const r1 = H1 + 10 * 60_000;
  const r2 = H2 + 5 * 60_000;

  /** The raw body of a GET, and its JSON. */
  const get = async (path: string): Promise<{ text: string; body: any }> => {
    const res = await app.request(`/svc/api/netflow${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status, path).toBe(200);
    const text = await res.text();
    return { text, body: JSON.parse(text) };
  };
  const q = (start: string, end: string) => `?${new URLSearchParams({ start, end }).toString()}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-hostile-values-'));
    const now = () => clock;
    writer = new CaptureWriter({
      dataDir: dir,
      timezone: 'UTC',
      timer: false,
      now,
      flushIntervalMs: 1000,
      blockRows: 256,
      aggregates: false,
    });
    cache = new SqliteKpiCache(join(dir, 'kpi.sqlite'));
    const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    writer.onHourSealed((e) => builder.onSealed(e).then(() => undefined));
    await writer.start();
    decoder = createFlowDecoder();
    const batch = new FlowBatch();
    // 08:00 is sealed and cached; 10:00 (the same datagrams again) is the open hour.
    for (const received of [r1, r2]) {
      clock = received;
      for (const d of datagrams(received)) expect(decoder.decode(d, exporter, received, batch).status).toBe('ok');
      writer.write('netflow', batch);
      batch.clear();
    }
    clock = H2 + 30 * 60_000;
    await writer.tick();
    writer.flush();
    const query = new CaptureNetflowQuery({
      dataDir: dir,
      timezone: 'UTC',
      sources: ['netflow'],
      cache,
      openHours: localOpenHours(new OpenHourAggregator({ now })),
      now,
    });
    dns = new CachedReverseDns({
      servers: ['127.0.0.1:9'],
      timeoutMs: 50,
      positiveTtlSec: 60,
      negativeTtlSec: 60,
      maxEntries: 10,
      now,
    });
    admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: true, logviewer: false, hotspot: false });
    admin.addUser('acme', 'alice', { netflow: true });
    const auth = new AuthService(admin, { key: randomBytes(32), tokenTtlSec: 3600, maxFailures: 10, failureWindowSec: 300, now });
    app = createApp({
      auth,
      logger: createLogger('silent'),
      bodyLimitBytes: 1024 * 1024,
      areas: { netflow: createNetflowRoutes({ query, dns, timezone: 'UTC', sourcesOf: () => ['netflow'] }) },
    });
    const cred = generateCredential();
    admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    const login = await app.request('/svc/api/netflow/auth', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_id: cred.apiId, secret: cred.secret }),
    });
    token = ((await login.json()) as any).result.access_token;
  });

  afterAll(async () => {
    dns?.close();
    admin?.close();
    await writer?.close();
    cache?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts every anomaly: four clamped times (start and end, twice) and two refused intervals', () => {
    const c = decoder.counters.exporter(exporter.address);
    expect(c.timestampsClamped).toBe(4);
    expect(c.samplingRefused).toBe(2);
    expect(c.flows).toBe(4);
  });

  it('flows: exact counters as decimal strings, the export time as ts, the honest flow first and unscaled, no NaN', async () => {
    for (const [hour, received] of [
      ['08', r1],
      ['09', r2],
    ] as const) {
      const day = hour === '08' ? '2026/03/25 08:00' : '2026/03/25 09:00';
      const { text, body } = await get(`/flows${q(day, day.replace(/:00$/, ':59'))}`);
      expect(text).not.toMatch(/NaN|Infinity|null/);
      const flows = body.result.flows as Array<Record<string, string>>;
      expect(flows.map((f) => f.src_ip)).toEqual(['10.1.1.1', '255.255.255.255']);
      const [honest, ones] = flows as [Record<string, string>, Record<string, string>];
      expect(honest).toMatchObject({
        bytes: '1500',
        packets: '3',
        ts: new Date(received - 500).toISOString().slice(0, 19).replace('T', ' '),
      });
      expect(ones).toMatchObject({
        bytes: String(U64_MAX),
        packets: '18446744073709551615',
        duration: '0.000',
        dst_port: '65535',
        proto: '255',
      });
      const exportTime = (Math.floor(received / 1000) - 1) * 1000;
      expect(ones.ts).toBe(new Date(exportTime).toISOString().slice(0, 19).replace('T', ' '));
    }
  });

  for (const [name, start, end, origin] of [
    ['a sealed hour from the KPI cache', '2026/03/25 08:00', '2026/03/25 08:59', 'hourly_cache'],
    ['the open hour from its aggregates', '2026/03/25 09:00', '2026/03/25 09:59', 'fallback'],
    ['both hours and an empty one, partly covered', '2026/03/25 07:30', '2026/03/25 09:59', 'fallback'],
  ] as const) {
    it(`kpi over ${name}: integer totals (decimal strings above 2^53), sane traffic, no NaN`, async () => {
      const hours = name.startsWith('both') ? 2 : 1;
      const { text, body } = await get(`/kpi${q(start, end)}`);
      expect(text).not.toMatch(/NaN|Infinity|null|\d[eE][+-]?\d/);
      const r = body.result;
      expect(r.meta.source).toBe(origin);
      const exact = (U64_MAX + 1500n) * BigInt(hours);
      const total = r.kpi.total_bytes as string;
      expect(total).toMatch(/^\d+$/);
      // Sums are float64 (docs/netflow.md): an integer within 53 significant bits of the exact sum.
      expect(Number(BigInt(total) - exact)).toBeLessThanOrEqual(Number(exact) / 2 ** 52);
      expect(Number(exact - BigInt(total))).toBeLessThanOrEqual(Number(exact) / 2 ** 52);
      expect(r.kpi.total_traffic).toBe(hours === 1 ? '16 E' : '32 E');
      expect(r.kpi.active_flows).toBe(2 * hours);
      const counts = [
        ...r.top_src.flatMap((e: any) => [e.bytes, e.packets, e.flows]),
        ...r.top_dst_ip.flatMap((e: any) => [e.bytes, e.packets, e.flows]),
        ...r.top_dst.map((e: any) => e.bytes),
        ...r.protocols.map((p: any) => p.bytes),
        ...r.timeseries.map((p: any) => p.bytes),
      ];
      for (const v of counts) {
        if (typeof v === 'number') expect(Number.isSafeInteger(v)).toBe(true);
        else expect(v).toMatch(/^\d+$/);
      }
      // 2^64 − 1 per hour, summed as float64: 2^64 per hour.
      expect(r.top_src[0]).toMatchObject({ ip: '255.255.255.255', packets: String(2n ** 64n * BigInt(hours)), flows: hours });
      expect(r.top_src[1]).toEqual({ ip: '10.1.1.1', bytes: 1500 * hours, packets: 3 * hours, flows: hours });
    });
  }

  it('latest answers without NaN', async () => {
    const { text, body } = await get('/latest');
    expect(text).not.toMatch(/NaN/);
    expect(body.result.data_start).toBe('2026/03/25 08:00');
  });
});
