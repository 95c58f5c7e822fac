/**
 * Vendor datagrams from logstash-codec-netflow, sent template-first as an
 * exporter would, checked against the field values that project's
 * spec/codecs/netflow_spec.rb lists for them.
 *
 * Logstash's own v5/v9 uptime arithmetic truncates to whole seconds (and
 * wraps v5 first_switched on netflow5.dat to June 2015), so uptime-derived
 * times are compared with a 2 s tolerance there; absolute IPFIX times are
 * compared exactly.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';
import { decodeFiles, ms, rows, type Row } from './rows.js';
import { vendor, VENDOR_DIR } from './wire.js';

/** Finds exactly one row matching the given fields. */
function one(list: Row[], match: Partial<Row>): Row {
  const hits = list.filter((r) => Object.entries(match).every(([k, v]) => r[k as keyof Row] === v));
  expect(hits, JSON.stringify(match)).toHaveLength(1);
  return hits[0]!;
}

function near(actual: number, iso: string, toleranceMs: number): void {
  expect(Math.abs(actual - ms(iso)), `${new Date(actual).toISOString()} vs ${iso}`).toBeLessThan(toleranceMs);
}

describe('vendor fixtures (logstash-codec-netflow)', () => {
  it('every vendor datagram decodes, templates first; only the two broken v5 ones are malformed', () => {
    const files = readdirSync(VENDOR_DIR).filter((f) => f.endsWith('.dat'));
    expect(files.length).toBe(92);
    // Templates (and options templates) before data, as exporters send them.
    const rank = (f: string): number => (/opttpl|tplopt|_tpl|tpls/.test(f) ? 0 : 1);
    files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const decoder = createFlowDecoder();
    const batch = new FlowBatch();
    const from = exporterRef('192.0.2.1');
    const malformed: string[] = [];
    for (const f of files) {
      const o = decoder.decode(vendor(f), from, 1_700_000_000_000, batch);
      if (o.status !== 'ok') malformed.push(f);
    }
    expect(malformed.sort()).toEqual(['netflow5_test_invalid01.dat', 'netflow5_test_invalid02.dat']);
    const total = decoder.counters.total;
    expect(total.packets).toBe(92);
    expect(total.malformed).toBe(2);
    expect(total.flows).toBe(batch.length);
    expect(batch.length).toBeGreaterThan(400);
  });

  it('broken v5 datagrams are counted as malformed and add no flow', () => {
    const { rows: r, counters, outcomes } = decodeFiles(['netflow5_test_invalid01.dat', 'netflow5_test_invalid02.dat']);
    expect(outcomes.map((o) => o.status)).toEqual(['malformed', 'malformed']);
    expect(r).toHaveLength(0);
    expect(counters.malformed).toBe(2);
    expect(counters.packets).toBe(2);
  });

  it('netflow5.dat (softflowd v5)', () => {
    const { rows: r } = decodeFiles(['netflow5.dat']);
    expect(r).toHaveLength(2);
    expect(r[0]).toMatchObject({ src: '10.0.2.2', dst: '10.0.2.15', srcPort: 54435, dstPort: 22, tcpFlags: 16 });
    expect(r[0]).toMatchObject({ proto: 6, bytes: 230, packets: 5, ipVersion: 4, nextHop: '0.0.0.0' });
    expect(r[1]).toMatchObject({ src: '10.0.2.15', dst: '10.0.2.2', srcPort: 22, dstPort: 54435, tcpFlags: 24 });
    expect(r[1]).toMatchObject({ bytes: 304, packets: 4 });
    // Header 2015-05-02T18:38:08.280Z; first_switched is 0xffffffff, i.e. just
    // before uptime 0: the flow starts seconds before the export, not in June.
    for (const f of r) {
      near(f.end, '2015-05-02T18:38:08.280Z', 5000);
      expect(f.start).toBeLessThanOrEqual(f.end);
      near(f.start, '2015-05-02T18:38:08.280Z', 5000);
    }
  });

  it('Mikrotik v5', () => {
    const { rows: r } = decodeFiles(['netflow5_test_microtik.dat']);
    expect(r).toHaveLength(30);
    expect(r[29]).toMatchObject({ src: '10.0.8.1', dst: '192.168.0.1', nextHop: '192.168.0.1', dstPort: 51826 });
    expect(r[29]).toMatchObject({ srcPort: 80, tos: 40, proto: 6, tcpFlags: 82, inputIf: 13, outputIf: 46 });
    expect(r[29]).toMatchObject({ bytes: 11442, packets: 13, samplingInterval: 1 });
    near(r[29]!.start, '2016-07-21T13:51:42.514Z', 2000);
  });

  it('Juniper MX80 v5 with header sampling 1:1000', () => {
    const { rows: r } = decodeFiles(['netflow5_test_juniper_mx80.dat']);
    expect(r).toHaveLength(29);
    expect(r[28]).toMatchObject({ src: '66.249.92.75', dst: '192.168.0.1', nextHop: '192.168.0.1', dstPort: 80 });
    expect(r[28]).toMatchObject({ srcPort: 37387, srcAs: 15169, dstAs: 64496, inputIf: 542, outputIf: 536 });
    // in_pkts 2, in_bytes 104, sampling_interval 1000: stored scaled.
    expect(r[28]).toMatchObject({ packets: 2000, bytes: 104_000, samplingInterval: 1000, tcpFlags: 16 });
    near(r[28]!.start, '2016-07-21T13:52:34.999Z', 2000);
  });

  it('softflowd v9 (valid01)', () => {
    const { rows: r } = decodeFiles(['netflow9_test_valid01.dat']);
    expect(r).toHaveLength(7);
    expect(r[0]).toMatchObject({ src: '172.16.32.100', dst: '172.16.32.248', srcPort: 123, dstPort: 123 });
    expect(r[0]).toMatchObject({ proto: 17, bytes: 76, packets: 1, ipVersion: 4, tcpFlags: 0, tos: 0 });
    near(r[0]!.start, '2015-10-08T19:03:47.999Z', 2000);
    near(r[0]!.end, '2015-10-08T19:03:47.999Z', 2000);
  });

  it('v9 MAC address template', () => {
    const { rows: r } = decodeFiles(['netflow9_test_macaddr_tpl.dat', 'netflow9_test_macaddr_data.dat']);
    one(r, { src: '172.16.32.1', srcPort: 65058, dst: '172.16.32.201', dstPort: 22, proto: 6 });
  });

  it('Cisco ASA (NSEL): ICMP type/code in the destination port', () => {
    const { rows: r } = decodeFiles(['netflow9_test_cisco_asa_1_tpl.dat', 'netflow9_test_cisco_asa_1_data.dat']);
    expect(r).toHaveLength(14);
    const f = one(r, { src: '192.168.23.22', srcPort: 17549, dst: '164.164.37.11' });
    // icmp_type 8, icmp_code 0 → 8*256+0, as nfdump keeps it.
    expect(f).toMatchObject({ proto: 1, dstPort: 8 * 256, inputIf: 2, outputIf: 3, bytes: 56 });
    expect(f.start).toBe(1444384068169); // flow_start_msec
  });

  it('Cisco ASA #2 (templates in two datagrams)', () => {
    const { rows: r } = decodeFiles([
      'netflow9_test_cisco_asa_2_tpl_26x.dat',
      'netflow9_test_cisco_asa_2_tpl_27x.dat',
      'netflow9_test_cisco_asa_2_data.dat',
    ]);
    // 19 records, 15 of which count return traffic (rev_flow_delta_bytes): one reverse row each.
    expect(r).toHaveLength(19 + 15);
    expect(r[32]).toMatchObject({ src: '192.168.0.1', srcPort: 56651, dst: '192.168.0.18', dstPort: 80 });
    // fwd_flow_delta_bytes (initiatorOctets) 69
    expect(r[32]).toMatchObject({ proto: 6, inputIf: 3, outputIf: 4, bytes: 69, start: 1469109036395 });
    // rev_flow_delta_bytes (responderOctets) 14178, the other way.
    expect(r[33]).toMatchObject({
      src: '192.168.0.18',
      srcPort: 80,
      dst: '192.168.0.1',
      dstPort: 56651,
      proto: 6,
      inputIf: 4,
      outputIf: 3,
      bytes: 14178,
      start: 1469109036395,
    });
  });

  it('two exporters (nprobe and softflowd) keep their own templates', () => {
    const decoder = createFlowDecoder();
    const batch = new FlowBatch();
    const nprobe = exporterRef('192.0.2.20');
    const softflowd = exporterRef('192.0.2.21');
    decoder.decode(vendor('netflow9_test_nprobe_tpl.dat'), nprobe, 1_700_000_000_000, batch);
    decoder.decode(vendor('netflow9_test_softflowd_tpl_data.dat'), softflowd, 1_700_000_000_000, batch);
    decoder.decode(vendor('netflow9_test_nprobe_data.dat'), nprobe, 1_700_000_000_000, batch);
    const r = rows(batch);
    const sf = one(r, { src: '172.16.32.100', dst: '172.16.32.248' });
    expect(sf).toMatchObject({ srcPort: 123, dstPort: 123, proto: 17, bytes: 76, packets: 1, exporter: '192.0.2.21' });
    const np = one(r, { src: '172.16.32.201', srcPort: 22 });
    expect(np).toMatchObject({ dst: '172.16.32.1', dstPort: 65058, bytes: 200, packets: 2, proto: 6 });
    expect(np).toMatchObject({ tos: 16, tcpFlags: 24, exporter: '192.0.2.20' });
    near(np.end, '2015-10-08T19:05:56.999Z', 2000);
  });

  it('softflowd IPFIX: times relative to systemInitTimeMilliseconds from options data', () => {
    const { rows: r, counters } = decodeFiles(['ipfix.dat']);
    expect(counters.optionsRecords).toBe(1);
    expect(r).toHaveLength(6);
    const init = 1431516013506; // systemInitTimeMilliseconds
    const f = one(r, { src: '192.168.253.1', dst: '192.168.253.128' });
    expect(f).toMatchObject({ srcPort: 60560, dstPort: 22, proto: 6, tcpFlags: 16, bytes: 260, packets: 5 });
    expect(f.start).toBe(init + 0); // flowStartSysUpTime 0
    expect(f.end).toBe(init + 12726); // flowEndSysUpTime 12726
    expect(one(r, { src: '192.168.253.128', dst: '192.168.253.1' })).toMatchObject({ bytes: 1000, tcpFlags: 24 });
    const dns = one(r, { src: '192.168.253.2', dst: '192.168.253.132' });
    expect(dns).toMatchObject({ srcPort: 53, dstPort: 35262, proto: 17, bytes: 601, start: init + 1104, end: init + 1142 });
    one(r, { src: '192.168.253.132', dst: '192.168.253.2', srcPort: 35262, dstPort: 53, bytes: 148 });
    one(r, { src: '54.214.9.161', dst: '192.168.253.132', srcPort: 443, dstPort: 49935, tcpFlags: 26, bytes: 5946 });
    one(r, { src: '192.168.253.132', dst: '54.214.9.161', srcPort: 49935, dstPort: 443, tcpFlags: 26, bytes: 2608 });
  });

  it('OpenBSD pflow IPFIX (flowStart/EndMilliseconds)', () => {
    const { rows: r } = decodeFiles(['ipfix_test_openbsd_pflow_tpl.dat', 'ipfix_test_openbsd_pflow_data.dat']);
    expect(r).toHaveLength(26);
    expect(r[25]).toMatchObject({ src: '192.168.0.1', dst: '192.168.0.17', bytes: 6425, packets: 8, srcPort: 80 });
    expect(r[25]).toMatchObject({ dstPort: 64026, inputIf: 1, outputIf: 1, proto: 6, tos: 0 });
    expect(r[25]!.start).toBe(ms('2016-07-21T13:29:59.000Z'));
    expect(r[25]!.end).toBe(ms('2016-07-21T13:30:01.000Z'));
  });

  it('Ubiquiti EdgeRouter v9', () => {
    const { rows: r } = decodeFiles([
      'netflow9_test_ubnt_edgerouter_tpl.dat',
      'netflow9_test_ubnt_edgerouter_data1024.dat',
      'netflow9_test_ubnt_edgerouter_data1025.dat',
    ]);
    expect(r).toHaveLength(16);
    expect(r[0]!.src).toBe('10.1.0.135');
    expect(r[15]).toMatchObject({ src: '192.168.1.102', srcPort: 47690, dst: '10.2.0.95', dstPort: 443 });
    expect(r[15]).toMatchObject({ bytes: 3668, packets: 21, proto: 6, tcpFlags: 27, inputIf: 2, outputIf: 4 });
    near(r[15]!.start, '2016-09-10T15:02:54.999Z', 2000);
    near(r[15]!.end, '2016-09-10T15:23:45.999Z', 2000);
  });

  it('Streamcore v9 (template and data in one datagram)', () => {
    const { rows: r } = decodeFiles(['netflow9_test_streamcore_tpl_data256.dat', 'netflow9_test_streamcore_tpl_data260.dat']);
    expect(r).toHaveLength(4);
    expect(r[0]).toMatchObject({ src: '100.78.40.201', srcPort: 8080, dst: '10.231.128.150', dstPort: 50073 });
    expect(r[0]).toMatchObject({ bytes: 128, packets: 3, tos: 40, tcpFlags: 19, inputIf: 1152, outputIf: 1148 });
    expect(r[3]).toMatchObject({ src: '10.27.8.20', srcPort: 53483, dst: '100.78.40.201', dstPort: 8080 });
    expect(r[3]).toMatchObject({ bytes: 3052, packets: 11, tcpFlags: 26 });
    near(r[3]!.end, '2017-01-11T11:23:35.999Z', 2000);
  });

  it('NetScaler IPFIX: variable-length and enterprise fields skipped, flowEndMicroseconds', () => {
    const { rows: r } = decodeFiles(['ipfix_test_netscaler_tpl.dat', 'ipfix_test_netscaler_data.dat']);
    expect(r).toHaveLength(3);
    expect(r[0]).toMatchObject({ src: '192.168.0.1', dst: '10.0.0.1' });
    expect(Math.floor(r[0]!.end / 1000) * 1000).toBe(ms('2016-11-11T12:09:19.000Z'));
    expect(r[2]).toMatchObject({ src: '192.168.0.1', dst: '10.0.0.1', srcPort: 51053, dstPort: 443, bytes: 1541 });
    expect(r[2]).toMatchObject({ packets: 2, tcpFlags: 24, proto: 6, inputIf: 8, outputIf: 2147483651 });
  });

  it('VMware VDS IPFIX (IPv4 and IPv6)', () => {
    const { rows: r } = decodeFiles([
      'ipfix_test_vmware_vds_tpl.dat',
      'ipfix_test_vmware_vds_data264.dat',
      'ipfix_test_vmware_vds_data266.dat',
      'ipfix_test_vmware_vds_data266_267.dat',
    ]);
    expect(r).toHaveLength(5);
    expect(r[0]).toMatchObject({ src: '172.18.65.21', srcPort: 61209, dst: '172.18.65.211', dstPort: 5985 });
    expect(r[0]).toMatchObject({ tcpFlags: 2, packets: 2, bytes: 100, inputIf: 3, outputIf: 11, proto: 6 });
    expect(r[0]!.start).toBe(ms('2016-12-22T12:17:37.000Z'));
    expect(r[4]).toMatchObject({ src: 'fe80::5187:5cd8:d750:cdc9', dst: 'ff02::1:3', ipVersion: 6 });
    expect(r[4]).toMatchObject({ bytes: 144, dstPort: 5355, srcPort: 61329, proto: 17 });
  });

  it('v9 template with zero-length fields', () => {
    const { rows: r } = decodeFiles(['netflow9_test_0length_fields_tpl_data.dat']);
    expect(r).toHaveLength(10);
    expect(r[9]).toMatchObject({ src: '192.168.1.33', dst: '239.255.255.250', proto: 2, inputIf: 2, outputIf: 3 });
  });

  it('Cisco ASR 9000: options data (if_desc) is read, not stored as flows; template 260 flows', () => {
    const opt = decodeFiles(['netflow9_test_cisco_asr9k_opttpl256.dat', 'netflow9_test_cisco_asr9k_data256.dat']);
    expect(opt.rows).toHaveLength(0);
    expect(opt.counters.optionsRecords).toBe(19);
    const { rows: r } = decodeFiles(['netflow9_test_cisco_asr9k_tpl260.dat', 'netflow9_test_cisco_asr9k_data260.dat']);
    expect(r).toHaveLength(21);
    expect(r[20]).toMatchObject({ src: '10.0.29.46', srcPort: 443, dst: '10.0.15.38', dstPort: 52364 });
    expect(r[20]).toMatchObject({ srcAs: 15169, dstAs: 64498, bytes: 112, packets: 2, tcpFlags: 18 });
    expect(r[20]).toMatchObject({ inputIf: 75, outputIf: 158, nextHop: '10.0.14.27' });
    near(r[20]!.end, '2016-12-06T10:08:54.999Z', 2000);
  });

  it('Cisco NBAR: 15 options records, then flows of template 262', () => {
    expect(decodeFiles(['netflow9_test_cisco_nbar_opttpl260.dat']).counters.optionsRecords).toBe(15);
    const { rows: r } = decodeFiles(['netflow9_test_cisco_nbar_tpl262.dat', 'netflow9_test_cisco_nbar_data262.dat']);
    expect(r).toHaveLength(5);
    expect(r[4]).toMatchObject({ src: '10.10.172.60', srcPort: 45269, dst: '10.30.19.180', dstPort: 161 });
    expect(r[4]).toMatchObject({ proto: 17, bytes: 2794, packets: 36, inputIf: 1, outputIf: 0 });
  });

  it('Juniper SRX options template with a zero-length scope', () => {
    const { counters, outcomes } = decodeFiles(['netflow9_test_juniper_srx_tplopt.dat']);
    expect(outcomes[0]!.status).toBe('ok');
    expect(counters.optionsRecords).toBe(1);
  });

  it('IPFIX data before its templates is held, then decoded when the template file arrives', () => {
    const { rows: r, counters } = decodeFiles(['ipfix_test_netscaler_data.dat', 'ipfix_test_netscaler_tpl.dat']);
    expect(r).toHaveLength(3);
    expect(counters.dataWithoutTemplate).toBeGreaterThanOrEqual(2);
    expect(counters.pendingDecoded).toBeGreaterThanOrEqual(2);
  });
});

describe('decoding into reused arrays', () => {
  it("gives the same rows in arrays full of an earlier batch's bytes as in fresh ones (batches are recycled between threads)", () => {
    const room = 65_536;
    const junk = (): FlowBatch => {
      const b = new FlowBatch(room);
      const old = new FlowBatch(room).handOff();
      for (const buf of [...old.numeric, ...old.addrs]) new Uint8Array(buf).fill(0xa5);
      b.handOff(old);
      return b;
    };
    let flows = 0;
    for (const fx of flowFixtures()) {
      const fresh = new FlowBatch(room);
      const reused = junk();
      const [d1, d2] = [createFlowDecoder(), createFlowDecoder()];
      for (const d of fx.datagrams()) {
        const from = exporterRef(d.srcAddr);
        d1.decode(d.payload, from, d.timeMs, fresh);
        d2.decode(d.payload, from, d.timeMs, reused);
      }
      expect(reused.capacity).toBe(room); // never grew: every row was written over junk
      expect(rows(reused)).toEqual(rows(fresh));
      flows += fresh.length;
    }
    expect(flows).toBeGreaterThan(1000);
  });
});
