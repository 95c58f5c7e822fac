import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CaptureReader, readCapture } from '../../../collector/pcap/pcap.js';
import { writeCapture, type CaptureRecord, type WriterLinkType } from '../../../collector/pcap/pcap-write.js';
import type { UdpDatagram } from '../../../collector/pcap/packet.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';

const FIX = new URL('../../../fixtures/pcap/', import.meta.url);
const requireAll = process.env.NETSVC_REQUIRE_ALL === '1';

interface Sent {
  port: number;
  datagrams: { family: 4 | 6; srcPort: number; dstPort: number; length: number; payloadHex: string; wall: number }[];
}
const sent = JSON.parse(readFileSync(new URL('sent.json', FIX), 'utf8')) as Sent;

function read(name: string): ReturnType<typeof readCapture> {
  return readCapture(readFileSync(new URL(name, FIX)));
}

function hasTool(cmd: string): boolean {
  return spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error === undefined;
}

describe('reading captures made by tcpdump and editcap', () => {
  // Each file holds the same 12 datagrams (IPv4 and IPv6 over loopback) the
  // capture script sent and listed in sent.json.
  const files = ['lo-ethernet.pcap', 'lo-nano.pcap', 'any-sll.pcap', 'any-sll2.pcap', 'any-sll2.pcapng', 'lo-nano.pcapng'];
  for (const name of files) {
    it(`${name}: every sent datagram, with addresses, ports and payload`, () => {
      const { datagrams, counters, format } = read(name);
      expect(format).toBe(name.endsWith('.pcapng') ? 'pcapng' : 'pcap');
      expect(counters).toMatchObject({ records: 12, udpDatagrams: 12, malformed: 0, truncated: 0, fileErrors: 0 });
      expect(datagrams).toHaveLength(sent.datagrams.length);
      datagrams.forEach((d, i) => {
        const s = sent.datagrams[i]!;
        expect(d.ipVersion).toBe(s.family);
        expect(d.srcAddr).toBe(s.family === 4 ? '127.0.0.1' : '::1');
        expect(d.dstAddr).toBe(d.srcAddr);
        expect(d.srcPort).toBe(s.srcPort);
        expect(d.dstPort).toBe(sent.port);
        expect(d.payload.toString('hex')).toBe(s.payloadHex);
        // Record times are the kernel's; the sender noted its wall clock just after sending.
        expect(Math.abs(d.timeMs - s.wall * 1000)).toBeLessThan(1000);
      });
    });
  }

  it('gives the same millisecond record times for µs, ns, pcap and pcapng versions of one capture', () => {
    const us = read('lo-ethernet.pcap').datagrams.map((d) => d.timeMs);
    expect(read('lo-nano.pcap').datagrams.map((d) => d.timeMs)).toEqual(us);
    expect(read('lo-nano.pcapng').datagrams.map((d) => d.timeMs)).toEqual(us);
    expect(read('any-sll2.pcapng').datagrams.map((d) => d.timeMs)).toEqual(read('any-sll2.pcap').datagrams.map((d) => d.timeMs));
    for (let i = 1; i < us.length; i++) expect(us[i]!).toBeGreaterThanOrEqual(us[i - 1]!);
  });

  it('counts records cut by a 120-byte snap length and yields the ones that fit', () => {
    const { datagrams, counters } = read('lo-snap120.pcap');
    // Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 + payload must fit in 120 bytes.
    const fit = sent.datagrams.filter((s) => 14 + (s.family === 4 ? 20 : 40) + 8 + s.length <= 120);
    expect(datagrams.map((d) => d.payload.toString('hex'))).toEqual(fit.map((s) => s.payloadHex));
    expect(counters.truncated).toBe(sent.datagrams.length - fit.length);
    expect(counters.records).toBe(sent.datagrams.length);
    expect(counters.malformed).toBe(0);
  });

  it('reads the same datagrams when the file arrives in small chunks', () => {
    for (const name of ['lo-ethernet.pcap', 'any-sll2.pcapng']) {
      const whole = read(name).datagrams.map((d) => d.payload.toString('hex'));
      const bytes = readFileSync(new URL(name, FIX));
      const reader = new CaptureReader();
      const got: string[] = [];
      for (let o = 0; o < bytes.length; o += 7) reader.push(bytes.subarray(o, o + 7), (d) => got.push(d.payload.toString('hex')));
      reader.end();
      expect(got).toEqual(whole);
      expect(reader.counters.fileErrors).toBe(0);
    }
  });
});

describe('reading the flow-oracle export captures', () => {
  it('finds every datagram softflowd and pmacct sent, byte for byte in total', () => {
    for (const f of flowFixtures()) {
      const { datagrams, counters } = readCapture(readFileSync(f.pcap));
      const ref = f.reference();
      expect(datagrams.length, f.name).toBe(ref.datagrams_replayed);
      expect(
        datagrams.reduce((n, d) => n + d.payload.length, 0),
        f.name,
      ).toBe(ref.datagram_bytes_replayed);
      expect(counters.fileErrors + counters.malformed + counters.truncated, f.name).toBe(0);
    }
  });
});

// ----------------------------------------------------------------- writer

const records: CaptureRecord[] = [
  {
    timeMs: 1_700_000_000_123.456,
    src: '192.0.2.1',
    dst: '198.51.100.7',
    srcPort: 50000,
    dstPort: 2055,
    payload: Buffer.from('v4 first'),
  },
  {
    timeMs: 1_700_000_000_124,
    src: '2001:db8::1',
    dst: '2001:db8:0:1::ffff',
    srcPort: 1,
    dstPort: 4739,
    payload: Buffer.alloc(0),
  },
  {
    timeMs: 1_700_000_001_999.999,
    src: '10.0.0.1',
    dst: '10.0.0.2',
    srcPort: 65535,
    dstPort: 2056,
    payload: Buffer.alloc(1500, 0xab),
  },
];

function summary(d: UdpDatagram): unknown {
  return [d.timeMs, d.srcAddr, d.dstAddr, d.srcPort, d.dstPort, d.payload.toString('hex')];
}

const expected = records.map((r) => [
  Math.floor(r.timeMs),
  r.src,
  r.dst,
  r.srcPort,
  r.dstPort,
  Buffer.from(r.payload).toString('hex'),
]);

describe('writeCapture → readCapture', () => {
  const links: WriterLinkType[] = ['ethernet', 'raw', 'sll', 'sll2', 'null', 'loop'];
  for (const linkType of links) {
    for (const bigEndian of [false, true]) {
      it(`pcap ${linkType} ${bigEndian ? 'big' : 'little'}-endian, µs and ns`, () => {
        for (const nanosecond of [false, true]) {
          const { datagrams, counters } = readCapture(writeCapture(records, { linkType, bigEndian, nanosecond }));
          expect(datagrams.map(summary)).toEqual(expected);
          expect(counters.udpDatagrams).toBe(3);
        }
      });
    }
  }

  it('Ethernet with an 802.1Q tag', () => {
    expect(readCapture(writeCapture(records, { vlan: 42 })).datagrams.map(summary)).toEqual(expected);
  });

  it('pcapng with two interfaces of different link type and resolution, both byte orders', () => {
    for (const bigEndian of [false, true]) {
      const file = writeCapture(
        records.map((r, i) => ({ ...r, iface: i % 2 })),
        {
          format: 'pcapng',
          bigEndian,
          interfaces: [
            { linkType: 'ethernet', vlan: 7 },
            { linkType: 'raw', tsresol: 9 },
          ],
        },
      );
      const { datagrams, format } = readCapture(file);
      expect(format).toBe('pcapng');
      expect(datagrams.map(summary)).toEqual(expected);
    }
  });

  it('refuses a record whose two ends are of different IP families', () => {
    expect(() => writeCapture([{ ...records[0]!, dst: '::1' }])).toThrow(RangeError);
  });

  it.skipIf(!hasTool('tcpdump') && !requireAll)('tcpdump reads what it wrote and finds the checksums good', () => {
    for (const opts of [
      { linkType: 'ethernet' as const },
      { linkType: 'sll2' as const },
      { format: 'pcapng' as const, linkType: 'raw' as const },
    ]) {
      const path = `/tmp/netsvc-pcap-writer-${process.pid}.pcap`;
      execFileSync('sh', ['-c', 'cat > "$0"', path], { input: writeCapture(records, opts) });
      const out = execFileSync('tcpdump', ['-nn', '-vv', '-r', path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      execFileSync('rm', ['-f', path]);
      const lines = out.split('\n').filter((l) => l.includes('UDP, length'));
      expect(lines).toHaveLength(records.length);
      expect(out).not.toMatch(/bad (udp )?cksum/i);
      expect(out.match(/udp sum ok/g)).toHaveLength(records.length);
      expect(out).toContain('192.0.2.1.50000 > 198.51.100.7.2055');
      expect(out).toContain('2001:db8::1.1 > 2001:db8:0:1::ffff.4739');
    }
  });
});

// ------------------------------------------------------------ hand-built damage

/** A classic little-endian Ethernet pcap from raw frames. */
function pcapOf(frames: Buffer[], cut: (i: number) => number = () => 0, link = 1): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(65535, 16);
  head.writeUInt32LE(link, 20);
  const parts: Buffer[] = [head];
  frames.forEach((f, i) => {
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(1_700_000_000 + i, 0);
    rec.writeUInt32LE(f.length, 8);
    rec.writeUInt32LE(f.length + cut(i), 12);
    parts.push(rec, f);
  });
  return Buffer.concat(parts);
}

/** One good Ethernet/IPv4/UDP frame, as the writer makes it. */
function goodFrame(payload = 'x'): Buffer {
  const file = writeCapture([
    { timeMs: 0, src: '10.1.1.1', dst: '10.2.2.2', srcPort: 9, dstPort: 2055, payload: Buffer.from(payload) },
  ]);
  return file.subarray(24 + 16);
}

function goodFrame6(): Buffer {
  const file = writeCapture([
    { timeMs: 0, src: '2001:db8::1', dst: '2001:db8::2', srcPort: 9, dstPort: 2055, payload: Buffer.from('six') },
  ]);
  return file.subarray(24 + 16);
}

/** IPv6 frame with extension headers inserted before UDP. */
function withExtensions(exts: { nh: number; body: Buffer }[]): Buffer {
  const f = Buffer.from(goodFrame6());
  const ip = f.subarray(14, 54);
  const udp = f.subarray(54);
  const chain: Buffer[] = [];
  let first = 17;
  for (let i = exts.length - 1; i >= 0; i--) {
    const e = exts[i]!;
    const hdr = Buffer.from(e.body);
    hdr[0] = first;
    first = e.nh;
    chain.unshift(hdr);
  }
  const newIp = Buffer.from(ip);
  newIp[6] = first;
  const ext = Buffer.concat(chain);
  newIp.writeUInt16BE(ext.length + udp.length, 4);
  return Buffer.concat([f.subarray(0, 14), newIp, ext, udp]);
}

describe('damaged input is counted, never thrown', () => {
  it('a file cut in the middle of a record yields the records before it', () => {
    const file = pcapOf([goodFrame('a'), goodFrame('b'), goodFrame('c')]);
    const { datagrams, counters } = readCapture(file.subarray(0, file.length - 5));
    expect(datagrams.map((d) => d.payload.toString())).toEqual(['a', 'b']);
    expect(counters.fileErrors).toBe(1);
  });

  it('a file that is not a capture yields nothing and says so', () => {
    expect(readCapture(Buffer.from('this is not a pcap file at all')).counters.fileErrors).toBe(1);
    expect(readCapture(Buffer.alloc(0)).counters.fileErrors).toBe(1);
  });

  it('an impossible record length stops reading without losing what came before', () => {
    const file = pcapOf([goodFrame('a'), goodFrame('b')]);
    const second = 24 + 16 + goodFrame('a').length;
    file.writeUInt32LE(0x7fffffff, second + 8);
    const { datagrams, counters } = readCapture(file);
    expect(datagrams).toHaveLength(1);
    expect(counters.fileErrors).toBe(1);
  });

  it('pcapng with a damaged block trailer stops there', () => {
    const file = writeCapture(records, { format: 'pcapng' });
    const damaged = Buffer.from(file);
    damaged.writeUInt32LE(12345, damaged.length - 4);
    const { datagrams, counters } = readCapture(damaged);
    expect(datagrams).toHaveLength(2);
    expect(counters.fileErrors).toBe(1);
  });

  it('IPv4 and IPv6 fragments are counted and skipped', () => {
    const mf = Buffer.from(goodFrame());
    mf.writeUInt16BE(0x2000, 14 + 6); // more fragments
    const later = Buffer.from(goodFrame());
    later.writeUInt16BE(0x0010, 14 + 6); // offset 128
    const frag6 = withExtensions([{ nh: 44, body: Buffer.from([0, 0, 0x00, 0x01, 0, 0, 0, 1]) }]);
    const atomic6 = withExtensions([{ nh: 44, body: Buffer.from([0, 0, 0, 0, 0, 0, 0, 2]) }]);
    const { datagrams, counters } = readCapture(pcapOf([mf, later, frag6, atomic6, goodFrame()]));
    expect(counters.fragments).toBe(3);
    expect(datagrams.map((d) => d.payload.toString())).toEqual(['six', 'x']);
  });

  it('IPv6 extension headers before UDP are walked', () => {
    const hop = { nh: 0, body: Buffer.from([0, 0, 1, 4, 0, 0, 0, 0]) };
    const dest = { nh: 60, body: Buffer.from([0, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) };
    const { datagrams } = readCapture(pcapOf([withExtensions([hop, dest])]));
    expect(datagrams.map((d) => [d.srcAddr, d.payload.toString()])).toEqual([['2001:db8::1', 'six']]);
  });

  it('lengths that contradict each other are malformed; snap-length cuts are truncated', () => {
    const longIp = Buffer.from(goodFrame());
    longIp.writeUInt16BE(1000, 14 + 2);
    const shortUdp = Buffer.from(goodFrame());
    shortUdp.writeUInt16BE(4, 14 + 20 + 4);
    const longUdp = Buffer.from(goodFrame());
    longUdp.writeUInt16BE(500, 14 + 20 + 4);
    const badIhl = Buffer.from(goodFrame());
    badIhl[14] = 0x43;
    const runt = goodFrame().subarray(0, 20);
    const cut = goodFrame('payload').subarray(0, 14 + 20 + 8 + 2);
    const { datagrams, counters } = readCapture(pcapOf([longIp, shortUdp, longUdp, badIhl, runt, cut], (i) => (i === 5 ? 5 : 0)));
    expect(datagrams).toHaveLength(0);
    expect(counters.malformed).toBe(5);
    expect(counters.truncated).toBe(1);
  });

  it('Ethernet padding after a short IP packet is not payload', () => {
    const padded = Buffer.concat([goodFrame('ab'), Buffer.alloc(20)]);
    expect(readCapture(pcapOf([padded])).datagrams[0]!.payload.toString()).toBe('ab');
  });

  it('non-UDP packets and unknown link types are counted', () => {
    const tcp = Buffer.from(goodFrame());
    tcp[14 + 9] = 6;
    const arp = Buffer.from(goodFrame());
    arp.writeUInt16BE(0x0806, 12);
    expect(readCapture(pcapOf([tcp, arp])).counters).toMatchObject({ notUdp: 2, udpDatagrams: 0 });
    expect(readCapture(pcapOf([goodFrame()], undefined, 147)).counters).toMatchObject({ unsupportedLinkType: 1, records: 1 });
  });

  it('random bytes after a valid header never throw', () => {
    let seed = 7;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let n = 0; n < 300; n++) {
      const base = n % 2 ? writeCapture(records, { format: 'pcapng' }) : writeCapture(records, { linkType: 'sll2' });
      const m = Buffer.from(base);
      for (let k = 0; k < 8; k++) m[((rnd() << 8) | rnd()) % m.length] = rnd();
      const r = readCapture(m.subarray(0, m.length - (rnd() % 40)));
      for (const d of r.datagrams) expect(d.payload.length).toBeLessThanOrEqual(m.length);
    }
  });
});

// ------------------------------------------------------ pcapng block details

function block(type: number, body: Buffer): Buffer {
  const len = 12 + ((body.length + 3) & ~3);
  const b = Buffer.alloc(len);
  b.writeUInt32LE(type, 0);
  b.writeUInt32LE(len, 4);
  body.copy(b, 8);
  b.writeUInt32LE(len, len - 4);
  return b;
}

function shb(): Buffer {
  const body = Buffer.alloc(16);
  body.writeUInt32LE(0x1a2b3c4d, 0);
  body.writeUInt16LE(1, 4);
  body.writeInt32LE(-1, 8);
  body.writeInt32LE(-1, 12);
  return block(0x0a0d0d0a, body);
}

function idb(link: number, options: Buffer = Buffer.alloc(0), snaplen = 0): Buffer {
  const body = Buffer.alloc(8);
  body.writeUInt16LE(link, 0);
  body.writeUInt32LE(snaplen, 4);
  return block(1, Buffer.concat([body, options]));
}

function option(code: number, value: Buffer): Buffer {
  const o = Buffer.alloc(4 + ((value.length + 3) & ~3));
  o.writeUInt16LE(code, 0);
  o.writeUInt16LE(value.length, 2);
  value.copy(o, 4);
  return o;
}

function epb(iface: number, units: bigint, frame: Buffer): Buffer {
  const body = Buffer.alloc(20);
  body.writeUInt32LE(iface, 0);
  body.writeUInt32LE(Number(units >> 32n), 4);
  body.writeUInt32LE(Number(units & 0xffffffffn), 8);
  body.writeUInt32LE(frame.length, 12);
  body.writeUInt32LE(frame.length, 16);
  return block(6, Buffer.concat([body, frame]));
}

describe('pcapng details', () => {
  const raw = goodFrame('r').subarray(14);

  it('binary time resolution (2^-k), time offset, simple packet blocks and unknown blocks', () => {
    const off = Buffer.alloc(8);
    off.writeBigInt64LE(1_000n);
    const binary = option(9, Buffer.from([0x80 | 20])); // 2^-20 s units
    const spbBody = Buffer.alloc(4);
    spbBody.writeUInt32LE(raw.length);
    const file = Buffer.concat([
      shb(),
      idb(101, Buffer.concat([binary, option(14, off)])),
      block(5, Buffer.alloc(8)), // interface statistics: skipped
      epb(0, 3n << 20n, raw), // 3 s after the 1000 s offset
      block(3, Buffer.concat([spbBody, raw])),
    ]);
    const { datagrams, counters } = readCapture(file);
    expect(datagrams.map((d) => d.timeMs)).toEqual([1_003_000, 1_003_000]);
    expect(counters).toMatchObject({ records: 2, udpDatagrams: 2, otherBlocks: 1, fileErrors: 0 });
  });

  it('a packet on an undeclared interface is malformed; a new section starts over', () => {
    const file = Buffer.concat([
      shb(),
      idb(101),
      epb(1, 5n, raw),
      epb(0, 5n, raw),
      shb(),
      epb(0, 5n, raw),
      idb(1),
      epb(0, 5n, goodFrame('e')),
    ]);
    const { datagrams, counters } = readCapture(file);
    expect(datagrams.map((d) => d.payload.toString())).toEqual(['r', 'e']);
    expect(counters.malformed).toBe(2);
  });
});
