import { describe, expect, it } from 'vitest';
import { ADDRESS_COLUMNS, exactCount, FlowBatch, NUMERIC_COLUMNS } from '../../../common/flow-batch.js';
import { decodeBlockColumns, encodeBlock } from '../../../storage/capture/block-codec.js';
import { CodecSet, createCodec, type CodecName } from '../../../storage/capture/codec.js';
import { ALL_COLUMNS, BLOCK_HEADER_SIZE, columnId, decodeBlockMeta } from '../../../storage/capture/format.js';
import { randomFlows, rowsOf } from './flows.js';

function roundTrip(batch: FlowBatch, codec: CodecName, wanted = ALL_COLUMNS): FlowBatch {
  const { block } = encodeBlock(batch, 0, batch.length, createCodec(codec, 3));
  const payload = block.subarray(BLOCK_HEADER_SIZE);
  const { index, columns } = decodeBlockMeta(payload, payload.length);
  const out = new FlowBatch(index.rows);
  out.length = index.rows;
  decodeBlockColumns(payload, columns, index.rows, new Set(wanted), new CodecSet(), out, 0);
  return out;
}

describe('data block encoding', () => {
  for (const codec of ['zstd', 'lz4', 'none'] as const) {
    it(`gives back every column of every row exactly (${codec})`, () => {
      const batch = randomFlows(3000, { received: Date.UTC(2026, 2, 25, 9), seed: 7, v6: 0.4 });
      expect(rowsOf([roundTrip(batch, codec)])).toEqual(rowsOf([batch]));
    });
  }

  it('keeps values no transform fits: fractions, NaN, 2^53, time going backwards, all-IPv6 and all-IPv4', () => {
    const b = new FlowBatch(4);
    const v6 = Uint8Array.from([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    const rows = [
      { received: 1.5, start: -5, end: 2 ** 53, bytes: 0.25, packets: NaN },
      { received: 1e15, start: 0, end: 7, bytes: 2 ** 53 - 1, packets: 0 },
      { received: 3, start: 1e15, end: -1e15, bytes: 1, packets: 1 },
    ];
    rows.forEach((r) => {
      const i = b.addRow();
      Object.assign(b.cols, {});
      b.cols.received[i] = r.received;
      b.cols.start[i] = r.start;
      b.cols.end[i] = r.end;
      b.cols.bytes[i] = r.bytes;
      b.cols.packets[i] = r.packets;
      b.cols.srcAs[i] = 4294967295;
      b.cols.srcPort[i] = 65535;
      b.setV6('srcAddr', i, v6, 0);
      b.setV4('dstAddr', i, 0xffffffff);
    });
    const out = roundTrip(b, 'zstd');
    expect(rowsOf([out])).toEqual(rowsOf([b]));
    expect(Number.isNaN(out.cols.packets[0])).toBe(true);
  });

  it('stores integer columns in the narrowest width their range needs, each edge exactly', () => {
    // [values of srcAs, dstAs, inputIf, outputIf] → widths 1, 2 (range 256), 2 (range 65535), 4 (range 2^32 − 1).
    const cases: [number[], number][] = [
      [[0, 255, 7], 1],
      [[0, 256, 3], 2],
      [[5, 65_540, 70], 2],
      [[1, 4_294_967_295, 0], 4],
    ];
    const b = new FlowBatch(3);
    for (let i = 0; i < 3; i++) b.addRow();
    const cols = ['srcAs', 'dstAs', 'inputIf', 'outputIf'] as const;
    cases.forEach(([values], k) => values.forEach((v, i) => (b.cols[cols[k]!][i] = v)));
    const { block } = encodeBlock(b, 0, 3, createCodec('none'));
    const payload = block.subarray(BLOCK_HEADER_SIZE);
    const { columns } = decodeBlockMeta(payload, payload.length);
    const widths = cols.map((c) => columns.find((e) => e.id === ALL_COLUMNS.indexOf(c))!.width);
    expect(widths).toEqual(cases.map(([, w]) => w));
    expect(rowsOf([roundTrip(b, 'none')])).toEqual(rowsOf([b]));
  });

  it('keeps IPv4-mapped and native IPv6 apart in one column (::ffff:a.b.c.d vs 2001:db8::…)', () => {
    const b = new FlowBatch(2);
    b.addRow();
    b.setV4('srcAddr', 0, 0xc0000201);
    b.addRow();
    const almost = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 192, 0, 2, 1]); // not mapped: byte 9 set
    b.setV6('srcAddr', 1, almost, 0);
    const out = roundTrip(b, 'zstd');
    expect(Buffer.from(out.srcAddr.subarray(0, 16)).toString('hex')).toBe('00000000000000000000ffffc0000201');
    expect(Buffer.from(out.srcAddr.subarray(16, 32))).toEqual(Buffer.from(almost));
  });

  it('decodes only the columns asked for (and what they depend on)', () => {
    const batch = randomFlows(500, { received: 1e12, seed: 3 });
    const out = roundTrip(batch, 'zstd', ['end', 'dstPort']);
    expect(Array.from(out.cols.end.subarray(0, 500))).toEqual(Array.from(batch.cols.end.subarray(0, 500)));
    expect(Array.from(out.cols.received.subarray(0, 500))).toEqual(Array.from(batch.cols.received.subarray(0, 500)));
    expect(out.cols.bytes.subarray(0, 500).every((v) => v === 0)).toBe(true);
    expect(out.srcAddr.every((v) => v === 0)).toBe(true);
  });

  it('keeps byte and packet counts above 2^53 exact (value + rest), and reads a block without rest columns (older files) as rest 0', () => {
    const b = new FlowBatch(2);
    const counts = [2n ** 64n - 1n, 2n ** 53n + 1n];
    counts.forEach((n) => {
      const i = b.addRow();
      b.cols.bytes[i] = Number(n);
      b.cols.bytesRest[i] = Number(n - BigInt(Number(n)));
      b.cols.packets[i] = 2 ** 40 + i;
      b.setV4('srcAddr', i, 0x0a000001);
    });
    const out = roundTrip(b, 'zstd');
    expect([0, 1].map((i) => exactCount(out.cols.bytes[i]!, out.cols.bytesRest[i]!))).toEqual(counts);

    const { block } = encodeBlock(b, 0, b.length, createCodec('zstd', 3));
    const payload = block.subarray(BLOCK_HEADER_SIZE);
    const { index, columns } = decodeBlockMeta(payload, payload.length);
    const older = columns.filter((e) => e.id !== columnId('bytesRest') && e.id !== columnId('packetsRest'));
    const old = new FlowBatch(index.rows);
    old.cols.bytesRest.fill(7);
    old.length = index.rows;
    decodeBlockColumns(payload, older, index.rows, new Set(ALL_COLUMNS), new CodecSet(), old, 0);
    expect([...old.cols.bytesRest.subarray(0, 2)]).toEqual([0, 0]);
    expect([...old.cols.packets.subarray(0, 2)]).toEqual([2 ** 40, 2 ** 40 + 1]);
  });

  it('keeps the column ids of files written before the rest columns, and gives every column one id', () => {
    expect(ALL_COLUMNS.slice(0, 20)).toEqual([
      ...NUMERIC_COLUMNS.filter((c) => c !== 'bytesRest' && c !== 'packetsRest'),
      ...ADDRESS_COLUMNS,
    ]);
    expect([columnId('bytesRest'), columnId('packetsRest')]).toEqual([20, 21]);
    expect([...ALL_COLUMNS].sort()).toEqual([...NUMERIC_COLUMNS, ...ADDRESS_COLUMNS].sort());
  });
  it('decodes block after block through one CodecSet (whose zstd output buffer is reused), each exactly', () => {
    const codecs = new CodecSet();
    const sizes = [3000, 20000, 500, 65536, 1];
    const batches = sizes.map((n, k) => randomFlows(n, { received: Date.UTC(2026, 2, 25, 9), seed: 11 + k, v6: 0.3 }));
    const blocks = batches.map((b) => encodeBlock(b, 0, b.length, createCodec('zstd', 3)).block.subarray(BLOCK_HEADER_SIZE));
    batches.forEach((b, k) => {
      const { index, columns } = decodeBlockMeta(blocks[k]!, blocks[k]!.length);
      const out = new FlowBatch(index.rows);
      out.length = index.rows;
      decodeBlockColumns(blocks[k]!, columns, index.rows, new Set(ALL_COLUMNS), codecs, out, 0);
      expect(rowsOf([out])).toEqual(rowsOf([b]));
    });
  });

  it('refuses a zstd column whose directory length disagrees with its frame, or is longer than any column, as a bad block', () => {
    const b = randomFlows(2000, { received: Date.UTC(2026, 2, 25, 9), seed: 5 });
    const payload = encodeBlock(b, 0, b.length, createCodec('zstd', 3)).block.subarray(BLOCK_HEADER_SIZE);
    const { index, columns } = decodeBlockMeta(payload, payload.length);
    const bytesId = columnId('bytes');
    for (const rawLen of [1, 2 ** 31]) {
      const lying = columns.map((e) => (e.id === bytesId ? { ...e, rawLen } : e));
      const out = new FlowBatch(index.rows);
      out.length = index.rows;
      expect(() => decodeBlockColumns(payload, lying, index.rows, new Set(['bytes'] as const), new CodecSet(), out, 0)).toThrow(
        expect.objectContaining({ code: 'bad-block', message: expect.stringMatching(/column \d+: zstd/) }),
      );
    }
  });
});
