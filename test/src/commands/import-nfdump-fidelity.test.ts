/**
 * The vendor-fidelity datagrams of issue 17 (test/collector/decode/fidelity-datagrams.ts) fed to
 * nfcapd and read back with nfdump 1.7, against netsvc on the same datagrams: equal where
 * netsvc follows nfdump, and nfdump's own answer pinned where docs/netflow.md says netsvc
 * differs on purpose (so the table there stays true).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { writeCapture } from '../../../collector/pcap/pcap-write.js';
import { runCli } from '../../../src/cli.js';
import { processContext, type CliContext } from '../../../src/commands/context.js';
import type { ImportReport } from '../../../src/commands/import-run.js';
import * as F from '../../collector/decode/fidelity-datagrams.js';
import { rows } from '../../collector/decode/rows.js';
import { requireAll } from '../../helpers/flow-fixtures.js';
import { haveNfdump, nfdumpDecode, type NfRecord } from '../../helpers/nfdump.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** netsvc's rows for the datagrams, in nfdump's record shape (next hop left out: nfdump has none here). */
function ours(...datagrams: Buffer[]): Omit<NfRecord, 'nextHop'>[] {
  const d = createFlowDecoder();
  const b = new FlowBatch(8);
  const from = exporterRef('127.0.0.1');
  for (const g of datagrams) d.decode(g, from, F.EXPORT_S * 1000 + 500, b);
  return rows(b).map((r) => ({
    start: r.start,
    end: r.end,
    proto: r.proto,
    src: r.src,
    dst: r.dst,
    srcPort: r.srcPort,
    dstPort: r.dstPort,
    bytes: r.bytes,
    packets: r.packets,
  }));
}

const strip = (r: NfRecord): Omit<NfRecord, 'nextHop'> => {
  const { nextHop: _, ...rest } = r;
  return rest;
};

async function importJson(datagrams: Buffer[]): Promise<ImportReport> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-fidelity-'));
  dirs.push(dir);
  const pcap = join(dir, 'export.pcap');
  writeFileSync(
    pcap,
    writeCapture(
      datagrams.map((payload, i) => ({
        timeMs: F.EXPORT_S * 1000 + i,
        src: '127.0.0.1',
        dst: '127.0.0.1',
        srcPort: 40000,
        dstPort: 2055,
        payload,
      })),
    ),
  );
  const stdout: string[] = [];
  const stderr: string[] = [];
  const ctx: CliContext = { ...processContext(), out: (t) => stdout.push(t), err: (t) => stderr.push(t) };
  expect(await runCli(['import', '--json', '-d', join(dir, 'data'), pcap], ctx), stderr.join('')).toBe(0);
  return JSON.parse(stdout.join('')) as ImportReport;
}

describe('netsvc import --json: nothing silently dropped', () => {
  it('names every refused record under its reason beside the flows it kept', async () => {
    const report = await importJson([F.wlcV9(), F.notAFlow(), F.reservedSet(), F.malformedAfterRecords()]);
    expect({ flows: report.flows, bytes: report.bytes, packets: report.packets }).toEqual({
      flows: 3,
      bytes: 143_000_000,
      packets: 133_708,
    });
    expect(report.counters).toMatchObject({
      recordsNotFlows: 2,
      setsReserved: 1,
      recordsInMalformed: 2,
      malformed: 1,
      recordsWithoutAddress: 0,
    });
  });

  it('data whose template never comes is counted as dropped (pendingExpired) when the capture ends', async () => {
    const [early] = F.dataBeforeTemplate();
    const report = await importJson([early!]);
    expect(report.flows).toBe(0);
    expect(report.counters).toMatchObject({ dataWithoutTemplate: 1, pendingBuffered: 1, pendingExpired: 1, pendingDecoded: 0 });
  });
});

describe.skipIf(!haveNfdump && !requireAll)('vendor fidelity: netsvc and nfcapd + nfdump on the same datagrams', () => {
  it('has nfcapd and nfdump', () => {
    expect(haveNfdump).toBe(true);
  });

  it('SRv6 IPv4-in-IPv6 template: the same inner flows, both directions', async () => {
    const g = F.srv6Ipv4InIpv6();
    const nf = await nfdumpDecode([g]);
    expect(ours(g)).toEqual(nf.records.map(strip));
  });

  it('IPv6-in-IPv6 v9 template: the same inner flow', async () => {
    const g = F.ipv6InIpv6V9();
    const nf = await nfdumpDecode([g]);
    expect(ours(g)).toEqual(nf.records.map(strip));
  });

  it('GRE IPv4-in-IPv4: the same inner flow; a plain packet (inner header zero) is its outer flow here, an all-zero flow in nfdump', async () => {
    const g = F.greIpv4InIpv4();
    const nf = (await nfdumpDecode([g])).records.map(strip);
    const mine = ours(g);
    expect(mine[0]).toEqual(nf[0]);
    expect(nf[1]).toMatchObject({ src: '0.0.0.0', dst: '0.0.0.0', proto: 0, bytes: mine[1]!.bytes, packets: mine[1]!.packets });
    expect(mine[1]).toMatchObject({ src: '198.51.100.1', dst: '198.51.100.9', proto: 6 });
  });

  it('wireless controller (address-less v9): netsvc import counts the flows, bytes and packets nfdump counts', async () => {
    const g = F.wlcV9();
    const nf = await nfdumpDecode([g]);
    const report = await importJson([g]);
    expect(nf.info.flows).toBe(F.WLC_CLIENTS.length);
    expect({ flows: report.flows, bytes: report.bytes, packets: report.packets }).toEqual({
      flows: nf.info.flows,
      bytes: nf.info.bytes,
      packets: nf.info.packets,
    });
  });

  it('systemInitTimeMilliseconds in the record: nfdump ignores it in v9 (header uptime) and swaps start and end in IPFIX', async () => {
    const v10 = F.initInRecord(10);
    const v9 = F.initInRecord(9);
    const mine = ours(v10);
    const nf10 = (await nfdumpDecode([v10])).records;
    expect(nf10.map((r) => [r.start, r.end])).toEqual(mine.map((r) => [r.end, r.start]));
    const nf9 = (await nfdumpDecode([v9])).records;
    // the header's uptime (5 000 s) against the records' 1 000 s and 2 001 s
    expect(nf9.map((r) => r.start)).toEqual([F.EXPORT_S * 1000 - 4_000_000, F.EXPORT_S * 1000 - 2_999_000]);
    expect(ours(v9)).toEqual(mine);
  });

  it('PSAMP selectors and v9 samplers: nfdump stores the counters unscaled where netsvc applies the interval', async () => {
    for (const g of [F.psampRandomOptions(), F.psampSelectorsOptions(), F.psampSelectorsInRecord(), F.v9Samplers()]) {
      const nf = (await nfdumpDecode([g])).records.map(strip);
      const mine = ours(g);
      expect(nf.length).toBe(mine.length);
      for (let i = 0; i < mine.length; i++) {
        expect(mine[i]!.bytes).toBeGreaterThan(nf[i]!.bytes);
        expect(mine[i]!.bytes % nf[i]!.bytes).toBe(0);
        expect({ ...mine[i], bytes: 0, packets: 0 }).toEqual({ ...nf[i], bytes: 0, packets: 0 });
      }
    }
  });

  describe('where netsvc differs from nfdump 1.7 on purpose (docs/netflow.md, "netsvc and nfdump")', () => {
    it('IPFIX flowStart/EndSysUpTime with the boot time in options data: netsvc init + uptime, nfdump start and end swapped', async () => {
      const g = F.ipfixUptimeWithOptionsInit();
      const mine = ours(g);
      expect(mine.map((r) => [r.start, r.end])).toEqual([[F.START_MS, F.END_MS]]);
      const nf = (await nfdumpDecode([g])).records;
      expect(nf.map((r) => [r.start, r.end])).toEqual([[F.END_MS, F.START_MS]]);
    });

    it('one template with IPv4 and IPv6 addresses: netsvc takes the family of the non-zero addresses, nfdump shows the IPv4 flow as :: → ::', async () => {
      const g = F.mixedFamilies();
      expect(ours(g).map((r) => `${r.src} ${r.dst}`)).toEqual(['10.12.0.1 10.12.0.2', '2001:db8:12::1 2001:db8:12::2']);
      // nfdump keeps both families in the record and shows the IPv6 ones: zeros for the IPv4 flow
      const { json } = await nfdumpDecode([g]);
      expect(json.map((j) => `${j.src6_addr} ${j.dst6_addr}`)).toEqual([':: ::', '2001:db8:12::1 2001:db8:12::2']);
    });

    it('ICMP type/code: netsvc reads icmpTypeCodeIPv4, icmpTypeIPv4/CodeIPv4 and a v9 L4_DST_PORT alike; nfdump only the first', async () => {
      const gs = F.icmpForms();
      expect(ours(...gs).map((r) => [r.srcPort, r.dstPort])).toEqual([
        [0, 0x0800],
        [0, 0x0b00],
        [0, 0x0303],
      ]);
      const { json } = await nfdumpDecode(gs);
      expect(json.map((j) => [j.icmp_type, j.icmp_code])).toEqual([
        [8, 0],
        [0, 0],
        [0, 0],
      ]);
    });

    it('data before its template: netsvc holds it and decodes it when the template comes, nfdump drops it', async () => {
      const gs = F.dataBeforeTemplate();
      expect(ours(...gs).map((r) => r.srcPort)).toEqual([9001, 9002]);
      expect((await nfdumpDecode(gs)).records.map((r) => r.srcPort)).toEqual([9002]);
    });

    it('several v9 samplers and an in-record samplingInterval: netsvc scales each record by its own, nfdump (nfcapd without -s) by none', async () => {
      const two = F.v9TwoSamplers();
      expect(ours(two).map((r) => r.bytes)).toEqual([6_000, 60_000]);
      expect((await nfdumpDecode([two])).records.map((r) => r.bytes)).toEqual([600, 600]);
      const own = F.v9InRecordInterval();
      expect(ours(own).map((r) => r.bytes)).toEqual([96_000]);
      expect((await nfdumpDecode([own])).records.map((r) => r.bytes)).toEqual([1_500]);
    });
  });
});
