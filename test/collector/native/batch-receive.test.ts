import { createSocket, type Socket, type SocketType } from 'node:dgram';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BatchReader,
  batchRecvAddonPath,
  loadBatchRecv,
  MAX_BATCH,
  takeSocketFd,
} from '../../../collector/native/batch-receive.js';
import { SummarySink } from '../../../common/flow-sink.js';
import { createFlowListeners } from '../../../collector/listen/udp-listener.js';
import type { FlowListeners } from '../../../collector/listen/flow-listeners.js';
import { requireAll } from '../../helpers/databases.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';

const addon = loadBatchRecv();
if (!addon && requireAll)
  throw new Error(
    `the batch receive addon is not built (${batchRecvAddonPath()}; npm install builds it) and NETSVC_REQUIRE_ALL=1`,
  );

const sockets: Socket[] = [];
const listeners: FlowListeners[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const l of listeners.splice(0)) await l.close();
});

async function bound(type: SocketType, host: string): Promise<Socket> {
  // 1 MiB: the first test's burst (about 300 KB as the kernel counts it) fits.
  const s = createSocket({ type, ipv6Only: false, recvBufferSize: 1024 * 1024 });
  sockets.push(s);
  await new Promise<void>((ok) => s.bind(0, host, ok));
  return s;
}

function send(from: Socket, payloads: Uint8Array[], port: number, host: string): Promise<void[]> {
  return Promise.all(
    payloads.map((p) => new Promise<void>((ok, fail) => from.send(p, port, host, (err) => (err ? fail(err) : ok())))),
  );
}

type Got = { payload: Buffer; exporter: string; time: number };

/** Reads until `n` datagrams came (or a second passed), as the socket thread does: read, else wait; `reads` gets each read's count. */
function readAll(reader: BatchReader, fd: number, n: number, reads: number[] = []): Got[] {
  const got: Got[] = [];
  const fds = Int32Array.of(fd);
  const deadline = performance.now() + 1000;
  while (got.length < n && performance.now() < deadline) {
    const r = reader.read(fd, (payload, exporter, time) => got.push({ payload: Buffer.from(payload), exporter, time }), 1234);
    expect(r).toBeGreaterThanOrEqual(0);
    if (r > 0) reads.push(r);
    if (r === 0) reader.wait(fds, 1, 50);
  }
  return got;
}

/** A link-local IPv6 address of this machine with its interface, if it has one. */
function linkLocal(): { address: string; iface: string } | undefined {
  for (const [iface, addrs] of Object.entries(networkInterfaces())) {
    const a = addrs?.find((x) => x.family === 'IPv6' && x.address.startsWith('fe80:') && (x.scopeid ?? 0) > 0);
    if (a) return { address: a.address, iface };
  }
  return undefined;
}

describe.skipIf(!addon)('batch receive (recvmmsg addon)', () => {
  it('reads every datagram whole and in order, with the exporter text dgram would give, in batches of at most 64', async () => {
    const rx = await bound('udp4', '127.0.0.1');
    const fd = takeSocketFd(rx)!;
    expect(fd).toBeGreaterThan(0);
    let viaDgram = 0;
    rx.on('message', () => viaDgram++);
    const payloads = [
      ...flowFixtures()
        .find((f) => f.name === '1/softflowd-v9')!
        .datagrams()
        .map((d) => d.payload),
      Buffer.alloc(0),
      Buffer.alloc(65_507, 7),
    ];
    const many = Array.from({ length: 200 }, (_, i) => Buffer.from(`datagram ${i}`));
    const tx = await bound('udp4', '127.0.0.1');
    await send(tx, [...payloads, ...many], rx.address().port, '127.0.0.1');
    const reader = new BatchReader(addon!);
    const reads: number[] = [];
    const got = readAll(reader, fd, payloads.length + many.length, reads);
    expect(got.map((g) => g.payload)).toEqual([...payloads, ...many].map((p) => Buffer.from(p)));
    // Everything was queued before the first read: full batches, then the rest.
    expect(reads.slice(0, 3)).toEqual([MAX_BATCH, MAX_BATCH, MAX_BATCH]);
    expect(reads.reduce((a, b) => a + b)).toBe(got.length);
    expect(new Set(got.map((g) => g.exporter))).toEqual(new Set(['127.0.0.1']));
    expect(got.every((g) => g.time === 1234)).toBe(true);
    // Node no longer reads the socket it gave up.
    expect(viaDgram).toBe(0);
    // Nothing waiting: 0, at once.
    expect(reader.read(fd, () => undefined, 0)).toBe(0);
  });

  it('names IPv6 exporters, and IPv4 ones on a dual-stack socket, as dgram does', async () => {
    const rx = await bound('udp6', '::');
    const fd = takeSocketFd(rx)!;
    const reader = new BatchReader(addon!);
    const v6 = await bound('udp6', '::1');
    const v4 = await bound('udp4', '127.0.0.1');
    await send(v6, [Buffer.from('six')], rx.address().port, '::1');
    await send(v4, [Buffer.from('four')], rx.address().port, '127.0.0.1');
    const got = readAll(reader, fd, 2);
    expect(Object.fromEntries(got.map((g) => [g.payload.toString(), g.exporter]))).toEqual({
      six: '::1',
      four: '::ffff:127.0.0.1',
    });

    // The same text dgram's remote info carries, so exporter claims match either way.
    const plain = await bound('udp6', '::');
    const seen = new Promise<string>((ok) => plain.once('message', (_m, r) => ok(r.address)));
    await send(v4, [Buffer.from('four')], plain.address().port, '127.0.0.1');
    expect(await seen).toBe('::ffff:127.0.0.1');
  });

  const ll = linkLocal();
  it.skipIf(!ll)('names a link-local IPv6 exporter with its interface, as dgram does', async () => {
    const rx = await bound('udp6', '::');
    const plain = await bound('udp6', '::');
    const fd = takeSocketFd(rx)!;
    const tx = await bound('udp6', `${ll!.address}%${ll!.iface}`);
    const seen = new Promise<string>((ok) => plain.once('message', (_m, r) => ok(r.address)));
    await send(tx, [Buffer.from('link')], rx.address().port, `${ll!.address}%${ll!.iface}`);
    await send(tx, [Buffer.from('link')], plain.address().port, `${ll!.address}%${ll!.iface}`);
    const viaDgram = await seen;
    expect(viaDgram).toBe(`${ll!.address}%${ll!.iface}`);
    expect(readAll(new BatchReader(addon!), fd, 1).map((g) => g.exporter)).toEqual([viaDgram]);
  });

  it('reports a read on a closed descriptor as an error number, and waits no longer than asked', async () => {
    const reader = new BatchReader(addon!);
    expect(reader.read(987_654, () => undefined, 0)).toBe(-9); // EBADF
    const rx = await bound('udp4', '127.0.0.1');
    const fd = takeSocketFd(rx)!;
    const t0 = performance.now();
    reader.wait(Int32Array.of(fd), 1, 30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('refuses arguments of the wrong type instead of reading out of bounds', () => {
    const meta = new Int32Array(8);
    expect(() => addon!.recvBatch(0, new Uint16Array(4) as unknown as Uint8Array, 65_536, meta, 1)).toThrow(TypeError);
    expect(() => addon!.recvBatch(0, new Uint8Array(4), 0, meta, 1)).toThrow(TypeError);
    // A slot smaller than the largest UDP payload could cut a datagram short: refused.
    expect(() => addon!.recvBatch(0, new Uint8Array(1 << 20), 1024, meta, 1)).toThrow(TypeError);
    // A negative or oversized count reads nothing beyond what the arrays hold (a negative one once overran the stack).
    expect(addon!.recvBatch(0, new Uint8Array(1 << 20), 65_536, meta, -1)).toBe(0);
    expect(() => addon!.addressText(meta, 1)).toThrow(TypeError);
    expect(() => addon!.waitReadable(Int32Array.of(0), 2, 0)).toThrow(TypeError);
    // A staging buffer smaller than one slot: nothing is read into it.
    expect(addon!.recvBatch(0, new Uint8Array(4), 65_536, meta, 64)).toBe(0);
  });

  it('leaves a socket whose handle it cannot find to dgram', () => {
    expect(takeSocketFd({} as Socket)).toBeUndefined();
  });

  it('reads more sockets than poll() was first sized for (70 sources on their own ports)', async () => {
    const sources = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`s${i}`, { listen: '127.0.0.1:0' }]));
    const summary = new SummarySink();
    const l = createFlowListeners(sources, { sink: summary }, { socketThread: true });
    listeners.push(l);
    await l.start();
    const v5 = flowFixtures().find((f) => f.name === '1/pmacct-v5')!;
    const tx = await bound('udp4', '127.0.0.1');
    const payload = v5.datagrams()[0]!.payload;
    for (const name of ['s0', 's69']) await send(tx, [payload], l.addresses()[name]!.port, '127.0.0.1');
    const deadline = Date.now() + 3000;
    const received = (): number => l.sourceStats().reduce((a, st) => a + st.received, 0);
    while (received() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(l.socketStats().every((st) => st.reader === 'recvmmsg')).toBe(true);
    expect(
      Object.fromEntries(
        l
          .sourceStats()
          .filter((st) => st.received > 0)
          .map((st) => [st.source, st.received]),
      ),
    ).toEqual({ s0: 1, s69: 1 });
  });

  it('is how a socket thread reads its sockets by default, and batchReceive: false keeps dgram', async () => {
    for (const [batchReceive, reader] of [
      [true, 'recvmmsg'],
      [false, 'dgram'],
    ] as const) {
      const l = createFlowListeners(
        { netflow: { listen: '127.0.0.1:0' } },
        { sink: new SummarySink() },
        { socketThread: true, batchReceive },
      );
      listeners.push(l);
      await l.start();
      expect(l.socketStats()[0]!.reader).toBe(reader);
    }
  });
});
