/**
 * Fuzz: random and mutated datagrams built from the real vendor fixtures
 * (bit flips, truncation, length-field corruption, splices, random bytes
 * behind a valid version word). No exception may escape `decode`, and every
 * row it appends must be in range; a datagram reported malformed appends none.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef, type FlowDecoder } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { packetSectionMessages } from './packet-section-fixtures.js';
import { asaNselPackets, yafBiflowMessages } from './two-way-fixtures.js';
import { xorshift } from '../../helpers/xorshift.js';
import { vendor, VENDOR_DIR } from './wire.js';

const CASES = 100_000;

/** Offsets of the 16-bit length fields of the sets/flowsets of a v9/IPFIX datagram (plus the header's). */
function lengthOffsets(b: Buffer): number[] {
  const out = [2];
  if (b.length < 4) return out;
  const v = b.readUInt16BE(0);
  let p = v === 9 ? 20 : v === 10 ? 16 : b.length;
  while (p + 4 <= b.length) {
    out.push(p + 2);
    const len = b.readUInt16BE(p + 2);
    if (len < 4) break;
    // Inside a template set, the field counts are lengths too.
    if (b.readUInt16BE(p) <= 3 && p + 8 <= b.length) out.push(p + 6);
    p += len;
  }
  return out;
}

function mutate(seeds: Buffer[], r: () => number): Buffer {
  const pick = (): Buffer => seeds[Math.floor(r() * seeds.length)]!;
  const src = pick();
  const kind = Math.floor(r() * 7);
  switch (kind) {
    case 0: {
      // bit flips
      const b = Buffer.from(src);
      const n = 1 + Math.floor(r() * 8);
      for (let k = 0; k < n; k++) {
        const i = Math.floor(r() * b.length);
        b[i]! ^= 1 << Math.floor(r() * 8);
      }
      return b;
    }
    case 1:
      // truncation
      return Buffer.from(src.subarray(0, Math.floor(r() * src.length)));
    case 2: {
      // a length field set to something else
      const b = Buffer.from(src);
      const offs = lengthOffsets(b).filter((o) => o + 2 <= b.length);
      const o = offs[Math.floor(r() * offs.length)];
      if (o !== undefined) {
        const choices = [0, 1, 3, 4, 5, 0xffff, 0xfffe, b.length, b.length + 1, Math.floor(r() * 0x10000)];
        b.writeUInt16BE(choices[Math.floor(r() * choices.length)]!, o);
      }
      return b;
    }
    case 3: {
      // splice: head of one datagram, tail of another
      const other = pick();
      const cut = Math.floor(r() * src.length);
      const from = Math.floor(r() * other.length);
      return Buffer.concat([src.subarray(0, cut), other.subarray(from)]);
    }
    case 4: {
      // random bytes behind a valid version word (and sometimes a plausible length)
      const len = Math.floor(r() * 600);
      const b = Buffer.alloc(Math.max(2, len));
      for (let i = 0; i < b.length; i++) b[i] = Math.floor(r() * 256);
      b.writeUInt16BE([5, 9, 10][Math.floor(r() * 3)]!, 0);
      if (b.length >= 4 && r() < 0.5) b.writeUInt16BE(b.length, 2);
      return b;
    }
    case 5: {
      // random 16-bit words overwritten (template ids, field ids, lengths)
      const b = Buffer.from(src);
      const n = 1 + Math.floor(r() * 4);
      for (let k = 0; k < n && b.length >= 2; k++) {
        const o = Math.floor(r() * (b.length - 1));
        b.writeUInt16BE(r() < 0.3 ? 0xffff : Math.floor(r() * 0x10000), o);
      }
      return b;
    }
    default:
      // a chunk duplicated in place
      return Buffer.concat([src, src.subarray(Math.floor(r() * src.length))]);
  }
}

function checkRows(batch: FlowBatch, from: number): string | undefined {
  const c = batch.cols;
  for (let i = from; i < batch.length; i++) {
    const v = c.ipVersion[i];
    if (v !== 4 && v !== 6) return `row ${i}: ipVersion ${v}`;
    if (!(c.srcPort[i]! <= 65535 && c.dstPort[i]! <= 65535)) return `row ${i}: port`;
    if (!(c.proto[i]! <= 255)) return `row ${i}: proto`;
    for (const name of ['bytes', 'packets'] as const) {
      const x = c[name][i]!;
      if (!Number.isFinite(x) || x < 0) return `row ${i}: ${name} ${x}`;
    }
    for (const name of ['start', 'end', 'received'] as const) {
      if (!Number.isFinite(c[name][i]!)) return `row ${i}: ${name} ${c[name][i]}`;
    }
    if (!(c.samplingInterval[i]! >= 1)) return `row ${i}: samplingInterval ${c.samplingInterval[i]}`;
  }
  return undefined;
}

describe('decoder fuzz', () => {
  it(`survives ${CASES} random and mutated datagrams without an exception or an out-of-range flow`, () => {
    const names = readdirSync(VENDOR_DIR)
      .filter((f) => f.endsWith('.dat'))
      .sort();
    // The built two-way and packet-section exports join the vendor datagrams (their first
    // message holds the templates), so their compiled code meets mutated data too.
    const built = [yafBiflowMessages(), asaNselPackets(), packetSectionMessages()];
    const seeds = [...names.map((n) => vendor(n)), ...built.flat()];
    const templates = [...names.filter((n) => /tpl|opttpl/.test(n)).map((n) => vendor(n)), ...built.map((m) => m[0]!)];
    const r = xorshift(0x5eed);
    const exporters = [exporterRef('192.0.2.1'), exporterRef('192.0.2.2'), exporterRef('2001:db8::1')];
    const batch = new FlowBatch(1024);
    let decoder: FlowDecoder = createFlowDecoder();
    const statuses = { ok: 0, malformed: 0, 'unknown-version': 0 };
    let flows = 0;
    for (let k = 0; k < CASES; k++) {
      if (k % 5000 === 0) {
        // A fresh decoder now and then, primed with the real templates, so
        // mutated data meets real layouts and the held-data buffer starts empty.
        decoder = createFlowDecoder({ pendingMaxSets: 64 });
        for (const t of templates) for (const e of exporters) decoder.decode(t, e, 1_700_000_000_000, batch);
        batch.clear();
      }
      const dgram = mutate(seeds, r);
      const from = batch.length;
      const exporter = exporters[k % exporters.length]!;
      let outcome;
      try {
        outcome = decoder.decode(dgram, exporter, 1_700_000_000_000 + k, batch);
      } catch (err) {
        throw new Error(`case ${k}: decode threw on ${dgram.toString('hex')}`, { cause: err });
      }
      statuses[outcome.status]++;
      // A read past the end is caught as malformed, but means a length went unchecked.
      if (outcome.readPastEnd) throw new Error(`case ${k}: the decoder read past the end of ${dgram.toString('hex')}`);
      // A rejected datagram adds no row of its own; only held data its templates released (outcome.flows) stays.
      if (outcome.status !== 'ok') expect(batch.length, `case ${k}: rows from a rejected datagram`).toBe(from + outcome.flows);
      const bad = checkRows(batch, from);
      if (bad !== undefined) throw new Error(`case ${k}: ${bad} from ${dgram.toString('hex')}`);
      flows += batch.length - from;
      if (batch.length > 50_000) batch.clear();
    }
    // The mix must exercise both paths, or the fuzz proves little.
    expect(statuses.ok).toBeGreaterThan(CASES / 10);
    expect(statuses.malformed).toBeGreaterThan(CASES / 10);
    expect(flows).toBeGreaterThan(CASES);
  }, 60_000);
});
