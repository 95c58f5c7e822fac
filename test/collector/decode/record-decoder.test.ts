/**
 * The compiled record decoder on the vendor-fidelity cases of issue 17: tunnel templates that
 * repeat the header elements, a record's own systemInitTimeMilliseconds, address-less
 * records, and records refused or taken back (every one counted).
 */
import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { headerCopies } from '../../../collector/decode/template-roles.js';
import * as F from './fidelity-datagrams.js';
import { rows, type Row, row as zeroRow } from './rows.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint } from './wire.js';

const RECEIVED = 1_700_000_100_500;
const EXPORT_MS = F.EXPORT_S * 1000;
const END_SPAN = F.END_MS - F.START_MS;

function decode(...datagrams: Buffer[]) {
  const d = createFlowDecoder();
  const b = new FlowBatch(4);
  const from = exporterRef('192.0.2.200');
  const outcomes = datagrams.map((g) => d.decode(g, from, RECEIVED, b));
  return { rows: rows(b), outcomes, counters: d.counters.exporter(from.address) };
}

/** A row with every column: the defaults of a record that names nothing but what is given. */
function row(r: Partial<Row>): Row {
  return zeroRow({ exporter: '192.0.2.200', received: RECEIVED, start: EXPORT_MS, end: EXPORT_MS, ...r });
}

describe('tunnel templates: every key field from one copy of the headers', () => {
  it('IPv4 in IPv6 (SRv6): the inner UDP flow in each direction, the outer destination as next hop', () => {
    const { rows: r, counters } = decode(F.srv6Ipv4InIpv6());
    const common = { start: F.START_MS, end: F.END_MS, proto: 17, tos: 0x28, nextHop: '2001:db8:b::2', inputIf: 3, outputIf: 7 };
    expect(r).toEqual([
      row({ ...common, src: '192.0.2.110', dst: '192.0.2.14', srcPort: 2222, dstPort: 1111, bytes: 12_000, packets: 10 }),
      row({ ...common, src: '192.0.2.14', dst: '192.0.2.110', srcPort: 1111, dstPort: 2222, bytes: 3_000, packets: 5 }),
    ]);
    expect(counters.flows).toBe(2);
  });

  it('IPv4 in IPv4 (GRE): the inner TCP flow; a record whose inner header is all zero is its outer flow', () => {
    const { rows: r } = decode(F.greIpv4InIpv4());
    expect(r).toEqual([
      row({
        start: F.START_MS,
        end: F.END_MS,
        src: '10.1.1.1',
        dst: '10.2.2.2',
        nextHop: '198.51.100.2',
        proto: 6,
        srcPort: 40000,
        dstPort: 443,
        tcpFlags: 0x1b,
        bytes: 90_000,
        packets: 60,
      }),
      row({
        start: F.START_MS,
        end: F.END_MS,
        src: '198.51.100.1',
        dst: '198.51.100.9',
        proto: 6,
        srcPort: 51000,
        dstPort: 22,
        tcpFlags: 0x18,
        bytes: 4_000,
        packets: 8,
      }),
    ]);
  });

  it('IPv6 in IPv6 (v9): the inner TCP flow, the outer destination as next hop', () => {
    const { rows: r } = decode(F.ipv6InIpv6V9());
    // v9 uptimes 30 s and 60 s at header uptime 100 s, exported at EXPORT_S.
    expect(r).toEqual([
      row({
        start: EXPORT_MS - 70_000,
        end: EXPORT_MS - 40_000,
        src: '2001:db8:aa::5',
        dst: '2001:db8:bb::6',
        nextHop: '2001:db8:2::1',
        ipVersion: 6,
        proto: 6,
        srcPort: 33000,
        dstPort: 80,
        bytes: 64_000,
        packets: 50,
      }),
    ]);
  });

  it('a mixed IPv4/IPv6 template (each address once) stays one header; a repeated element splits it', () => {
    const f = (id: number, length: number) => ({ id, length, enterprise: 0 });
    expect(headerCopies([f(8, 4), f(12, 4), f(27, 16), f(28, 16), f(4, 1), f(7, 2), f(11, 2)])).toEqual([0]);
    expect(headerCopies([f(8, 4), f(12, 4), f(4, 1), f(7, 2), f(11, 2), f(27, 16), f(28, 16)])).toEqual([0]);
    expect(headerCopies([f(27, 16), f(28, 16), f(4, 1), f(8, 4), f(12, 4), f(4, 1), f(7, 2)])).toEqual([0, 3]);
    expect(headerCopies([f(8, 4), f(12, 4), f(4, 1), f(1, 8), f(8, 4), f(12, 4), f(4, 1)])).toEqual([0, 4]);
  });
});

describe('systemInitTimeMilliseconds (160) inside the data record', () => {
  for (const version of [10, 9] as const) {
    it(`${version === 10 ? 'IPFIX' : 'v9'}: start and end are the record's init time plus its uptimes`, () => {
      const { rows: r, counters } = decode(F.initInRecord(version));
      const common = { src: '203.0.113.5', dst: '203.0.113.6', proto: 17, dstPort: 53, bytes: 500, packets: 5 };
      expect(r).toEqual([
        row({ ...common, srcPort: 5001, start: F.START_MS, end: F.END_MS }),
        row({ ...common, srcPort: 5002, start: F.START_MS + 1000, end: F.END_MS + 1000 }),
      ]);
      expect(counters.timestampsClamped).toBe(0);
    });
  }
});

it('IPFIX: a zero systemInitTimeMilliseconds in the record leaves the one of the options data in force', () => {
  const fields: [number, number][] = [
    [8, 4],
    [12, 4],
    [1, 4],
    [22, 4],
    [21, 4],
    [160, 8],
  ];
  const opts = [
    set(
      3,
      ipfixTemplateRecord(
        410,
        [
          [149, 4],
          [160, 8],
        ],
        1,
      ),
    ),
    set(410, Buffer.concat([uint(0, 4), uint(F.START_MS - 5_000, 8)])),
  ];
  const data = set(
    411,
    Buffer.concat([ipv4('10.0.0.1'), ipv4('10.0.0.2'), uint(9, 4), uint(5_000, 4), uint(5_000 + END_SPAN, 4), uint(0, 8)]),
  );
  const { rows: r } = decode(ipfixMessage({ exportSecs: F.EXPORT_S }, ...opts, set(2, ipfixTemplateRecord(411, fields)), data));
  expect(r).toEqual([row({ src: '10.0.0.1', dst: '10.0.0.2', bytes: 9, start: F.START_MS, end: F.END_MS })]);
});

describe('records without an address', () => {
  it('a wireless controller (v9, staIPv4Address only): every record kept, the station as source, counted in the totals', () => {
    const { rows: r, counters } = decode(F.wlcV9());
    expect(r).toEqual(F.WLC_CLIENTS.map((c) => row({ src: c.sta, bytes: c.bytes, packets: c.packets, tos: 0 })));
    expect(counters).toMatchObject({
      flows: 3,
      bytes: 143_000_000,
      packetsInFlows: 133_708,
      recordsWithoutAddress: 0,
      recordsNotFlows: 0,
    });
  });

  it('counters but no address element at all: kept with 0.0.0.0 (:: when ipVersion says 6), counted as recordsWithoutAddress', () => {
    const tpl = set(
      2,
      ipfixTemplateRecord(400, [
        [60, 1],
        [1, 4],
        [2, 4],
        [10, 4],
      ]),
    );
    const data = set(
      400,
      Buffer.concat([uint(4, 1), uint(700, 4), uint(7, 4), uint(12, 4), uint(6, 1), uint(800, 4), uint(8, 4), uint(13, 4)]),
    );
    const { rows: r, counters } = decode(ipfixMessage({ exportSecs: F.EXPORT_S }, tpl, data));
    expect(r).toEqual([
      row({ bytes: 700, packets: 7, inputIf: 12 }),
      row({ src: '::', dst: '::', nextHop: '::', ipVersion: 6, bytes: 800, packets: 8, inputIf: 13 }),
    ]);
    expect(counters).toMatchObject({ flows: 2, bytes: 1500, packetsInFlows: 15, recordsWithoutAddress: 2 });
  });

  it('post-NAT addresses stand for the flow where the pre-NAT ones are absent', () => {
    const tpl = set(
      2,
      ipfixTemplateRecord(401, [
        [225, 4],
        [226, 4],
        [227, 2],
        [228, 2],
        [4, 1],
        [1, 4],
        [2, 4],
      ]),
    );
    const data = set(
      401,
      Buffer.concat([
        ipv4('203.0.113.9'),
        ipv4('198.51.100.20'),
        uint(61000, 2),
        uint(443, 2),
        uint(6, 1),
        uint(100, 4),
        uint(1, 4),
      ]),
    );
    const { rows: r } = decode(ipfixMessage({ exportSecs: F.EXPORT_S }, tpl, data));
    expect(r).toEqual([row({ src: '203.0.113.9', dst: '198.51.100.20', proto: 6, bytes: 100, packets: 1 })]);
  });

  it('neither address nor counter: not a flow, skipped and counted as recordsNotFlows', () => {
    const { rows: r, counters } = decode(F.notAFlow());
    expect(r).toEqual([]);
    expect(counters).toMatchObject({ flows: 0, recordsNotFlows: 2 });
  });
});

describe('records taken back are counted', () => {
  it('rows of a datagram that turns out malformed further on: recordsInMalformed', () => {
    const { rows: r, outcomes, counters } = decode(F.malformedAfterRecords());
    expect(outcomes[0]!.status).toBe('malformed');
    expect(r).toEqual([]);
    expect(counters).toMatchObject({ malformed: 1, recordsInMalformed: 2, flows: 0 });
  });
});
