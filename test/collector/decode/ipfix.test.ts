import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { rows } from './rows.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, varField, type Spec } from './wire.js';

const from = exporterRef('2001:db8::9');
const RECEIVED = 1_700_000_100_000;
const EXPORT_S = 1_700_000_000;

const BASIC: Spec[] = [
  [8, 4],
  [12, 4],
  [1, 8],
  [2, 8],
];

function basicRecord(src: string, bytes: number): Buffer {
  return Buffer.concat([ipv4(src), ipv4('192.0.2.99'), uint(bytes, 8), uint(1, 8)]);
}

function msg(...sets: Buffer[]): Buffer {
  return ipfixMessage({ exportSecs: EXPORT_S }, ...sets);
}

/** NTP 64-bit timestamp of a Unix time in ms (RFC 7011 dateTimeMicro/Nanoseconds). */
function ntp(unixMs: number): Buffer {
  const secs = Math.floor(unixMs / 1000);
  const frac = Math.round(((unixMs - secs * 1000) / 1000) * 2 ** 32);
  return Buffer.concat([uint(secs + 2_208_988_800, 4), uint(frac, 4)]);
}

describe('IPFIX', () => {
  it('withdraws one template, then all templates; options templates survive an all-data withdrawal', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const c = d.counters.exporter(from.address);
    d.decode(
      msg(
        set(2, Buffer.concat([ipfixTemplateRecord(256, BASIC), ipfixTemplateRecord(257, BASIC)]), false),
        set(
          3,
          ipfixTemplateRecord(
            258,
            [
              [149, 4],
              [34, 4],
            ],
            1,
          ),
          false,
        ),
      ),
      from,
      RECEIVED,
      b,
    );
    expect(d.decode(msg(set(256, basicRecord('10.1.0.1', 5), false)), from, RECEIVED, b).flows).toBe(1);

    // Withdraw 256 only (field count 0).
    d.decode(msg(set(2, Buffer.concat([uint(256, 2), uint(0, 2)]), false)), from, RECEIVED, b);
    expect(c.templatesWithdrawn).toBe(1);
    expect(d.decode(msg(set(256, basicRecord('10.1.0.2', 5), false)), from, RECEIVED, b).flows).toBe(0);
    expect(c.dataWithoutTemplate).toBe(1);
    expect(d.decode(msg(set(257, basicRecord('10.1.0.3', 5), false)), from, RECEIVED, b).flows).toBe(1);

    // Template id 2 in a template set: every data template goes, the options template stays.
    d.decode(msg(set(2, Buffer.concat([uint(2, 2), uint(0, 2)]), false)), from, RECEIVED, b);
    expect(c.templatesWithdrawn).toBe(2);
    expect(d.decode(msg(set(257, basicRecord('10.1.0.4', 5), false)), from, RECEIVED, b).flows).toBe(0);
    const domain = d.templates.findDomain(from.address, 10, 0)!;
    expect([...domain.templates.keys()]).toEqual([258]);

    // And id 3 in an options template set withdraws the options templates.
    d.decode(msg(set(3, Buffer.concat([uint(3, 2), uint(0, 2)]), false)), from, RECEIVED, b);
    expect(domain.templates.size).toBe(0);
    expect(rows(b).map((r) => r.src)).toEqual(['10.1.0.1', '10.1.0.3']);
  });

  it('reads variable-length fields (short and 3-byte length forms) and skips enterprise fields by length', () => {
    const fields: Spec[] = [
      [8, 4],
      [100, 4, 29305], // enterprise element with the same number as nothing we know
      [12, 4],
      [82, 65535], // interfaceName, variable
      [7, 4, 9], // enterprise 9 element 7: not sourceTransportPort
      [7, 2],
      [96, 65535], // applicationName, variable
      [1, 8],
      [2, 4],
      [4, 1],
    ];
    const rec = (src: string, a: Buffer, c: Buffer, bytes: number): Buffer =>
      Buffer.concat([
        ipv4(src),
        uint(0xdeadbeef, 4),
        ipv4('198.51.100.7'),
        varField(a),
        uint(0xffff_ffff, 4),
        uint(4242, 2),
        varField(c),
        uint(bytes, 8),
        uint(3, 4),
        uint(17, 1),
      ]);
    const records = Buffer.concat([
      rec('10.2.0.1', Buffer.from('eth0'), Buffer.alloc(300, 0x61), 1234),
      rec('10.2.0.2', Buffer.alloc(0), Buffer.from('dns'), 5678),
    ]);
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const o = d.decode(msg(set(2, ipfixTemplateRecord(400, fields), false), set(400, records, false)), from, RECEIVED, b);
    expect(o).toEqual({ status: 'ok', version: 10, flows: 2 });
    const r = rows(b);
    expect(r[0]).toMatchObject({ src: '10.2.0.1', dst: '198.51.100.7', srcPort: 4242, bytes: 1234, packets: 3, proto: 17 });
    expect(r[1]).toMatchObject({ src: '10.2.0.2', srcPort: 4242, bytes: 5678 });
    expect(r[0]!.exporter).toBe('2001:db8::9');
  });

  it('drops a message whose variable-length field overruns its set', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const fields: Spec[] = [
      [8, 4],
      [82, 65535],
      [1, 4],
    ];
    const good = Buffer.concat([ipv4('10.3.0.1'), varField(Buffer.from('ab')), uint(1, 4)]);
    const bad = Buffer.concat([ipv4('10.3.0.2'), uint(200, 1), Buffer.from('short'), uint(1, 4)]);
    const o = d.decode(
      msg(set(2, ipfixTemplateRecord(401, fields), false), set(401, Buffer.concat([good, bad]), false)),
      from,
      RECEIVED,
      b,
    );
    expect(o.status).toBe('malformed');
    expect(b.length).toBe(0);
  });

  it('drops messages whose length field or set lengths do not fit', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const m = msg(set(2, ipfixTemplateRecord(402, BASIC), false));
    const longer = Buffer.from(m);
    longer.writeUInt16BE(m.length + 10, 2);
    const badSet = Buffer.from(m);
    badSet.writeUInt16BE(500, 18);
    expect(d.decode(longer, from, RECEIVED, b).status).toBe('malformed');
    expect(d.decode(badSet, from, RECEIVED, b).status).toBe('malformed');
    expect(d.decode(m.subarray(0, 10), from, RECEIVED, b).status).toBe('malformed');
    expect(d.counters.exporter(from.address).malformed).toBe(3);
    expect(d.counters.exporter(from.address).templatesAdded).toBe(0);
  });

  it('turns seconds, milliseconds, NTP micro/nanoseconds, delta microseconds and durations into ms', () => {
    // Before the export time (EXPORT_S, 2023-11-14T22:13:20Z): a later time would be clamped as implausible.
    const t0 = Date.parse('2023-11-14T22:00:00.250Z');
    const layouts: [Spec[], Buffer][] = [
      [
        [
          [150, 4],
          [151, 4],
        ],
        Buffer.concat([uint(Math.floor(t0 / 1000), 4), uint(Math.floor(t0 / 1000) + 2, 4)]),
      ],
      [
        [
          [152, 8],
          [153, 8],
        ],
        Buffer.concat([uint(t0, 8), uint(t0 + 2000, 8)]),
      ],
      [
        [
          [154, 8],
          [155, 8],
        ],
        Buffer.concat([ntp(t0), ntp(t0 + 2000)]),
      ],
      [
        [
          [156, 8],
          [157, 8],
        ],
        Buffer.concat([ntp(t0), ntp(t0 + 2000)]),
      ],
      [
        [
          [152, 8],
          [161, 4],
        ],
        Buffer.concat([uint(t0, 8), uint(2000, 4)]),
      ],
      // Deltas before the export time (EXPORT_S), in microseconds.
      [
        [
          [158, 4],
          [159, 4],
        ],
        Buffer.concat([uint(5_000_000, 4), uint(3_000_000, 4)]),
      ],
    ];
    const d = createFlowDecoder();
    const b = new FlowBatch();
    layouts.forEach(([timeFields, timeBytes], i) => {
      const id = 500 + i;
      const m = msg(
        set(2, ipfixTemplateRecord(id, [[8, 4], ...timeFields]), false),
        set(id, Buffer.concat([ipv4(`10.4.0.${i}`), timeBytes]), false),
      );
      expect(d.decode(m, from, RECEIVED, b).flows).toBe(1);
    });
    const r = rows(b);
    expect(r[0]).toMatchObject({ start: Math.floor(t0 / 1000) * 1000, end: Math.floor(t0 / 1000) * 1000 + 2000 });
    for (const i of [1, 2, 3, 4]) {
      expect(r[i]!.start).toBeCloseTo(t0, 0);
      expect(r[i]!.end).toBeCloseTo(t0 + 2000, 0);
    }
    expect(r[5]).toMatchObject({ start: EXPORT_S * 1000 - 5000, end: EXPORT_S * 1000 - 3000 });
  });

  it('uses systemInitTimeMilliseconds from options data for flowStart/EndSysUpTime (IOS-XR)', () => {
    const init = Date.parse('2023-11-14T00:00:00.000Z');
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(
      msg(
        set(
          3,
          ipfixTemplateRecord(
            600,
            [
              [149, 4],
              [160, 8],
            ],
            1,
          ),
          false,
        ),
        set(
          2,
          ipfixTemplateRecord(601, [
            [8, 4],
            [22, 4],
            [21, 4],
          ]),
          false,
        ),
        set(600, Buffer.concat([uint(0, 4), uint(init, 8)]), false),
        set(601, Buffer.concat([ipv4('10.5.0.1'), uint(60_000, 4), uint(61_500, 4)]), false),
      ),
      from,
      RECEIVED,
      b,
    );
    expect(rows(b)[0]).toMatchObject({ start: init + 60_000, end: init + 61_500 });
  });

  it('counts sequence gaps in data records per observation domain', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(
      ipfixMessage({ exportSecs: EXPORT_S, sequence: 0 }, set(2, ipfixTemplateRecord(256, BASIC), false)),
      from,
      RECEIVED,
      b,
    );
    const data = (seq: number, n: number): Buffer =>
      ipfixMessage(
        { exportSecs: EXPORT_S, sequence: seq },
        set(256, Buffer.concat(Array.from({ length: n }, (_, k) => basicRecord(`10.6.0.${k}`, 1))), false),
      );
    d.decode(data(0, 3), from, RECEIVED, b);
    d.decode(data(3, 2), from, RECEIVED, b); // in order
    d.decode(data(9, 1), from, RECEIVED, b); // 4 records lost
    const c = d.counters.exporter(from.address);
    expect(c.sequenceGaps).toBe(1);
    expect(c.sequenceMissing).toBe(4);
  });
  it('a malformed message with data records resyncs the sequence instead of counting a false gap at the next', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(
      ipfixMessage({ exportSecs: EXPORT_S, sequence: 0 }, set(2, ipfixTemplateRecord(256, BASIC), false)),
      from,
      RECEIVED,
      b,
    );
    const data = set(256, Buffer.concat([0, 1, 2].map((k) => basicRecord(`10.7.0.${k}`, 1))), false);
    // A template set naming template id 5 (below 256): malformed, after three data records.
    const bad = set(2, Buffer.concat([uint(5, 2), uint(1, 2), uint(8, 2), uint(4, 2)]), false);
    expect(d.decode(ipfixMessage({ exportSecs: EXPORT_S, sequence: 0 }, data, bad), from, RECEIVED, b).status).toBe('malformed');
    expect(d.decode(ipfixMessage({ exportSecs: EXPORT_S, sequence: 3 }, data), from, RECEIVED, b).status).toBe('ok');
    const c = d.counters.exporter(from.address);
    expect(c.sequenceGaps).toBe(0);
    expect(b.length).toBe(3);
  });

  it('keeps ICMP type*256+code in the destination port (icmpTypeCodeIPv4/IPv6), other protocols keep their port', () => {
    const fields: Spec[] = [
      [8, 4],
      [12, 4],
      [27, 16],
      [28, 16],
      [4, 1],
      [11, 2],
      [32, 2],
      [139, 2],
    ];
    const v6 = Buffer.alloc(16);
    const rec = (src4: string, v6src: Buffer, proto: number, dport: number, tc4: number, tc6: number): Buffer =>
      Buffer.concat([
        ipv4(src4),
        ipv4(src4 === '0.0.0.0' ? '0.0.0.0' : '10.11.0.9'),
        v6src,
        v6src,
        uint(proto, 1),
        uint(dport, 2),
        uint(tc4, 2),
        uint(tc6, 2),
      ]);
    const v6addr = Buffer.from('20010db8000000000000000000000001', 'hex');
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(
      msg(
        set(2, ipfixTemplateRecord(800, fields), false),
        set(
          800,
          Buffer.concat([
            rec('10.11.0.1', v6, 1, 0, (8 << 8) | 0, 0), // echo request
            rec('0.0.0.0', v6addr, 58, 0, 0, (128 << 8) | 0), // ICMPv6 echo request
            rec('10.11.0.2', v6, 6, 443, 0, 0),
          ]),
          false,
        ),
      ),
      from,
      RECEIVED,
      b,
    );
    const r = rows(b);
    expect(r.map((f) => [f.ipVersion, f.proto, f.dstPort])).toEqual([
      [4, 1, 2048],
      [6, 58, 128 * 256],
      [4, 6, 443],
    ]);
    expect(r[1]!.src).toBe('2001:db8::1');
  });

  it('counts unknown versions and too-short datagrams without decoding them', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    expect(d.decode(Buffer.from([0, 7, 0, 0]), from, RECEIVED, b).status).toBe('unknown-version');
    expect(d.decode(Buffer.from([0]), from, RECEIVED, b).status).toBe('malformed');
    const c = d.counters.exporter(from.address);
    expect([c.packets, c.unknownVersion, c.malformed]).toEqual([2, 1, 1]);
  });

  it("skips sets with a reserved id (v9's 0 and 1, 4–255) by their length, and counts them", () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const m = msg(
      set(2, ipfixTemplateRecord(256, BASIC)),
      set(0, Buffer.alloc(8)),
      set(4, Buffer.alloc(4)),
      set(256, basicRecord('10.9.0.1', 10)),
    );
    expect(d.decode(m, from, RECEIVED, b)).toEqual({ status: 'ok', version: 10, flows: 1 });
    expect(rows(b).map((r) => r.src)).toEqual(['10.9.0.1']);
    expect(d.counters.exporter(from.address).setsReserved).toBe(2);
  });
});
