import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { selectorInterval } from '../../../collector/decode/sampling.js';
import * as F from './fidelity-datagrams.js';
import { decodeFiles, rows, row as zeroRow } from './rows.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, v9OptionsTemplate, v9Packet, v9Templates, vendor } from './wire.js';

const RECEIVED = 1_700_000_100_000;

describe('sampling', () => {
  it('v9 options data maps sampler id → interval; flows naming that sampler are scaled', () => {
    const from = exporterRef('203.0.113.5');
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const hdr = { uptimeMs: 1000, unixSecs: 1_700_000_000 };
    d.decode(
      v9Packet(
        hdr,
        // scope: System (type 1); options: FLOW_SAMPLER_ID (48), FLOW_SAMPLER_MODE (49), FLOW_SAMPLER_RANDOM_INTERVAL (50)
        v9OptionsTemplate(
          300,
          [[1, 4]],
          [
            [48, 1],
            [49, 1],
            [50, 4],
          ],
        ),
        v9Templates({
          id: 301,
          fields: [
            [8, 4],
            [12, 4],
            [1, 4],
            [2, 4],
            [48, 1],
          ],
        }),
      ),
      exporterRef('203.0.113.5'),
      RECEIVED,
      b,
    );
    const opts = Buffer.concat([
      uint(0, 4),
      uint(7, 1),
      uint(2, 1),
      uint(100, 4),
      uint(0, 4),
      uint(8, 1),
      uint(2, 1),
      uint(512, 4),
    ]);
    const flow = (src: string, sampler: number): Buffer =>
      Buffer.concat([ipv4(src), ipv4('10.9.9.9'), uint(1500, 4), uint(3, 4), uint(sampler, 1)]);
    d.decode(
      v9Packet(hdr, set(300, opts), set(301, Buffer.concat([flow('10.7.0.1', 7), flow('10.7.0.2', 8), flow('10.7.0.3', 9)]))),
      from,
      RECEIVED,
      b,
    );
    const r = rows(b);
    expect(r[0]).toMatchObject({ src: '10.7.0.1', bytes: 150_000, packets: 300, samplingInterval: 100 });
    expect(r[1]).toMatchObject({ src: '10.7.0.2', bytes: 1500 * 512, packets: 3 * 512, samplingInterval: 512 });
    // Sampler 9 was never announced: no scaling.
    expect(r[2]).toMatchObject({ src: '10.7.0.3', bytes: 1500, packets: 3, samplingInterval: 1 });
    expect(d.counters.exporter(from.address).optionsRecords).toBe(2);
  });

  it('softflowd v9 announcing 1:100 in options data (netflow9_test_invalid01.dat) scales its flows', () => {
    const { rows: r } = decodeFiles(['netflow9_test_invalid01.dat']);
    // Records carry in_bytes 96/98, in_pkts 1 (read from the datagram by hand).
    expect(r.map((f) => [f.bytes, f.packets, f.samplingInterval])).toEqual([
      [9600, 100, 100],
      [9800, 100, 100],
    ]);
  });

  it('IPFIX samplingPacketInterval/Space gives the domain-wide interval', () => {
    const from = exporterRef('203.0.113.6');
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const m = ipfixMessage(
      { exportSecs: 1_700_000_000, domain: 3 },
      set(
        3,
        ipfixTemplateRecord(
          700,
          [
            [149, 4],
            [305, 4],
            [306, 4],
          ],
          1,
        ),
        false,
      ),
      set(
        2,
        ipfixTemplateRecord(701, [
          [8, 4],
          [1, 4],
          [2, 4],
        ]),
        false,
      ),
      set(700, Buffer.concat([uint(3, 4), uint(1, 4), uint(49, 4)]), false), // 1 packet in every 50
      set(701, Buffer.concat([ipv4('10.8.0.1'), uint(100, 4), uint(2, 4)]), false),
    );
    d.decode(m, from, RECEIVED, b);
    expect(rows(b)[0]).toMatchObject({ bytes: 5000, packets: 100, samplingInterval: 50 });
  });

  it('Juniper MX240 IPFIX options data (samplingInterval 1000) scales later flows of the same domain', () => {
    const from = exporterRef('203.0.113.7');
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(vendor('ipfix_test_juniper_mx240_junos151r6s3_opttpl512.dat'), from, RECEIVED, b);
    d.decode(vendor('ipfix_test_juniper_mx240_junos151r6s3_data512.dat'), from, RECEIVED, b);
    const domainId = vendor('ipfix_test_juniper_mx240_junos151r6s3_data512.dat').readUInt32BE(12);
    const flows = (domain: number): Buffer =>
      ipfixMessage(
        { exportSecs: 1_527_997_000, domain },
        set(
          2,
          ipfixTemplateRecord(300, [
            [8, 4],
            [1, 8],
            [2, 8],
          ]),
          false,
        ),
        set(300, Buffer.concat([ipv4('10.10.0.1'), uint(64, 8), uint(1, 8)]), false),
      );
    d.decode(flows(domainId), from, RECEIVED, b);
    d.decode(flows(domainId + 1), from, RECEIVED, b); // another domain: not sampled
    const r = rows(b);
    expect(r[0]).toMatchObject({ bytes: 64_000, packets: 1000, samplingInterval: 1000 });
    expect(r[1]).toMatchObject({ bytes: 64, packets: 1, samplingInterval: 1 });
  });

  it('a configured per-exporter override beats the v5 header and options data', () => {
    const mx80 = decodeFiles(['netflow5_test_juniper_mx80.dat'], {
      exporter: '203.0.113.8',
      config: { samplingOverride: { '203.0.113.8': 10 } },
    });
    expect(mx80.rows[28]).toMatchObject({ packets: 20, bytes: 1040, samplingInterval: 10 });
    const sf = decodeFiles(['netflow9_test_invalid01.dat'], {
      exporter: '203.0.113.8',
      config: { samplingOverride: { '203.0.113.8': 4 } },
    });
    expect(sf.rows.map((f) => f.samplingInterval)).toEqual([4, 4]);
    expect(sf.rows[0]!.bytes).toBe(384);
    // Another exporter is not overridden.
    const other = decodeFiles(['netflow5_test_juniper_mx80.dat'], {
      exporter: '203.0.113.9',
      config: { samplingOverride: { '203.0.113.8': 10 } },
    });
    expect(other.rows[28]!.samplingInterval).toBe(1000);
  });
});

describe('every sampling method (RFC 5475/5477 PSAMP selectors, NetFlow v9 samplers)', () => {
  const decodeOne = (g: Buffer) => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const from = exporterRef('192.0.2.201');
    d.decode(g, from, RECEIVED, b);
    return { rows: rows(b), counters: d.counters.exporter(from.address) };
  };
  const flow = (src: string, srcPort: number, interval: number) =>
    zeroRow({
      src,
      dst: '198.18.0.1',
      exporter: '192.0.2.201',
      received: RECEIVED,
      start: F.START_MS,
      end: F.END_MS,
      bytes: 1_000 * interval,
      packets: 2 * interval,
      srcPort,
      dstPort: 443,
      proto: 6,
      samplingInterval: interval,
    });

  it('selectorInterval: count-based (1 of 100), random n-out-of-N, probabilistic 1/p, time-based share of time', () => {
    const n = Number.NaN;
    expect(selectorInterval(1, 99, n, n, n, n, n)).toBe(100);
    expect(selectorInterval(n, n, 1, 256, n, n, n)).toBe(256);
    expect(selectorInterval(n, n, n, n, 0.001, n, n)).toBe(1000);
    expect(selectorInterval(n, n, n, n, n, 1_000, 9_000)).toBe(10);
    // 2 of every 3 packets: 1.5 rounds to 2; nothing said: 0 (not an interval)
    expect(selectorInterval(2, 1, n, n, n, n, n)).toBe(2);
    expect(selectorInterval(n, n, n, n, n, n, n)).toBe(0);
    expect(selectorInterval(n, n, n, n, 0, n, n)).toBe(0);
  });

  it('random n-out-of-N (304 = 3, 309 = 1, 310 = 256) in options data keyed by selectorId: the records that name no selector take 256', () => {
    const { rows: r } = decodeOne(F.psampRandomOptions());
    expect(r).toEqual([flow('10.5.0.1', 1001, 256), flow('10.5.0.2', 1002, 256)]);
  });

  it('a record naming a selector the options data never announced is not given the lone selector of its domain', () => {
    const opts = [
      set(
        3,
        ipfixTemplateRecord(
          300,
          [
            [302, 8],
            [304, 2],
            [309, 4],
            [310, 4],
          ],
          1,
        ),
      ),
      set(300, Buffer.concat([uint(17, 8), uint(3, 2), uint(1, 4), uint(256, 4)])),
    ];
    const fields: [number, number][] = [
      [302, 8],
      [8, 4],
      [12, 4],
      [1, 4],
      [2, 4],
    ];
    const data = set(
      262,
      Buffer.concat([
        uint(99, 8),
        ipv4('10.5.1.1'),
        ipv4('10.5.1.2'),
        uint(100, 4),
        uint(1, 4),
        uint(17, 8),
        ipv4('10.5.1.3'),
        ipv4('10.5.1.4'),
        uint(100, 4),
        uint(1, 4),
      ]),
    );
    const { rows: r } = decodeOne(
      ipfixMessage({ exportSecs: F.EXPORT_S, domain: 5 }, ...opts, set(2, ipfixTemplateRecord(262, fields)), data),
    );
    expect(r.map((x) => [x.src, x.samplingInterval, x.bytes])).toEqual([
      ['10.5.1.1', 1, 100],
      ['10.5.1.3', 256, 25_600],
    ]);
  });

  it('each PSAMP selector announced in options data scales the records naming it by selectorId', () => {
    const { rows: r, counters } = decodeOne(F.psampSelectorsOptions());
    expect(r).toEqual(F.PSAMP_SELECTORS.map((s) => flow(`10.6.0.${s.id}`, 2000 + s.id, s.interval)));
    expect(counters.optionsRecords).toBe(4);
  });

  it("a record's own selector fields win over its selector's options data (1 in 7), which applies to a record without them", () => {
    const { rows: r } = decodeOne(F.psampSelectorsInRecord());
    expect(r).toEqual([
      ...F.PSAMP_SELECTORS.map((s) => flow(`10.7.0.${s.id}`, 3000 + s.id, s.interval)),
      flow('10.7.0.9', 3009, 7),
    ]);
  });

  it('v9: samplerId → samplerRandomInterval from options data; a record with its own samplingInterval or samplerRandomInterval keeps it', () => {
    const { rows: r } = decodeOne(F.v9Samplers());
    const v9 = (src: string, srcPort: number, iv: number) => ({
      ...flow(src, srcPort, iv),
      dst: '198.18.0.2',
      dstPort: 123,
      proto: 17,
      start: F.EXPORT_S * 1000 - 60_000,
      end: F.EXPORT_S * 1000 - 30_000,
      bytes: 800 * iv,
      packets: 4 * iv,
    });
    expect(r).toEqual([v9('10.8.0.1', 4001, 50), v9('10.8.0.2', 4002, 10), v9('10.8.0.3', 4003, 20)]);
  });

  it('an implied interval above maxSamplingInterval is refused and counted, not applied', () => {
    const d = createFlowDecoder({ limits: { minTimeMs: 0, maxFutureMs: 86_400_000, maxSamplingInterval: 100 } });
    const b = new FlowBatch();
    const from = exporterRef('192.0.2.202');
    d.decode(F.psampRandomOptions(), from, RECEIVED, b);
    expect(rows(b).map((x) => x.samplingInterval)).toEqual([1, 1]);
    expect(d.counters.exporter(from.address).samplingRefused).toBe(1);
  });
});
