/**
 * Absurd values from the wire (issue 16): implausible flow times are clamped
 * to the export time and counted, sampling intervals above the bound are
 * refused and counted, and 64-bit counters stay exact to 2^64 − 1 and beyond.
 */
import { describe, expect, it } from 'vitest';
import { CollectorCounters } from '../../../collector/decode/collector-counters.js';
import type { DecodeEnv, ValueLimits } from '../../../collector/decode/decode-env.js';
import { createFlowDecoder, DEFAULT_VALUE_LIMITS, exporterRef } from '../../../collector/decode/decoder.js';
import { exactCount, FlowBatch } from '../../../common/flow-batch.js';
import { decodeV5Datagram, decodeV5Records, readV5Header } from '../../../collector/decode/netflow-v5.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, v9Packet, v9Templates, type Spec } from './wire.js';

const from = exporterRef('192.0.2.7');
const EXPORT_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const RECEIVED = EXPORT_S * 1000 + 2_000;
const U64_MAX = 2n ** 64n - 1n;

/** Octets, packets, start and end as 8-byte fields (with addresses and ports), as the outside tester's exporter sent them. */
const WIDE: Spec[] = [
  [8, 4], // sourceIPv4Address
  [12, 4], // destinationIPv4Address
  [1, 8], // octetDeltaCount
  [2, 8], // packetDeltaCount
  [152, 8], // flowStartMilliseconds
  [153, 8], // flowEndMilliseconds
  [4, 1], // protocolIdentifier
  [7, 2], // sourceTransportPort
  [11, 2], // destinationTransportPort
];
const WIDE_LENGTH = 4 + 4 + 8 + 8 + 8 + 8 + 1 + 2 + 2;

function wideRecord(f: {
  bytes: bigint | number;
  packets: bigint | number;
  start: bigint | number;
  end: bigint | number;
}): Buffer {
  return Buffer.concat([
    ipv4('10.0.0.1'),
    ipv4('10.0.0.2'),
    uint(f.bytes, 8),
    uint(f.packets, 8),
    uint(f.start, 8),
    uint(f.end, 8),
    uint(6, 1),
    uint(1234, 2),
    uint(443, 2),
  ]);
}

/** Options template 300: scope observationDomainId, then samplingInterval (4 bytes). */
const OPTIONS_TEMPLATE = set(
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
const options = (interval: number): Buffer => set(300, Buffer.concat([uint(0, 4), uint(interval, 4)]), false);

function decodeIpfix(datagrams: Buffer[], limits?: Partial<ValueLimits>, receivedMs = RECEIVED) {
  const d = createFlowDecoder(limits ? { limits: { ...DEFAULT_VALUE_LIMITS, ...limits } } : {});
  const b = new FlowBatch();
  const outcomes = datagrams.map((m) => d.decode(m, from, receivedMs, b));
  return { b, outcomes, c: d.counters.exporter(from.address) };
}

describe('implausible flow times', () => {
  it('clamps the 0xFF… record to the export time, counts both times, and keeps its counters exact', () => {
    const { b, outcomes, c } = decodeIpfix([
      ipfixMessage(
        { exportSecs: EXPORT_S },
        set(2, ipfixTemplateRecord(256, WIDE), false),
        set(256, Buffer.alloc(WIDE_LENGTH, 0xff), false),
      ),
    ]);
    expect(outcomes[0]!.flows).toBe(1);
    expect(b.cols.start[0]).toBe(EXPORT_S * 1000);
    expect(b.cols.end[0]).toBe(EXPORT_S * 1000);
    expect(c.timestampsClamped).toBe(2);
    expect(exactCount(b.cols.bytes[0]!, b.cols.bytesRest[0]!)).toBe(U64_MAX);
    expect(exactCount(b.cols.packets[0]!, b.cols.packetsRest[0]!)).toBe(U64_MAX);
    expect(String(exactCount(b.cols.bytes[0]!, b.cols.bytesRest[0]!))).toBe('18446744073709551615');
  });

  it('keeps times at the edges of the window and clamps the first millisecond outside each edge', () => {
    const limits = { minTimeMs: Date.UTC(2000, 0, 1), maxFutureMs: 60_000 };
    const t = (start: number, end: number) => wideRecord({ bytes: 1, packets: 1, start, end });
    const { b, c } = decodeIpfix(
      [
        ipfixMessage(
          { exportSecs: EXPORT_S },
          set(2, ipfixTemplateRecord(256, WIDE), false),
          set(256, Buffer.concat([t(limits.minTimeMs, RECEIVED + 60_000), t(limits.minTimeMs - 1, RECEIVED + 60_001)]), false),
        ),
      ],
      limits,
    );
    expect([b.cols.start[0], b.cols.end[0]]).toEqual([limits.minTimeMs, RECEIVED + 60_000]);
    expect([b.cols.start[1], b.cols.end[1]]).toEqual([EXPORT_S * 1000, EXPORT_S * 1000]);
    expect(c.timestampsClamped).toBe(2);
  });

  it('clamps to the received time when the export time itself is implausible (an unset clock)', () => {
    const { b, c } = decodeIpfix([
      ipfixMessage(
        { exportSecs: 0 },
        set(2, ipfixTemplateRecord(256, WIDE), false),
        set(256, wideRecord({ bytes: 10, packets: 1, start: 5, end: 7 }), false),
      ),
    ]);
    expect([b.cols.start[0], b.cols.end[0]]).toEqual([RECEIVED, RECEIVED]);
    expect(c.timestampsClamped).toBe(2);
  });

  it('leaves honest times alone and counts nothing', () => {
    const start = RECEIVED - 65_000;
    const { b, c } = decodeIpfix([
      ipfixMessage(
        { exportSecs: EXPORT_S },
        set(2, ipfixTemplateRecord(256, WIDE), false),
        set(256, wideRecord({ bytes: 1500, packets: 3, start, end: start + 1000 }), false),
      ),
    ]);
    expect([b.cols.start[0], b.cols.end[0], b.cols.bytes[0], b.cols.bytesRest[0]]).toEqual([start, start + 1000, 1500, 0]);
    expect(c.timestampsClamped).toBe(0);
  });

  it('clamps v9 uptime-relative times that land in the future', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const fields: Spec[] = [
      [8, 4],
      [12, 4],
      [1, 4],
      [2, 4],
      [22, 4],
      [21, 4],
    ];
    const hdr = { uptimeMs: 1_000, unixSecs: EXPORT_S };
    // first/last 10 days after the header's uptime: a signed difference of −864 000 000 ms.
    const rec = Buffer.concat([
      ipv4('10.0.0.1'),
      ipv4('10.0.0.2'),
      uint(100, 4),
      uint(1, 4),
      uint(864_001_000, 4),
      uint(1_000, 4),
    ]);
    d.decode(v9Packet({ ...hdr, count: 2 }, v9Templates({ id: 260, fields }), set(260, rec)), from, RECEIVED, b);
    expect([b.cols.start[0], b.cols.end[0]]).toEqual([EXPORT_S * 1000, EXPORT_S * 1000]);
    expect(d.counters.exporter(from.address).timestampsClamped).toBe(1);
  });
});

describe('sampling intervals above the bound', () => {
  const data = (bytes: number) =>
    set(256, wideRecord({ bytes, packets: 1, start: RECEIVED - 5000, end: RECEIVED - 4000 }), false);
  const template = set(2, ipfixTemplateRecord(256, WIDE), false);

  it('refuses 2^32 − 1 from options data: counted, not applied, the flows stay unsampled', () => {
    const { b, c } = decodeIpfix([
      ipfixMessage({ exportSecs: EXPORT_S }, OPTIONS_TEMPLATE, template, options(0xffffffff), data(1000)),
    ]);
    expect(c.samplingRefused).toBe(1);
    expect([b.cols.bytes[0], b.cols.samplingInterval[0]]).toEqual([1000, 1]);
  });

  it('keeps the interval the domain had before a refused announcement', () => {
    const { b, c } = decodeIpfix([
      ipfixMessage({ exportSecs: EXPORT_S }, OPTIONS_TEMPLATE, template, options(100), data(10)),
      ipfixMessage({ exportSecs: EXPORT_S, sequence: 2 }, options(0xffffffff), data(10)),
    ]);
    expect([...b.cols.bytes.subarray(0, 2)]).toEqual([1000, 1000]);
    expect([...b.cols.samplingInterval.subarray(0, 2)]).toEqual([100, 100]);
    expect(c.samplingRefused).toBe(1);
  });

  it('takes the bound itself (2^24 by default) and refuses one more', () => {
    const { b, c } = decodeIpfix([
      ipfixMessage({ exportSecs: EXPORT_S }, OPTIONS_TEMPLATE, template, options(2 ** 24), data(3)),
      ipfixMessage({ exportSecs: EXPORT_S, sequence: 2 }, options(2 ** 24 + 1), data(3)),
    ]);
    expect([...b.cols.samplingInterval.subarray(0, 2)]).toEqual([2 ** 24, 2 ** 24]);
    expect(b.cols.bytes[0]).toBe(3 * 2 ** 24);
    expect(c.samplingRefused).toBe(1);
  });

  it('follows a configured bound', () => {
    const { b, c } = decodeIpfix([ipfixMessage({ exportSecs: EXPORT_S }, OPTIONS_TEMPLATE, template, options(1000), data(3))], {
      maxSamplingInterval: 512,
    });
    expect([b.cols.bytes[0], b.cols.samplingInterval[0]]).toEqual([3, 1]);
    expect(c.samplingRefused).toBe(1);
  });

  it("refuses a record's own interval field and falls back to the domain's interval, record by record", () => {
    const withInterval: Spec[] = [...WIDE, [34, 4]];
    const rec = (interval: number) =>
      Buffer.concat([wideRecord({ bytes: 7, packets: 1, start: RECEIVED - 5000, end: RECEIVED - 4000 }), uint(interval, 4)]);
    const { b, c } = decodeIpfix([
      ipfixMessage(
        { exportSecs: EXPORT_S },
        OPTIONS_TEMPLATE,
        set(2, ipfixTemplateRecord(257, withInterval), false),
        options(10),
        set(257, Buffer.concat([rec(0xffffffff), rec(4)]), false),
      ),
    ]);
    expect([...b.cols.samplingInterval.subarray(0, 2)]).toEqual([10, 4]);
    expect([...b.cols.bytes.subarray(0, 2)]).toEqual([70, 28]);
    expect(c.samplingRefused).toBe(1);
  });
});

describe('64-bit counters scaled by sampling', () => {
  it('are exact beyond 2^53 and beyond 2^64 − 1 (value + rest), and plain numbers below', () => {
    const big = 2n ** 60n + 1n;
    const template = set(2, ipfixTemplateRecord(256, WIDE), false);
    const { b } = decodeIpfix([
      ipfixMessage(
        { exportSecs: EXPORT_S },
        OPTIONS_TEMPLATE,
        template,
        options(1000),
        set(
          256,
          Buffer.concat([
            wideRecord({ bytes: big, packets: U64_MAX, start: RECEIVED - 1, end: RECEIVED }),
            wideRecord({ bytes: 9_007_199_254, packets: 2, start: RECEIVED - 1, end: RECEIVED }),
          ]),
          false,
        ),
      ),
    ]);
    expect(exactCount(b.cols.bytes[0]!, b.cols.bytesRest[0]!)).toBe(big * 1000n);
    expect(exactCount(b.cols.packets[0]!, b.cols.packetsRest[0]!)).toBe(U64_MAX * 1000n);
    expect(exactCount(b.cols.bytes[1]!, b.cols.bytesRest[1]!)).toBe(9_007_199_254_000);
    expect([b.cols.bytesRest[1], b.cols.packetsRest[1]]).toEqual([0, 0]);
  });
});

describe('NetFlow v5', () => {
  function v5(
    h: { unixSecs: number; sampling: number; uptime: number },
    recs: { first: number; last: number; octets: number }[],
  ): Buffer {
    const head = Buffer.concat([
      uint(5, 2),
      uint(recs.length, 2),
      uint(h.uptime, 4),
      uint(h.unixSecs, 4),
      uint(0, 4),
      uint(0, 4),
      uint(0, 1),
      uint(0, 1),
      uint(h.sampling, 2),
    ]);
    const body = recs.map((r) =>
      Buffer.concat([
        ipv4('10.0.0.1'),
        ipv4('10.0.0.2'),
        ipv4('0.0.0.0'),
        uint(0, 2),
        uint(0, 2),
        uint(1, 4),
        uint(r.octets, 4),
        uint(r.first, 4),
        uint(r.last, 4),
        Buffer.alloc(16),
      ]),
    );
    return Buffer.concat([head, ...body]);
  }
  function env(limits: ValueLimits, overrideInterval = 0): DecodeEnv {
    const counters = new CollectorCounters();
    // Only what decodeV5Datagram reads; the rest of DecodeEnv belongs to v9/IPFIX.
    return {
      counters,
      exporterCounters: counters.exporter(from.address),
      exporter: from,
      receivedMs: RECEIVED,
      overrideInterval,
      limits,
    } as unknown as DecodeEnv;
  }

  it('clamps implausible times, refuses an interval above a configured bound and takes the flows as unsampled', () => {
    // Sampling word: mode 01, interval 16383; the bound set to 1000.
    const buf = v5({ unixSecs: EXPORT_S, sampling: 0x4000 | 16383, uptime: 1_000_000 }, [
      { first: 990_000, last: 995_000, octets: 40 },
      { first: 1_000_000 + 172_800_000, last: 995_000, octets: 40 }, // starts two days after the header's time
    ]);
    const e = env({ ...DEFAULT_VALUE_LIMITS, maxSamplingInterval: 1000 });
    const b = new FlowBatch();
    expect(decodeV5Datagram(buf, readV5Header(buf)!, e, b)).toBe(2);
    expect([b.cols.start[0], b.cols.end[0]]).toEqual([EXPORT_S * 1000 - 10_000, EXPORT_S * 1000 - 5_000]);
    expect([b.cols.start[1], b.cols.end[1]]).toEqual([EXPORT_S * 1000, EXPORT_S * 1000 - 5_000]);
    expect([...b.cols.samplingInterval.subarray(0, 2)]).toEqual([1, 1]);
    expect(b.cols.bytes[0]).toBe(40);
    expect(e.exporterCounters.samplingRefused).toBe(1);
    expect(e.exporterCounters.timestampsClamped).toBe(1);
  });

  it('clamps every time of a header whose clock is unset to the received time', () => {
    const buf = v5({ unixSecs: 0, sampling: 0, uptime: 1000 }, [{ first: 500, last: 900, octets: 1 }]);
    const e = env(DEFAULT_VALUE_LIMITS);
    const b = new FlowBatch();
    decodeV5Datagram(buf, readV5Header(buf)!, e, b);
    expect([b.cols.start[0], b.cols.end[0]]).toEqual([RECEIVED, RECEIVED]);
    expect(e.exporterCounters.timestampsClamped).toBe(2);
  });

  it('keeps u32 counters exact under a configured override above 2^21', () => {
    const buf = v5({ unixSecs: EXPORT_S, sampling: 0, uptime: 1000 }, [{ first: 500, last: 900, octets: 0xffffffff }]);
    const b = new FlowBatch();
    decodeV5Records(buf, readV5Header(buf)!, from.bytes16, RECEIVED, 2 ** 30, b);
    expect(exactCount(b.cols.bytes[0]!, b.cols.bytesRest[0]!)).toBe(0xffffffffn * 2n ** 30n);
    expect(exactCount(b.cols.packets[0]!, b.cols.packetsRest[0]!)).toBe(2 ** 30);
  });
});
