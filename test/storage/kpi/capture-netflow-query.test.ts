import { readFileSync, truncateSync, writeFileSync, copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlowBatch } from '../../../common/flow-batch.js';
import type { CaptureWriter } from '../../../storage/capture/writer.js';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { CaptureNetflowQuery } from '../../../storage/kpi/capture-netflow-query.js';
import { localOpenHours, OpenHourAggregator } from '../../../storage/kpi/open-hour-aggregator.js';
import type { KpiBuilder } from '../../../storage/kpi/kpi-builder.js';
import type { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { flowFixture } from '../../helpers/flow-fixtures.js';
import {
  H1,
  H2,
  H3,
  nfdumpFlows,
  nfdumpReference,
  threeHourCapture,
  type NfdumpFlow,
  type ThreeHourCapture,
} from '../../helpers/netflow-data.js';

const HOUR = 3_600_000;

/** Top lists recounted from nfdump's own flow records (what `nfdump -s` prints over them). */
function recount(flows: NfdumpFlow[]) {
  const by = (key: (f: NfdumpFlow) => string, keep: (f: NfdumpFlow) => boolean = () => true) => {
    const m = new Map<string, { bytes: number; packets: number; flows: number }>();
    for (const f of flows.filter(keep)) {
      const e = m.get(key(f)) ?? { bytes: 0, packets: 0, flows: 0 };
      e.bytes += f.bytes;
      e.packets += f.packets;
      e.flows += 1;
      m.set(key(f), e);
    }
    return [...m].map(([k, v]) => ({ key: k, ...v }));
  };
  const top = <T extends { bytes: number; flows: number }>(rows: T[], metric: 'bytes' | 'flows') =>
    rows.sort((a, b) => b[metric] - a[metric]).slice(0, 10);
  return {
    flows: flows.length,
    bytes: flows.reduce((s, f) => s + f.bytes, 0),
    packets: flows.reduce((s, f) => s + f.packets, 0),
    rst: flows.filter((f) => f.proto === 6 && f.flags[5] === 'R').length,
    src: top(
      by((f) => f.srcIp),
      'bytes',
    ).map((e) => ({ ip: e.key, bytes: e.bytes, packets: e.packets, flows: e.flows })),
    dst: top(
      by((f) => f.dstIp),
      'bytes',
    ).map((e) => ({ ip: e.key, bytes: e.bytes, packets: e.packets, flows: e.flows })),
    ports: top(
      by(
        (f) => f.dstPort,
        (f) => f.proto === 6 || f.proto === 17,
      ),
      'flows',
    ).map((e) => ({
      port: Number(e.key),
      bytes: e.bytes,
      packets: e.packets,
      flows: e.flows,
    })),
  };
}

describe('CaptureNetflowQuery over real capture files', () => {
  let hours: ThreeHourCapture;
  let dir: string;
  let writer: CaptureWriter;
  let cache: SqliteKpiCache;
  let builder: KpiBuilder;
  let query: CaptureNetflowQuery;
  const a = flowFixture('1/softflowd-v9');
  const b = flowFixture('2/softflowd-v9');
  const c = flowFixture('1/softflowd-v10');

  beforeAll(async () => {
    // 08:00 and 09:00 sealed and cached, 10:00 open, the clock at 10:30.
    hours = await threeHourCapture('netsvc-query-', [a, b, c]);
    ({ dir, writer, cache, builder, query } = hours);
  });

  afterAll(async () => {
    await hours?.close();
  });

  it('serves a sealed hour from the cache with the figures nfdump gives for the same datagrams', async () => {
    const k = await query.kpi('netflow', H1, H2);
    const ref = nfdumpReference(a);
    const mine = recount(nfdumpFlows(a));
    expect(k.origin).toBe('hourly_cache');
    expect({ flows: k.flows, bytes: k.bytes, packets: k.packets }).toEqual(ref.totals);
    expect(k.rstFlows).toBe(ref.rst.flows);
    expect(k.protocols.map((p) => [p.proto, p.flows, p.bytes, p.packets])).toEqual(
      ref.protocols_by_bytes.map((p) => [p.number, p.flows, p.bytes, p.packets]),
    );
    expect(k.topSrc).toEqual(ref.top_src_ip_by_bytes);
    expect(k.topDst).toEqual(ref.top_dst_ip_by_bytes);
    expect(k.topPorts).toEqual(mine.ports);
  });

  it('gives the same numbers from the files as from the cache (one hour, two hours)', async () => {
    for (const [from, to] of [
      [H1, H2],
      [H1, H3],
    ] as const) {
      const cached = await query.kpi('netflow', from, to);
      const live = await query.kpi('netflow', from, to, { useCache: false });
      expect(cached.origin).toBe('hourly_cache');
      expect(live.origin).toBe('fallback');
      expect({ ...live, origin: 'x' }).toEqual({ ...cached, origin: 'x' });
    }
  });

  it('merges two hours into the lists nfdump would print over both files', async () => {
    const k = await query.kpi('netflow', H1, H3);
    const both = recount([...nfdumpFlows(a), ...nfdumpFlows(b)]);
    expect({ flows: k.flows, bytes: k.bytes, packets: k.packets, rst: k.rstFlows }).toEqual({
      flows: both.flows,
      bytes: both.bytes,
      packets: both.packets,
      rst: both.rst,
    });
    expect(k.topSrc).toEqual(both.src);
    expect(k.topDst).toEqual(both.dst);
    expect(k.topPorts).toEqual(both.ports);
    expect(k.hours).toEqual([
      { hourStart: H1, bytes: nfdumpReference(a).totals.bytes, flows: nfdumpReference(a).totals.flows },
      { hourStart: H2, bytes: nfdumpReference(b).totals.bytes, flows: nfdumpReference(b).totals.flows },
    ]);
  });

  it('computes the open hour live from the writer, equal to a scan of its file', async () => {
    const k = await query.kpi('netflow', H3, H3 + HOUR);
    const ref = nfdumpReference(c);
    expect(k.origin).toBe('fallback');
    expect({ flows: k.flows, bytes: k.bytes, packets: k.packets }).toEqual(ref.totals);
    expect(k.topSrc).toEqual(ref.top_src_ip_by_bytes);
    expect(k.topDst).toEqual(ref.top_dst_ip_by_bytes);
    // A window that covers the open hour only in part is scanned from the file: same figures.
    const scanned = await query.kpi('netflow', H3, H3 + HOUR - 60_000);
    expect({ ...scanned, hours: [] }).toEqual({ ...k, hours: [] });
  });

  it('includes only flows received inside a partial window, and keeps empty hours as zero points', async () => {
    const early = await query.kpi('netflow', H1 - HOUR, H1 + 10 * 60_000);
    expect(early.origin).toBe('fallback');
    expect(early.flows).toBe(0);
    expect(early.hours).toEqual([
      { hourStart: H1 - HOUR, bytes: 0, flows: 0 },
      { hourStart: H1, bytes: 0, flows: 0 },
    ]);
    const all = await query.kpi('netflow', H1, H1 + 11 * 60_000);
    expect(all.flows).toBe(nfdumpReference(a).totals.flows);
  });

  it('lists the newest flows by start time, then received time, capped by limit', async () => {
    const rows = await query.flows('netflow', H1, H2, 200);
    const ref = nfdumpFlows(a).sort((x, y) => y.start - x.start);
    expect(rows).toHaveLength(200);
    expect(rows.map((r) => r.start)).toEqual(ref.slice(0, 200).map((f) => Math.round(f.start * 1000)));
    for (let i = 1; i < rows.length; i++) {
      const p = rows[i - 1]!;
      const r = rows[i]!;
      expect(p.start > r.start || (p.start === r.start && p.received >= r.received)).toBe(true);
    }
    expect(await query.flows('netflow', H1, H2, 5)).toEqual(rows.slice(0, 5));
  });

  it('reports the newest file and whether its hour is cached', () => {
    const l = query.latest('netflow');
    expect(l).toEqual({
      hourStart: H3,
      hourEnd: H3 + HOUR,
      fileName: 'nfcapd.202603251000',
      intervalSec: 3600,
      cached: false,
      dataStart: H1,
      dataEnd: H3 + HOUR,
    });
    // A source without files reports the current hour.
    expect(query.latest('lentor')).toMatchObject({ hourStart: H3, cached: false, dataStart: H3 });
  });

  it('counts denied flows (RST) on TCP only, live and from files alike', async () => {
    // Exporters sometimes leave TCP flag bits on UDP records; nfdump's `flags R` does not match them.
    const batch = new FlowBatch(4);
    const rows: Array<[number, number]> = [
      [6, 0x04],
      [6, 0x14],
      [17, 0x04],
      [1, 0x04],
    ];
    rows.forEach(([proto, flags], k) => {
      const i = batch.addRow();
      batch.cols.proto[i] = proto;
      batch.cols.tcpFlags[i] = flags;
      batch.cols.bytes[i] = 100;
      batch.cols.packets[i] = 1;
      batch.cols.received[i] = H3 + 40 * 60_000 + k;
      batch.cols.start[i] = batch.cols.received[i]! - 1000;
      batch.cols.end[i] = batch.cols.received[i]!;
      batch.setV4('srcAddr', i, 0x0a000001 + k);
      batch.setV4('dstAddr', i, 0x0a000101);
    });
    writer.write('rsttest', batch);
    writer.flush();
    const q = new CaptureNetflowQuery({
      dataDir: dir,
      timezone: 'UTC',
      sources: ['rsttest'],
      cache,
      openHours: localOpenHours(new OpenHourAggregator({ now: hours.now })),
      now: hours.now,
    });
    const live = await q.kpi('rsttest', H3, H3 + HOUR);
    const scanned = await q.kpi('rsttest', H3, H3 + HOUR - 60_000);
    expect([live.rstFlows, scanned.rstFlows]).toEqual([2, 2]);
  });

  it('skips a truncated or damaged file with a counter instead of failing', async () => {
    const sealed = join(dir, 'flows', 'netflow', 'nfcapd.202603250800');
    const other = join(dir, 'flows', 'lentor');
    mkdirSync(other, { recursive: true });
    // A cut-off copy of a sealed hour, and a copy with one data block overwritten.
    const cut = join(other, 'nfcapd.202603250800');
    copyFileSync(sealed, cut);
    truncateSync(cut, Math.floor(readFileSync(sealed).length / 2));
    const damaged = join(other, 'nfcapd.202603250900');
    const bytes = readFileSync(join(dir, 'flows', 'netflow', 'nfcapd.202603250900'));
    const f = CaptureFile.open(join(dir, 'flows', 'netflow', 'nfcapd.202603250900'));
    const block = f.blocks[0]!;
    f.close();
    bytes.fill(0x5a, block.offset + 200, block.offset + 260);
    writeFileSync(damaged, bytes);

    const before = query.counters;
    const k = await query.kpi('lentor', H1, H3);
    expect(k.origin).toBe('fallback');
    expect(k.flows).toBeLessThan(nfdumpReference(b).totals.flows);
    const flows = await query.flows('lentor', H1, H3, 200);
    expect(flows.length).toBeLessThan(200);
    const after = query.counters;
    expect(after.corruptFiles).toBeGreaterThan(before.corruptFiles);
    expect(after.corruptBlocks).toBeGreaterThan(before.corruptBlocks);
    // The builder refuses to cache an unreadable hour.
    const sync = await builder.sync('lentor');
    expect(sync.failed).toBe(1);
    expect(cache.hours('lentor', H1, H3).map((h) => h.hourStart)).toEqual([H2]);
  });
});
