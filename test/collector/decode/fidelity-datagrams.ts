/**
 * Export datagrams for the vendor-fidelity cases of issue 17, byte by byte
 * from the RFC layouts and the vendors' documented template fields: tunnel
 * templates that repeat the header elements (outer header first, as the
 * packet carries it), a record's own systemInitTimeMilliseconds, every PSAMP
 * and v9 sampling method, and a wireless controller's address-less records.
 */
import {
  ipfixMessage,
  ipfixTemplateRecord,
  ipv4,
  set,
  uint,
  v9OptionsTemplate,
  v9Packet,
  v9Templates,
  type Spec,
} from './wire.js';

/** Export time of every datagram here (s since epoch). */
export const EXPORT_S = 1_700_000_100;
/** Flow start and end of the records that carry absolute times (ms since epoch). */
export const START_MS = 1_700_000_040_250;
export const END_MS = 1_700_000_070_500;

/** 16 bytes of an IPv6 address written in full or with `::`. */
export function ipv6(text: string): Buffer {
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const words = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.concat(words.map((w) => uint(parseInt(w, 16), 2)));
}

const TIMES: Spec[] = [
  [152, 8],
  [153, 8],
];
const times = (): Buffer => Buffer.concat([uint(START_MS, 8), uint(END_MS, 8)]);
const COUNTERS: Spec[] = [
  [1, 8],
  [2, 8],
];
const counters = (bytes: number, packets: number): Buffer => Buffer.concat([uint(bytes, 8), uint(packets, 8)]);

/**
 * IOS-XR-style SRv6 template: the outer IPv6 header (its next header 4, IPv4), then the inner
 * IPv4 header with its ports. Two records, one per direction of an inner UDP conversation
 * 192.0.2.110:2222 ⇄ 192.0.2.14:1111 through the same tunnel 2001:db8:a::1 → 2001:db8:b::2.
 */
export function srv6Ipv4InIpv6(): Buffer {
  const fields: Spec[] = [
    [27, 16],
    [28, 16],
    [4, 1],
    [5, 1],
    [8, 4],
    [12, 4],
    [4, 1],
    [5, 1],
    [7, 2],
    [11, 2],
    ...COUNTERS,
    ...TIMES,
    [10, 4],
    [14, 4],
  ];
  const rec = (sa: string, da: string, sp: number, dp: number, bytes: number, packets: number): Buffer =>
    Buffer.concat([
      ipv6('2001:db8:a::1'),
      ipv6('2001:db8:b::2'),
      uint(4, 1),
      uint(0xb8, 1),
      ipv4(sa),
      ipv4(da),
      uint(17, 1),
      uint(0x28, 1),
      uint(sp, 2),
      uint(dp, 2),
      counters(bytes, packets),
      times(),
      uint(3, 4),
      uint(7, 4),
    ]);
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 1 },
    set(2, ipfixTemplateRecord(256, fields)),
    set(
      256,
      Buffer.concat([
        rec('192.0.2.110', '192.0.2.14', 2222, 1111, 12_000, 10),
        rec('192.0.2.14', '192.0.2.110', 1111, 2222, 3_000, 5),
      ]),
    ),
  );
}

/**
 * GRE/MPLS-style IPv4-in-IPv4 template, each header with its protocol, ports and flags: outer
 * 198.51.100.1 → 198.51.100.2 protocol 47 with zero ports, then the inner TCP flow. The
 * second record is a plain packet: its inner header is all zero, so the outer one is the flow.
 */
export function greIpv4InIpv4(): Buffer {
  const hdr: Spec[] = [
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [6, 1],
  ];
  const fields: Spec[] = [...hdr, ...hdr, ...COUNTERS, ...TIMES];
  const h = (sa: string, da: string, pr: number, sp: number, dp: number, fl: number): Buffer =>
    Buffer.concat([ipv4(sa), ipv4(da), uint(pr, 1), uint(sp, 2), uint(dp, 2), uint(fl, 1)]);
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 2 },
    set(2, ipfixTemplateRecord(257, fields)),
    set(
      257,
      Buffer.concat([
        h('198.51.100.1', '198.51.100.2', 47, 0, 0, 0),
        h('10.1.1.1', '10.2.2.2', 6, 40000, 443, 0x1b),
        counters(90_000, 60),
        times(),
        h('198.51.100.1', '198.51.100.9', 6, 51000, 22, 0x18),
        h('0.0.0.0', '0.0.0.0', 0, 0, 0, 0),
        counters(4_000, 8),
        times(),
      ]),
    ),
  );
}

/** IPv6-in-IPv6 (outer next header 41), v9: outer 2001:db8:1::1 → 2001:db8:2::1, inner TCP 2001:db8:aa::5:33000 → 2001:db8:bb::6:80. */
export function ipv6InIpv6V9(): Buffer {
  const hdr: Spec[] = [
    [27, 16],
    [28, 16],
    [4, 1],
    [7, 2],
    [11, 2],
  ];
  const fields: Spec[] = [...hdr, ...hdr, [1, 4], [2, 4], [22, 4], [21, 4]];
  const h = (sa: string, da: string, pr: number, sp: number, dp: number): Buffer =>
    Buffer.concat([ipv6(sa), ipv6(da), uint(pr, 1), uint(sp, 2), uint(dp, 2)]);
  const rec = Buffer.concat([
    h('2001:db8:1::1', '2001:db8:2::1', 41, 0, 0),
    h('2001:db8:aa::5', '2001:db8:bb::6', 6, 33000, 80),
    uint(64_000, 4),
    uint(50, 4),
    uint(30_000, 4),
    uint(60_000, 4),
  ]);
  return v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 2, sourceId: 3 },
    v9Templates({ id: 260, fields }),
    set(260, rec),
  );
}

/**
 * systemInitTimeMilliseconds (160) inside each data record beside flowStart/EndSysUpTime
 * (22/21), IPFIX and v9; the two records name different boot times.
 */
export function initInRecord(version: 9 | 10): Buffer {
  const fields: Spec[] = [
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [1, 4],
    [2, 4],
    [22, 4],
    [21, 4],
    [160, 8],
  ];
  const rec = (sp: number, initMs: number, up0: number, up1: number): Buffer =>
    Buffer.concat([
      ipv4('203.0.113.5'),
      ipv4('203.0.113.6'),
      uint(17, 1),
      uint(sp, 2),
      uint(53, 2),
      uint(500, 4),
      uint(5, 4),
      uint(up0, 4),
      uint(up1, 4),
      uint(initMs, 8),
    ]);
  // start = init + uptime: START_MS and END_MS for the first, 1 s later each for the second.
  const body = Buffer.concat([
    rec(5001, START_MS - 1_000_000, 1_000_000, 1_000_000 + END_MS - START_MS),
    rec(5002, START_MS - 2_000_000, 2_001_000, 2_001_000 + END_MS - START_MS),
  ]);
  if (version === 10)
    return ipfixMessage({ exportSecs: EXPORT_S, domain: 4 }, set(2, ipfixTemplateRecord(258, fields)), set(258, body));
  // The v9 header's uptime says otherwise (the exporter's clock, not the records'): the records win.
  return v9Packet(
    { uptimeMs: 5_000_000, unixSecs: EXPORT_S, count: 2, sourceId: 4 },
    v9Templates({ id: 258, fields }),
    set(258, body),
  );
}

const FLOW4: Spec[] = [[8, 4], [12, 4], [4, 1], [7, 2], [11, 2], [1, 4], [2, 4], ...TIMES];
const flow4 = (sa: string, sp: number): Buffer =>
  Buffer.concat([ipv4(sa), ipv4('198.18.0.1'), uint(6, 1), uint(sp, 2), uint(443, 2), uint(1_000, 4), uint(2, 4), times()]);

/**
 * IPFIX random n-out-of-N sampling announced in options data keyed by selectorId (302):
 * selectorAlgorithm (304) 3, samplingSize (309) 1, samplingPopulation (310) 256; the data
 * records name no selector (one selector per domain).
 */
export function psampRandomOptions(): Buffer {
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 5 },
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
    set(2, ipfixTemplateRecord(259, FLOW4)),
    set(259, Buffer.concat([flow4('10.5.0.1', 1001), flow4('10.5.0.2', 1002)])),
  );
}

/** One PSAMP selector per id, announced in options data; the data records name theirs by selectorId (302). */
export const PSAMP_SELECTORS = [
  // id, algorithm, fields and values, the interval they imply
  {
    id: 1,
    algorithm: 1,
    spec: [
      [305, 4],
      [306, 4],
    ] as Spec[],
    values: [1, 99],
    interval: 100,
  },
  {
    id: 2,
    algorithm: 2,
    spec: [
      [307, 4],
      [308, 4],
    ] as Spec[],
    values: [1_000, 9_000],
    interval: 10,
  },
  {
    id: 3,
    algorithm: 3,
    spec: [
      [309, 4],
      [310, 4],
    ] as Spec[],
    values: [2, 1_000],
    interval: 500,
  },
  { id: 4, algorithm: 4, spec: [[311, 8]] as Spec[], values: [0.001], interval: 1000 },
] as const;

/** Every PSAMP selector of RFC 5475/5477 in options data, and one data record per selector that names it. */
export function psampSelectorsOptions(): Buffer {
  const sets: Buffer[] = [];
  for (const s of PSAMP_SELECTORS) {
    const tid = 310 + s.id;
    const values = s.spec.map(([, len], i) => (len === 8 && s.algorithm === 4 ? float64(s.values[i]!) : uint(s.values[i]!, len)));
    sets.push(
      set(3, ipfixTemplateRecord(tid, [[302, 4], [304, 2], ...s.spec], 1)),
      set(tid, Buffer.concat([uint(s.id, 4), uint(s.algorithm, 2), ...values])),
    );
  }
  const fields: Spec[] = [[302, 4], ...FLOW4];
  const recs = PSAMP_SELECTORS.map((s) => Buffer.concat([uint(s.id, 4), flow4(`10.6.0.${s.id}`, 2000 + s.id)]));
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 6 },
    ...sets,
    set(2, ipfixTemplateRecord(261, fields)),
    set(261, Buffer.concat(recs)),
  );
}

/**
 * The same selectors' fields inside the data records themselves, beside a selectorId whose
 * options say 1 in 7: the record's own fields win.
 */
export function psampSelectorsInRecord(): Buffer {
  const opts = [
    set(
      3,
      ipfixTemplateRecord(
        320,
        [
          [302, 4],
          [305, 4],
          [306, 4],
        ],
        1,
      ),
    ),
    set(320, Buffer.concat([uint(9, 4), uint(1, 4), uint(6, 4)])),
  ];
  const sets: Buffer[] = [];
  for (const s of PSAMP_SELECTORS) {
    const tid = 330 + s.id;
    const values = s.spec.map(([, len], i) => (len === 8 && s.algorithm === 4 ? float64(s.values[i]!) : uint(s.values[i]!, len)));
    sets.push(
      set(2, ipfixTemplateRecord(tid, [[302, 4], ...s.spec, ...FLOW4])),
      set(tid, Buffer.concat([uint(9, 4), ...values, flow4(`10.7.0.${s.id}`, 3000 + s.id)])),
    );
  }
  // and one record naming selector 9 alone: the options' 1 in 7
  sets.push(
    set(2, ipfixTemplateRecord(339, [[302, 4], ...FLOW4])),
    set(339, Buffer.concat([uint(9, 4), flow4('10.7.0.9', 3009)])),
  );
  return ipfixMessage({ exportSecs: EXPORT_S, domain: 7 }, ...opts, ...sets);
}

function float64(v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
}

/**
 * NetFlow v9 samplers (Cisco): an options template scoped by interface with samplerId (48),
 * samplerMode (49), samplerRandomInterval (50), then data records naming sampler 2 (1 in 50);
 * a second template whose records carry samplingInterval (34) 10 and samplingAlgorithm (35)
 * beside samplerId 2, a third whose records carry samplerMode (49) and samplerRandomInterval
 * (50) 20 beside it: their own interval wins.
 */
export function v9Samplers(): Buffer {
  const opts = v9OptionsTemplate(
    270,
    [[2, 4]],
    [
      [48, 1],
      [49, 1],
      [50, 4],
    ],
  );
  const optData = set(270, Buffer.concat([uint(5, 4), uint(2, 1), uint(2, 1), uint(50, 4)]));
  const v9flow: Spec[] = [
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [1, 4],
    [2, 4],
    [22, 4],
    [21, 4],
  ];
  const flow = (sa: string, sp: number): Buffer =>
    Buffer.concat([
      ipv4(sa),
      ipv4('198.18.0.2'),
      uint(17, 1),
      uint(sp, 2),
      uint(123, 2),
      uint(800, 4),
      uint(4, 4),
      uint(40_000, 4),
      uint(70_000, 4),
    ]);
  return v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 5, sourceId: 8 },
    opts,
    optData,
    v9Templates(
      { id: 271, fields: [[48, 1], ...v9flow] },
      { id: 272, fields: [[34, 4], [35, 1], [48, 1], ...v9flow] },
      { id: 277, fields: [[48, 1], [49, 1], [50, 4], ...v9flow] },
    ),
    set(271, Buffer.concat([uint(2, 1), flow('10.8.0.1', 4001)])),
    set(272, Buffer.concat([uint(10, 4), uint(1, 1), uint(2, 1), flow('10.8.0.2', 4002)])),
    set(277, Buffer.concat([uint(2, 1), uint(2, 1), uint(20, 4), flow('10.8.0.3', 4003)])),
  );
}

/** A wireless client of the controller fixture: station address, MACs, application, direction, counters. */
export const WLC_CLIENTS = [
  { sta: '10.20.30.41', mac: '00:11:22:33:44:01', dir: 0, bytes: 5_000_000, packets: 4_000 },
  { sta: '10.20.30.41', mac: '00:11:22:33:44:01', dir: 1, bytes: 80_000_000, packets: 60_000 },
  { sta: '10.20.30.42', mac: '00:11:22:33:44:02', dir: 1, bytes: 58_000_000, packets: 69_708 },
] as const;

/**
 * Cisco WLC (AireOS before 8.2) v9 export: no source or destination address, only
 * staMacAddress (365), staIPv4Address (366), applicationTag (95), wlanSSID (147),
 * wtpMacAddress (367), flowDirection (61), ipDiffServCodePoint (195),
 * postIpDiffServCodePoint (98) and the counters (1, 2).
 */
export function wlcV9(): Buffer {
  const fields: Spec[] = [
    [365, 6],
    [366, 4],
    [95, 4],
    [147, 32],
    [367, 6],
    [61, 1],
    [195, 1],
    [98, 1],
    [1, 8],
    [2, 8],
  ];
  const mac = (t: string): Buffer => Buffer.from(t.split(':').map((x) => parseInt(x, 16)));
  const recs = WLC_CLIENTS.map((c) =>
    Buffer.concat([
      mac(c.mac),
      ipv4(c.sta),
      uint(0x0d000050, 4),
      Buffer.concat([Buffer.from('campus'), Buffer.alloc(26)]),
      mac('00:aa:bb:cc:dd:01'),
      uint(c.dir, 1),
      uint(46, 1),
      uint(46, 1),
      uint(c.bytes, 8),
      uint(c.packets, 8),
    ]),
  );
  return v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 4, sourceId: 9 },
    v9Templates({ id: 280, fields }),
    set(280, Buffer.concat(recs)),
  );
}

/** A template with neither address nor counter (what is left is not a flow). */
export function notAFlow(): Buffer {
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 10 },
    set(
      2,
      ipfixTemplateRecord(290, [
        [95, 4],
        [10, 4],
      ]),
    ),
    set(290, Buffer.concat([uint(1, 4), uint(2, 4), uint(3, 4), uint(4, 4)])),
  );
}

/**
 * IOS-XR IPFIX: flowStartSysUpTime/flowEndSysUpTime (22/21) in the records, the boot time in
 * options data (systemInitTimeMilliseconds, 160), scoped by the observation domain.
 */
export function ipfixUptimeWithOptionsInit(): Buffer {
  const fields: Spec[] = [
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [1, 4],
    [2, 4],
    [22, 4],
    [21, 4],
  ];
  const initMs = START_MS - 1_000_000;
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 11 },
    set(
      3,
      ipfixTemplateRecord(
        350,
        [
          [149, 4],
          [160, 8],
        ],
        1,
      ),
    ),
    set(350, Buffer.concat([uint(11, 4), uint(initMs, 8)])),
    set(2, ipfixTemplateRecord(351, fields)),
    set(
      351,
      Buffer.concat([
        ipv4('10.11.0.1'),
        ipv4('10.11.0.2'),
        uint(6, 1),
        uint(1234, 2),
        uint(80, 2),
        uint(900, 4),
        uint(9, 4),
        uint(1_000_000, 4),
        uint(1_000_000 + END_MS - START_MS, 4),
      ]),
    ),
  );
}

/** One template with both families' addresses (each once): an IPv4 record (IPv6 fields zero) and an IPv6 one (IPv4 fields zero). */
export function mixedFamilies(): Buffer {
  const fields: Spec[] = [[8, 4], [12, 4], [27, 16], [28, 16], [4, 1], [7, 2], [11, 2], [1, 4], [2, 4], ...TIMES];
  const tail = (sp: number): Buffer => Buffer.concat([uint(17, 1), uint(sp, 2), uint(53, 2), uint(300, 4), uint(3, 4), times()]);
  return ipfixMessage(
    { exportSecs: EXPORT_S, domain: 12 },
    set(2, ipfixTemplateRecord(352, fields)),
    set(
      352,
      Buffer.concat([
        ipv4('10.12.0.1'),
        ipv4('10.12.0.2'),
        Buffer.alloc(32),
        tail(6001),
        Buffer.alloc(8),
        ipv6('2001:db8:12::1'),
        ipv6('2001:db8:12::2'),
        tail(6002),
      ]),
    ),
  );
}

/** v9 with two samplers in options data (1 in 10, 1 in 100) and records naming each. */
export function v9TwoSamplers(): Buffer {
  const opts = v9OptionsTemplate(
    273,
    [[1, 4]],
    [
      [48, 2],
      [49, 1],
      [50, 4],
    ],
  );
  const optData = set(
    273,
    Buffer.concat([uint(0, 4), uint(1, 2), uint(2, 1), uint(10, 4), uint(0, 4), uint(2, 2), uint(2, 1), uint(100, 4)]),
  );
  const fields: Spec[] = [
    [48, 2],
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [1, 4],
    [2, 4],
    [22, 4],
    [21, 4],
  ];
  const flow = (id: number, sp: number): Buffer =>
    Buffer.concat([
      uint(id, 2),
      ipv4('10.13.0.1'),
      ipv4('10.13.0.2'),
      uint(17, 1),
      uint(sp, 2),
      uint(161, 2),
      uint(600, 4),
      uint(3, 4),
      uint(40_000, 4),
      uint(70_000, 4),
    ]);
  return v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 4, sourceId: 13 },
    opts,
    optData,
    v9Templates({ id: 274, fields }),
    set(274, Buffer.concat([flow(1, 7001), flow(2, 7002)])),
  );
}

/** v9 with samplingInterval (34) 64 in each data record and no options data. */
export function v9InRecordInterval(): Buffer {
  const fields: Spec[] = [
    [34, 4],
    [8, 4],
    [12, 4],
    [4, 1],
    [7, 2],
    [11, 2],
    [1, 4],
    [2, 4],
    [22, 4],
    [21, 4],
  ];
  const rec = Buffer.concat([
    uint(64, 4),
    ipv4('10.14.0.1'),
    ipv4('10.14.0.2'),
    uint(6, 1),
    uint(8001, 2),
    uint(25, 2),
    uint(1_500, 4),
    uint(3, 4),
    uint(40_000, 4),
    uint(70_000, 4),
  ]);
  return v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 2, sourceId: 14 },
    v9Templates({ id: 275, fields }),
    set(275, rec),
  );
}

/**
 * ICMP type and code three ways: icmpTypeCodeIPv4 (32) beside a zero destination port
 * (echo request 8/0), a v9 record with the type/code in L4_DST_PORT as Cisco sends it
 * (port unreachable 3/3), and icmpTypeIPv4/icmpCodeIPv4 (176/177: time exceeded 11/0).
 */
export function icmpForms(): Buffer[] {
  const tc = ipfixMessage(
    { exportSecs: EXPORT_S, domain: 15 },
    set(2, ipfixTemplateRecord(353, [[8, 4], [12, 4], [4, 1], [7, 2], [11, 2], [32, 2], [1, 4], [2, 4], ...TIMES])),
    set(
      353,
      Buffer.concat([
        ipv4('10.15.0.1'),
        ipv4('10.15.0.2'),
        uint(1, 1),
        uint(0, 2),
        uint(0, 2),
        uint(0x0800, 2),
        uint(84, 4),
        uint(1, 4),
        times(),
      ]),
    ),
  );
  const split = ipfixMessage(
    { exportSecs: EXPORT_S, domain: 16 },
    set(2, ipfixTemplateRecord(354, [[8, 4], [12, 4], [4, 1], [176, 1], [177, 1], [1, 4], [2, 4], ...TIMES])),
    set(
      354,
      Buffer.concat([
        ipv4('10.16.0.1'),
        ipv4('10.16.0.2'),
        uint(1, 1),
        uint(11, 1),
        uint(0, 1),
        uint(56, 4),
        uint(1, 4),
        times(),
      ]),
    ),
  );
  const v9 = v9Packet(
    { uptimeMs: 100_000, unixSecs: EXPORT_S, count: 2, sourceId: 17 },
    v9Templates({
      id: 276,
      fields: [
        [8, 4],
        [12, 4],
        [4, 1],
        [7, 2],
        [11, 2],
        [1, 4],
        [2, 4],
        [22, 4],
        [21, 4],
      ],
    }),
    set(
      276,
      Buffer.concat([
        ipv4('10.17.0.1'),
        ipv4('10.17.0.2'),
        uint(1, 1),
        uint(0, 2),
        uint(0x0303, 2),
        uint(70, 4),
        uint(1, 4),
        uint(40_000, 4),
        uint(70_000, 4),
      ]),
    ),
  );
  return [tc, split, v9];
}

/** Data before its template: a datagram with only the data, then one with the template (and data again). */
export function dataBeforeTemplate(): Buffer[] {
  const fields: Spec[] = [[8, 4], [12, 4], [4, 1], [7, 2], [11, 2], [1, 4], [2, 4], ...TIMES];
  const rec = (sp: number): Buffer =>
    Buffer.concat([
      ipv4('10.18.0.1'),
      ipv4('10.18.0.2'),
      uint(6, 1),
      uint(sp, 2),
      uint(443, 2),
      uint(2_000, 4),
      uint(4, 4),
      times(),
    ]);
  return [
    ipfixMessage({ exportSecs: EXPORT_S, domain: 18, sequence: 0 }, set(355, rec(9001))),
    ipfixMessage(
      { exportSecs: EXPORT_S, domain: 18, sequence: 1 },
      set(2, ipfixTemplateRecord(355, fields)),
      set(355, rec(9002)),
    ),
  ];
}

/** A message with only a set of reserved id 5 (not IPFIX data: skipped unread). */
export function reservedSet(): Buffer {
  return ipfixMessage({ exportSecs: EXPORT_S, domain: 19 }, set(5, Buffer.alloc(8)));
}

/**
 * A message whose first data set holds two good records and whose second runs a
 * variable-length field past its set: malformed, and the two records already decoded are
 * taken back.
 */
export function malformedAfterRecords(): Buffer {
  const tpl = set(
    2,
    ipfixTemplateRecord(402, [
      [8, 4],
      [12, 4],
      [1, 4],
    ]),
  );
  const good = set(
    402,
    Buffer.concat([ipv4('10.0.0.1'), ipv4('10.0.0.2'), uint(1, 4), ipv4('10.0.0.3'), ipv4('10.0.0.4'), uint(2, 4)]),
  );
  const vtpl = set(
    2,
    ipfixTemplateRecord(403, [
      [8, 4],
      [82, 65535],
    ]),
  );
  const bad = set(403, Buffer.concat([ipv4('10.0.0.5'), uint(200, 1), Buffer.alloc(3)]), false);
  return ipfixMessage({ exportSecs: EXPORT_S, domain: 20 }, tpl, vtpl, good, bad);
}
