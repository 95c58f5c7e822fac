import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { compileTemplate } from '../../../collector/decode/record-decoder.js';
import { rows, type Row, row as zeroRow } from './rows.js';
import { asaNselPackets, yafBiflowMessages } from './two-way-fixtures.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, type Spec } from './wire.js';

const EXPORTER = '192.0.2.10';
const from = exporterRef(EXPORTER);
const RECEIVED = 1_700_000_600_000;

/** A row with every column: the given fields over zeros (sampling interval 1). */
function row(f: Partial<Row> & Pick<Row, 'src' | 'dst' | 'nextHop'>): Row {
  return zeroRow({ received: RECEIVED, exporter: EXPORTER, ...f });
}

function decodeAll(datagrams: Buffer[]) {
  const d = createFlowDecoder();
  const b = new FlowBatch(4);
  const outcomes = datagrams.map((g) => d.decode(g, from, RECEIVED, b));
  return { rows: rows(b), outcomes, counters: d.counters.exporter(from.address) };
}

describe('two-way records', () => {
  it('stores each RFC 5103 biflow (YAF) as a forward row and, when it counts return traffic, a reverse row', () => {
    const { rows: got, outcomes, counters } = decodeAll(yafBiflowMessages());
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'ok']);
    const tcp = { start: 1_700_000_300_000, end: 1_700_000_310_500, proto: 6 };
    const icmp = { start: 1_700_000_302_000, end: 1_700_000_303_000, proto: 1 };
    const dns6 = { start: 1_700_000_305_000, end: 1_700_000_305_040, proto: 17, ipVersion: 6 };
    expect(got).toEqual([
      row({
        ...tcp,
        src: '10.0.0.1',
        dst: '198.51.100.7',
        nextHop: '0.0.0.0',
        srcPort: 51_000,
        dstPort: 443,
        bytes: 1_200,
        packets: 10,
        tcpFlags: 0x1b,
        tos: 0,
      }),
      // The answer: addresses and ports swapped, reverse counters, reverse flags and ToS.
      row({
        ...tcp,
        src: '198.51.100.7',
        dst: '10.0.0.1',
        nextHop: '0.0.0.0',
        srcPort: 443,
        dstPort: 51_000,
        bytes: 48_000,
        packets: 40,
        tcpFlags: 0x1b,
        tos: 0x20,
      }),
      // A uniflow (zero reverse counters) has no reverse row.
      row({
        start: 1_700_000_301_000,
        end: 1_700_000_301_000,
        proto: 17,
        src: '10.0.0.1',
        dst: '224.0.0.251',
        nextHop: '0.0.0.0',
        srcPort: 5353,
        dstPort: 5353,
        bytes: 90,
        packets: 1,
      }),
      row({
        ...icmp,
        src: '10.0.0.2',
        dst: '192.0.2.53',
        nextHop: '0.0.0.0',
        dstPort: 0x0800,
        bytes: 168,
        packets: 2,
        tos: 0xb8,
      }),
      // ICMP replies: the request's type/code does not describe them, so both ports are 0.
      row({ ...icmp, src: '192.0.2.53', dst: '10.0.0.2', nextHop: '0.0.0.0', bytes: 168, packets: 2, tos: 0 }),
      row({
        ...dns6,
        src: '2001:db8::10',
        dst: '2001:db8:53::1',
        nextHop: '::',
        srcPort: 40_000,
        dstPort: 53,
        bytes: 81,
        packets: 1,
      }),
      row({
        ...dns6,
        src: '2001:db8:53::1',
        dst: '2001:db8::10',
        nextHop: '::',
        srcPort: 53,
        dstPort: 40_000,
        bytes: 210,
        packets: 1,
        tos: 0x28,
      }),
    ]);
    expect({
      flows: counters.flows,
      reverseFlows: counters.reverseFlows,
      bytes: counters.bytes,
      packets: counters.packetsInFlows,
    }).toEqual({
      flows: 7,
      reverseFlows: 3,
      bytes: 1_200 + 48_000 + 90 + 168 + 168 + 81 + 210,
      packets: 10 + 40 + 1 + 2 + 2 + 1 + 1,
    });
    expect(counters.recordsWithoutAddress).toBe(0);
  });

  it('stores the responder side of Cisco ASA NSEL records (232/299) as reverse rows, interfaces swapped', () => {
    const { rows: got, outcomes, counters } = decodeAll(asaNselPackets());
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'ok']);
    const common = { nextHop: '0.0.0.0' };
    const t1 = { start: 1_700_000_400_000, end: 1_700_000_400_000, proto: 6 };
    const t2 = { start: 1_700_000_450_000, end: 1_700_000_450_000, proto: 17 };
    const t4 = { start: 1_700_000_480_000, end: 1_700_000_480_000, proto: 1 };
    const t5 = { start: 1_700_000_420_000, end: 1_700_000_420_000, proto: 6 };
    expect(got).toEqual([
      row({
        ...common,
        ...t1,
        src: '192.168.1.20',
        dst: '203.0.113.80',
        srcPort: 50_123,
        dstPort: 443,
        inputIf: 3,
        outputIf: 4,
        bytes: 3_000,
        packets: 20,
      }),
      row({
        ...common,
        ...t1,
        src: '203.0.113.80',
        dst: '192.168.1.20',
        srcPort: 443,
        dstPort: 50_123,
        inputIf: 4,
        outputIf: 3,
        bytes: 150_000,
        packets: 110,
      }),
      row({
        ...common,
        ...t2,
        src: '192.168.1.21',
        dst: '198.51.100.53',
        srcPort: 53_000,
        dstPort: 53,
        inputIf: 3,
        outputIf: 4,
        bytes: 400,
        packets: 4,
      }),
      row({
        ...common,
        ...t2,
        src: '198.51.100.53',
        dst: '192.168.1.21',
        srcPort: 53,
        dstPort: 53_000,
        inputIf: 4,
        outputIf: 3,
        bytes: 1_200,
        packets: 4,
      }),
      // Flow creation: nothing counted either way, so no reverse row.
      row({
        ...common,
        start: 1_700_000_499_000,
        end: 1_700_000_499_000,
        proto: 6,
        src: '192.168.1.22',
        dst: '203.0.113.81',
        srcPort: 50_200,
        dstPort: 80,
        inputIf: 3,
        outputIf: 4,
      }),
      row({
        ...common,
        ...t4,
        src: '192.168.1.23',
        dst: '203.0.113.1',
        dstPort: 0x0800,
        inputIf: 3,
        outputIf: 4,
        bytes: 84,
        packets: 1,
      }),
      row({ ...common, ...t4, src: '203.0.113.1', dst: '192.168.1.23', inputIf: 4, outputIf: 3, bytes: 84, packets: 1 }),
      // Older ASA template without packet counts: bytes only, both ways.
      row({
        ...common,
        ...t5,
        src: '192.168.1.30',
        dst: '203.0.113.90',
        srcPort: 51_000,
        dstPort: 993,
        inputIf: 5,
        outputIf: 6,
        bytes: 2_500,
      }),
      row({
        ...common,
        ...t5,
        src: '203.0.113.90',
        dst: '192.168.1.30',
        srcPort: 993,
        dstPort: 51_000,
        inputIf: 6,
        outputIf: 5,
        bytes: 64_000,
      }),
    ]);
    expect({
      flows: counters.flows,
      reverseFlows: counters.reverseFlows,
      recordsWithoutAddress: counters.recordsWithoutAddress,
    }).toEqual({
      flows: 9,
      reverseFlows: 4,
      recordsWithoutAddress: 0,
    });
  });

  it('scales reverse counters by the sampling interval of the record, and keeps an address-less two-way record with its reverse row', () => {
    const fields: Spec[] = [
      [8, 4],
      [12, 4],
      [1, 4],
      [2, 4],
      [1, 4, 29305],
      [2, 4, 29305],
      [34, 4], // samplingInterval
    ];
    const rec = (src: string, dst: string): Buffer =>
      Buffer.concat([ipv4(src), ipv4(dst), uint(100, 4), uint(1, 4), uint(300, 4), uint(2, 4), uint(10, 4)]);
    const noAddr: Spec[] = [
      [1, 4],
      [1, 4, 29305],
    ];
    const d = createFlowDecoder();
    const b = new FlowBatch(1);
    d.decode(
      ipfixMessage(
        { exportSecs: 1_700_000_500 },
        set(2, Buffer.concat([ipfixTemplateRecord(300, fields), ipfixTemplateRecord(301, noAddr)])),
        set(300, Buffer.concat([rec('10.9.0.1', '10.9.0.2'), rec('10.9.0.3', '10.9.0.4')])),
        set(301, Buffer.concat([uint(5, 4), uint(6, 4)])),
      ),
      from,
      RECEIVED,
      b,
    );
    const got = rows(b);
    expect(got.map((r) => [r.src, r.dst, r.bytes, r.packets, r.samplingInterval])).toEqual([
      ['10.9.0.1', '10.9.0.2', 1_000, 10, 10],
      ['10.9.0.2', '10.9.0.1', 3_000, 20, 10],
      ['10.9.0.3', '10.9.0.4', 1_000, 10, 10],
      ['10.9.0.4', '10.9.0.3', 3_000, 20, 10],
      // No address: kept with the unspecified one (as any record with counters), both ways.
      ['0.0.0.0', '0.0.0.0', 5, 0, 1],
      ['0.0.0.0', '0.0.0.0', 6, 0, 1],
    ]);
    const c = d.counters.exporter(from.address);
    // The address-less record counts once as a record; its reverse row is a row, not a record.
    expect({
      flows: c.flows,
      reverseFlows: c.reverseFlows,
      recordsWithoutAddress: c.recordsWithoutAddress,
      bytes: c.bytes,
    }).toEqual({
      flows: 6,
      reverseFlows: 3,
      recordsWithoutAddress: 1,
      bytes: 1_000 + 3_000 + 1_000 + 3_000 + 5 + 6,
    });
  });

  it('swaps the addresses of the family each record has in a template with IPv4 and IPv6 fields', () => {
    const fields: Spec[] = [
      [8, 4],
      [12, 4],
      [27, 16],
      [28, 16],
      [1, 4],
      [1, 4, 29305],
    ];
    const v6 = (last: number): Buffer => Buffer.concat([Buffer.from('20010db8', 'hex'), Buffer.alloc(11), uint(last, 1)]);
    const d = createFlowDecoder();
    const b = new FlowBatch(1);
    d.decode(
      ipfixMessage(
        { exportSecs: 1_700_000_500 },
        set(2, ipfixTemplateRecord(302, fields)),
        set(
          302,
          Buffer.concat([
            Buffer.concat([ipv4('10.8.0.1'), ipv4('10.8.0.2'), Buffer.alloc(32), uint(10, 4), uint(20, 4)]),
            Buffer.concat([Buffer.alloc(8), v6(1), v6(2), uint(30, 4), uint(40, 4)]),
          ]),
        ),
      ),
      from,
      RECEIVED,
      b,
    );
    expect(rows(b).map((r) => [r.ipVersion, r.src, r.dst, r.nextHop, r.bytes])).toEqual([
      [4, '10.8.0.1', '10.8.0.2', '0.0.0.0', 10],
      [4, '10.8.0.2', '10.8.0.1', '0.0.0.0', 20],
      [6, '2001:db8::1', '2001:db8::2', '::', 30],
      [6, '2001:db8::2', '2001:db8::1', '::', 40],
    ]);
  });

  it('in a tunnel template, the reverse row is the return direction of the inner flow', () => {
    // GRE-style: outer IPv4 header, then the inner one with its ports; both directions counted.
    const fields: Spec[] = [
      [8, 4],
      [12, 4],
      [4, 1],
      [8, 4],
      [12, 4],
      [4, 1],
      [7, 2],
      [11, 2],
      [1, 4],
      [2, 4],
      [1, 4, 29305],
      [2, 4, 29305],
    ];
    const rec = Buffer.concat([
      ipv4('198.51.100.1'),
      ipv4('198.51.100.2'),
      uint(47, 1),
      ipv4('10.1.1.1'),
      ipv4('10.2.2.2'),
      uint(6, 1),
      uint(40_000, 2),
      uint(443, 2),
      uint(900, 4),
      uint(6, 4),
      uint(9_000, 4),
      uint(8, 4),
    ]);
    const { rows: got, counters } = decodeAll([
      ipfixMessage({ exportSecs: 1_700_000_550 }, set(2, ipfixTemplateRecord(310, fields)), set(310, rec)),
    ]);
    const t = { start: 1_700_000_550_000, end: 1_700_000_550_000, proto: 6 };
    expect(got).toEqual([
      // The tunnel endpoint (outer destination) is the forward row's next hop.
      row({
        ...t,
        src: '10.1.1.1',
        dst: '10.2.2.2',
        nextHop: '198.51.100.2',
        srcPort: 40_000,
        dstPort: 443,
        bytes: 900,
        packets: 6,
      }),
      row({
        ...t,
        src: '10.2.2.2',
        dst: '10.1.1.1',
        nextHop: '0.0.0.0',
        srcPort: 443,
        dstPort: 40_000,
        bytes: 9_000,
        packets: 8,
      }),
    ]);
    expect({ flows: counters.flows, reverseFlows: counters.reverseFlows }).toEqual({ flows: 2, reverseFlows: 1 });
  });

  it('a datagram found malformed after two-way records takes back their reverse rows, counting records, not rows', () => {
    const tpl = set(
      2,
      ipfixTemplateRecord(320, [
        [8, 4],
        [12, 4],
        [1, 4],
        [1, 4, 29305],
      ]),
    );
    const good = set(
      320,
      Buffer.concat([
        ipv4('10.0.0.1'),
        ipv4('10.0.0.2'),
        uint(100, 4),
        uint(700, 4),
        ipv4('10.0.0.3'),
        ipv4('10.0.0.4'),
        uint(200, 4),
        uint(800, 4),
      ]),
    );
    // A variable-length field running past its set.
    const vtpl = set(
      2,
      ipfixTemplateRecord(321, [
        [8, 4],
        [82, 65535],
      ]),
    );
    const bad = set(321, Buffer.concat([ipv4('10.0.0.5'), uint(200, 1), Buffer.alloc(3)]), false);
    const { rows: got, outcomes, counters } = decodeAll([ipfixMessage({ exportSecs: 1_700_000_560 }, tpl, vtpl, good, bad)]);
    expect(outcomes.map((o) => o.status)).toEqual(['malformed']);
    expect(got).toEqual([]);
    expect({
      recordsInMalformed: counters.recordsInMalformed,
      reverseFlows: counters.reverseFlows,
      flows: counters.flows,
    }).toEqual({
      recordsInMalformed: 2,
      reverseFlows: 0,
      flows: 0,
    });
  });

  it('adds the reverse-row code only to templates with a reverse counter, so other templates decode as before', () => {
    const plain = [8, 12, 1, 2, 7, 11, 4].map((id) => ({
      id,
      length: id === 8 || id === 12 ? 4 : id === 4 ? 1 : id <= 2 ? 8 : 2,
      enterprise: 0,
    }));
    const code = (fields: typeof plain): string => compileTemplate(fields, 'systemInit').decode.toString();
    expect(code(plain)).not.toContain('rev++');
    // A reverse element that is not a counter (reverseTcpControlBits alone) does not make a two-way template.
    expect(code([...plain, { id: 6, length: 1, enterprise: 29305 }])).not.toContain('rev++');
    expect(code([...plain, { id: 1, length: 8, enterprise: 29305 }])).toContain('rev++');
    expect(code([...plain, { id: 232, length: 4, enterprise: 0 }])).toContain('rev++');
  });
});
