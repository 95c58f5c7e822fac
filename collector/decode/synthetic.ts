/**
 * Synthetic export datagrams with a typical IPv4 router layout (addresses,
 * next hop, ports, protocol, flags, ToS, interfaces, AS numbers, counters,
 * times), full-size as a loaded exporter sends them: NetFlow v5, v9 and
 * IPFIX. Pure builders (no I/O); the decode benchmark measures them and the
 * listeners decode them at start, directly and over loopback, so the
 * receive and decode path is optimised before the first real datagram
 * (warm-up.ts, listener-warm-up.ts).
 */

/** Datagrams of one version: `setup` carries the templates (and an options template with its sampling record), `datagrams` the data. */
export interface SyntheticWorkload {
  name: string;
  version: 5 | 9 | 10;
  /** Sent before the data (templates, options template, options data). */
  setup: Buffer[];
  /** Data datagrams. */
  datagrams: Buffer[];
}

function u(value: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(value, 0, bytes);
  return b;
}

function u64(value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(value));
  return b;
}

// A typical IPv4 router layout: addresses, next hop, ports, proto, flags,
// ToS, interfaces, AS numbers, counters, times, ip version.
const V9_FIELDS: [number, number][] = [
  [8, 4],
  [12, 4],
  [15, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [6, 1],
  [5, 1],
  [10, 4],
  [14, 4],
  [16, 4],
  [17, 4],
  [1, 4],
  [2, 4],
  [22, 4],
  [21, 4],
  [60, 1],
];
const IPFIX_FIELDS: [number, number][] = [
  [8, 4],
  [12, 4],
  [15, 4],
  [7, 2],
  [11, 2],
  [4, 1],
  [6, 1],
  [5, 1],
  [10, 4],
  [14, 4],
  [16, 4],
  [17, 4],
  [1, 8],
  [2, 8],
  [152, 8],
  [153, 8],
];

function record(fields: [number, number][], k: number, nowMs: number): Buffer {
  const parts: Buffer[] = [];
  for (const [id, len] of fields) {
    if (id === 8 || id === 12 || id === 15) parts.push(u((0x0a000000 + k * 7 + id) >>> 0, 4));
    else if (id === 152 || id === 153) parts.push(u64(nowMs - 5000 + (id - 152) * 3000));
    else if (id === 22 || id === 21) parts.push(u(900_000 + (id === 21 ? 5000 : 0), 4));
    else if (id === 7 || id === 11) parts.push(u((1024 + k * 13 + id) & 0xffff, 2));
    else if (id === 4) parts.push(u(k % 3 === 0 ? 17 : 6, 1));
    else if (id === 60) parts.push(u(4, 1));
    else parts.push(len <= 6 ? u((k * 31 + id) % 2 ** (8 * len - 1), len) : u64(k * 1500 + 40));
  }
  return Buffer.concat(parts);
}

function set(id: number, body: Buffer): Buffer {
  const pad = (4 - ((body.length + 4) % 4)) % 4;
  return Buffer.concat([u(id, 2), u(body.length + 4 + pad, 2), body, Buffer.alloc(pad)]);
}

function templateBody(id: number, fields: [number, number][]): Buffer {
  return Buffer.concat([u(id, 2), u(fields.length, 2), ...fields.map(([f, l]) => Buffer.concat([u(f, 2), u(l, 2)]))]);
}

/** Records that fit a 1400-byte payload (a 1500-byte MTU less headers), as exporters fill them. */
function recordsPerDatagram(fields: [number, number][], header: number): number {
  const len = fields.reduce((n, [, l]) => n + l, 0);
  return Math.floor((1400 - header - 4) / len);
}

function v9Workload(nowMs: number): SyntheticWorkload {
  const unix = Math.floor(nowMs / 1000);
  const hdr = (seq: number, count: number): Buffer =>
    Buffer.concat([u(9, 2), u(count, 2), u(1_000_000, 4), u(unix, 4), u(seq, 4), u(1, 4)]);
  const n = recordsPerDatagram(V9_FIELDS, 20);
  const datagrams: Buffer[] = [];
  for (let d = 0; d < 16; d++) {
    const recs = Array.from({ length: n }, (_, k) => record(V9_FIELDS, d * n + k, nowMs));
    datagrams.push(Buffer.concat([hdr(d + 1, n), set(256, Buffer.concat(recs))]));
  }
  return {
    name: `v9 synthetic, ${n} flows/datagram`,
    version: 9,
    setup: [
      Buffer.concat([hdr(0, 1), set(0, templateBody(256, V9_FIELDS))]),
      // Options template (scope: system) and its data: sampling interval 1, as exporters announce it.
      Buffer.concat([
        hdr(0, 2),
        set(1, Buffer.concat([u(257, 2), u(4, 2), u(8, 2), u(1, 2), u(4, 2), u(34, 2), u(4, 2), u(35, 2), u(4, 2)])),
        set(257, Buffer.concat([u(1, 4), u(1, 4), u(2, 4)])),
      ]),
    ],
    datagrams,
  };
}

function ipfixWorkload(nowMs: number): SyntheticWorkload {
  const n = recordsPerDatagram(IPFIX_FIELDS, 16);
  const msg = (seq: number, body: Buffer): Buffer =>
    Buffer.concat([u(10, 2), u(16 + body.length, 2), u(Math.floor(nowMs / 1000), 4), u(seq, 4), u(1, 4), body]);
  const datagrams: Buffer[] = [];
  for (let d = 0; d < 16; d++) {
    const recs = Array.from({ length: n }, (_, k) => record(IPFIX_FIELDS, d * n + k, nowMs));
    const body = Buffer.concat(recs);
    datagrams.push(msg(d * n, Buffer.concat([u(256, 2), u(body.length + 4, 2), body])));
  }
  const tpl = templateBody(256, IPFIX_FIELDS);
  return {
    name: `IPFIX synthetic, ${n} flows/datagram`,
    version: 10,
    setup: [
      msg(0, Buffer.concat([u(2, 2), u(tpl.length + 4, 2), tpl])),
      // Options template (scope: observation domain) and its data: sampling interval 1.
      msg(
        0,
        Buffer.concat([
          set(3, Buffer.concat([u(258, 2), u(3, 2), u(1, 2), u(149, 2), u(4, 2), u(34, 2), u(4, 2), u(35, 2), u(1, 2)])),
          set(258, Buffer.concat([u(1, 4), u(1, 4), u(2, 1)])),
        ]),
      ),
    ],
    datagrams,
  };
}

function v5Workload(nowMs: number): SyntheticWorkload {
  const unix = Math.floor(nowMs / 1000);
  const datagrams: Buffer[] = [];
  for (let d = 0; d < 16; d++) {
    const recs: Buffer[] = [];
    for (let k = 0; k < 30; k++) {
      const r = Buffer.alloc(48);
      r.writeUInt32BE((0x0a000000 + d * 30 + k) >>> 0, 0);
      r.writeUInt32BE(0xc0a80001, 4);
      r.writeUInt32BE(10 + k, 16);
      r.writeUInt32BE(1500 * (k + 1), 20);
      r.writeUInt32BE(900_000, 24);
      r.writeUInt32BE(905_000, 28);
      r.writeUInt16BE(1024 + k, 32);
      r.writeUInt16BE(443, 34);
      r[38] = 6;
      recs.push(r);
    }
    const hdr = Buffer.concat([u(5, 2), u(30, 2), u(1_000_000, 4), u(unix, 4), u(0, 4), u(d * 30, 4), u(0, 4)]);
    datagrams.push(Buffer.concat([hdr, ...recs]));
  }
  return { name: 'v5, 30 flows/datagram', version: 5, setup: [], datagrams };
}

/** v5, v9 and IPFIX workloads, 16 data datagrams each, times around `nowMs`. */
export function syntheticWorkloads(nowMs: number): SyntheticWorkload[] {
  return [v5Workload(nowMs), v9Workload(nowMs), ipfixWorkload(nowMs)];
}
