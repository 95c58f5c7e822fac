import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { rows } from './rows.js';
import { ipv4, set, uint, v9Packet, v9Templates, type Spec } from './wire.js';

const FIELDS: Spec[] = [
  [8, 4], // src
  [12, 4], // dst
  [7, 2], // sport
  [11, 2], // dport
  [4, 1], // proto
  [1, 4], // bytes
  [2, 4], // packets
  [22, 4], // FIRST_SWITCHED
  [21, 4], // LAST_SWITCHED
];

function record(src: string, dst: string, sport: number, dport: number, proto: number, first: number, last: number): Buffer {
  return Buffer.concat([
    ipv4(src),
    ipv4(dst),
    uint(sport, 2),
    uint(dport, 2),
    uint(proto, 1),
    uint(1000, 4),
    uint(10, 4),
    uint(first, 4),
    uint(last, 4),
  ]);
}

const from = exporterRef('198.51.100.1');
const RECEIVED = 1_700_000_100_000;

describe('NetFlow v9', () => {
  it('turns sysUptime-relative times into absolute ones with the header clock (no 1970 dates)', () => {
    const unixSecs = 1_700_000_000;
    const uptime = 1_000_000; // router up for 1000 s
    const pkt = v9Packet(
      { uptimeMs: uptime, unixSecs },
      v9Templates({ id: 256, fields: FIELDS }),
      set(256, Buffer.concat([record('10.0.0.1', '10.0.0.2', 1, 2, 6, 990_000, 999_500)])),
    );
    const d = createFlowDecoder();
    const b = new FlowBatch();
    expect(d.decode(pkt, from, RECEIVED, b).status).toBe('ok');
    const [f] = rows(b);
    // Started 10 s and ended 0.5 s before the header's uptime.
    expect(f!.start).toBe(unixSecs * 1000 - 10_000);
    expect(f!.end).toBe(unixSecs * 1000 - 500);
    expect(f!.received).toBe(RECEIVED);
  });

  it('handles an uptime that wrapped past 2^32 ms between flow start and export', () => {
    const unixSecs = 1_700_000_000;
    // Uptime wrapped to 5 s; the flow started 4096 ms before the wrap.
    const pkt = v9Packet(
      { uptimeMs: 5000, unixSecs },
      v9Templates({ id: 256, fields: FIELDS }),
      set(256, record('10.0.0.1', '10.0.0.2', 1, 2, 17, 0x1_0000_0000 - 4096, 4000)),
    );
    const b = new FlowBatch();
    createFlowDecoder().decode(pkt, from, RECEIVED, b);
    const [f] = rows(b);
    expect(f!.start).toBe(unixSecs * 1000 - 5000 - 4096);
    expect(f!.end).toBe(unixSecs * 1000 - 1000);
  });

  it('reads several flowsets per packet, with padding, and skips (and counts) reserved flowset ids', () => {
    const recs1 = Buffer.concat([record('10.0.0.1', '10.0.0.2', 1, 2, 6, 0, 0), record('10.0.0.3', '10.0.0.4', 3, 4, 6, 0, 0)]);
    const recs2 = record('10.0.0.5', '10.0.0.6', 5, 6, 17, 0, 0);
    const pkt = v9Packet(
      { uptimeMs: 10, unixSecs: 1_700_000_000 },
      v9Templates({ id: 300, fields: FIELDS }),
      set(300, recs1), // 58 bytes of records: padded to 60+4
      set(7, Buffer.alloc(8)), // reserved id: skipped by its length
      set(300, recs2),
    );
    const b = new FlowBatch();
    const d = createFlowDecoder();
    const out = d.decode(pkt, from, RECEIVED, b);
    expect(out).toEqual({ status: 'ok', version: 9, flows: 3 });
    expect(rows(b).map((r) => `${r.src}:${r.srcPort}`)).toEqual(['10.0.0.1:1', '10.0.0.3:3', '10.0.0.5:5']);
    // nothing silently dropped: the reserved flowset is counted
    expect(d.counters.exporter(from.address).setsReserved).toBe(1);
  });

  it('drops a datagram whose flowset length overruns it, with no partial flows', () => {
    const good = set(256, record('10.0.0.1', '10.0.0.2', 1, 2, 6, 0, 0));
    const bad = Buffer.from(set(256, record('10.0.0.3', '10.0.0.4', 3, 4, 6, 0, 0)));
    bad.writeUInt16BE(200, 2); // claims 200 bytes
    const d = createFlowDecoder();
    const b = new FlowBatch();
    d.decode(v9Packet({ uptimeMs: 0, unixSecs: 1 }, v9Templates({ id: 256, fields: FIELDS })), from, RECEIVED, b);
    const o = d.decode(v9Packet({ uptimeMs: 0, unixSecs: 1 }, good, bad), from, RECEIVED, b);
    expect(o.status).toBe('malformed');
    expect(b.length).toBe(0);
    expect(d.counters.exporter(from.address).malformed).toBe(1);
  });

  it('counts sequence gaps in packets per source id', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    for (const seq of [10, 11, 12, 15, 16]) {
      d.decode(v9Packet({ uptimeMs: 0, unixSecs: 1, sequence: seq, sourceId: 1 }), from, RECEIVED, b);
    }
    // Another source id of the same exporter has its own sequence.
    d.decode(v9Packet({ uptimeMs: 0, unixSecs: 1, sequence: 500, sourceId: 2 }), from, RECEIVED, b);
    const c = d.counters.exporter(from.address);
    expect(c.sequenceGaps).toBe(1);
    expect(c.sequenceMissing).toBe(2);
  });
  // A template flowset naming template id 5 (ids below 256 are not templates): the datagram is malformed.
  const BAD_TEMPLATES = set(0, Buffer.concat([uint(5, 2), uint(1, 2), uint(8, 2), uint(4, 2)]));

  it("records a malformed datagram's sequence number, so the next datagram counts no false gap", () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const outcomes = [10, 11, 12].map((seq) =>
      d.decode(
        v9Packet({ uptimeMs: 0, unixSecs: 1, sequence: seq, sourceId: 1 }, ...(seq === 11 ? [BAD_TEMPLATES] : [])),
        from,
        RECEIVED,
        b,
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'malformed', 'ok']);
    const c = d.counters.exporter(from.address);
    expect(c.sequenceGaps).toBe(0);
    expect(c.sequenceMissing).toBe(0);
  });

  it("keeps held data its template released before the datagram turned out malformed; drops only that datagram's own rows", () => {
    const d = createFlowDecoder();
    const b = new FlowBatch();
    const held = set(300, record('10.9.0.1', '10.9.0.2', 1, 2, 6, 0, 0));
    expect(d.decode(v9Packet({ uptimeMs: 0, unixSecs: 1, sequence: 0 }, held), from, RECEIVED, b).flows).toBe(0);
    const own = set(300, record('10.9.0.3', '10.9.0.4', 3, 4, 17, 0, 0));
    const o = d.decode(
      v9Packet({ uptimeMs: 0, unixSecs: 1, sequence: 1 }, v9Templates({ id: 300, fields: FIELDS }), own, BAD_TEMPLATES),
      from,
      RECEIVED,
      b,
    );
    expect(o.status).toBe('malformed');
    expect(o.flows).toBe(1);
    expect(rows(b).map((r) => [r.src, r.proto])).toEqual([['10.9.0.1', 6]]);
    const c = d.counters.exporter(from.address);
    expect([c.pendingDecoded, c.flows, c.malformed]).toEqual([1, 1, 1]);
  });
});
