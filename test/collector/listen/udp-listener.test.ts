import { createSocket, type Socket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFlowDecoder, type FlowDecoder } from '../../../collector/decode/decoder.js';
import type { FlowBatch } from '../../../common/flow-batch.js';
import { formatAddress } from '../../../common/flow-batch.js';
import { SummarySink, type FlowSink } from '../../../common/flow-sink.js';
import { createThreadedFlowListeners } from '../../../collector/listen/threaded-listener.js';
import { ListenerBindError } from '../../../collector/listen/listener-errors.js';
import { createFlowListeners } from '../../../collector/listen/udp-listener.js';
import type { FlowListeners } from '../../../collector/listen/flow-listeners.js';
import type { FlowSourceSettings } from '../../../collector/listen/flow-source-config.js';
import type { FlowListenerDeps } from '../../../collector/listen/listener-options.js';
import { flowFixtures, freeUdpPort } from '../../helpers/flow-fixtures.js';
import { portFree } from '../../helpers/net.js';

type Factory = (
  sources: Record<string, FlowSourceSettings>,
  deps: FlowListenerDeps,
  options: Record<string, unknown>,
) => FlowListeners;
const VARIANTS: [string, Factory][] = [
  ['in-thread', (s, d, o) => createFlowListeners(s, d, o)],
  // The decode path of the worker thread, here: sockets read by a socket thread into shared rings,
  // with recvmmsg batches (the default where the addon is built) and through dgram.
  ['in-thread with a socket thread', (s, d, o) => createFlowListeners(s, d, { socketThread: true, ...o })],
  [
    'in-thread with a socket thread reading through dgram',
    (s, d, o) => createFlowListeners(s, d, { socketThread: true, batchReceive: false, ...o }),
  ],
  // Counters are pushed by the worker; fast pushes keep the polling below short.
  ['worker thread', (s, d, o) => createThreadedFlowListeners(s, d, { statsEveryMs: 20, ...o })],
];

const fixtures = flowFixtures();
const v9 = fixtures.find((f) => f.name === '1/softflowd-v9')!;
const v5 = fixtures.find((f) => f.name === '1/pmacct-v5')!;
const ipfix = fixtures.find((f) => f.name === '1/pmacct-v10')!;

const open: FlowListeners[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
  for (const s of sockets.splice(0)) s.close();
});

let factory: Factory = VARIANTS[0]![1];

async function listen(
  sources: Record<string, FlowSourceSettings>,
  sink: FlowSink,
  options: Record<string, unknown> = {},
  logger?: FlowListenerDeps['logger'],
): Promise<FlowListeners> {
  const l = factory(sources, { sink, logger }, options);
  open.push(l);
  await l.start();
  return l;
}

async function sender(bindAddress = '127.0.0.1'): Promise<Socket> {
  const s = createSocket(bindAddress.includes(':') ? 'udp6' : 'udp4');
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, bindAddress, () => r()));
  return s;
}

async function send(s: Socket, payloads: Uint8Array[], port: number, host = '127.0.0.1'): Promise<void> {
  for (const p of payloads) {
    await new Promise<void>((resolve, reject) => s.send(p, port, host, (err) => (err ? reject(err) : resolve())));
  }
}

/** Waits until the listeners have taken `n` datagrams and decoded everything queued. */
async function settle(l: FlowListeners, n: number): Promise<void> {
  const deadline = Date.now() + 5000;
  const taken = (): number =>
    l.sourceStats().reduce((a, s) => a + s.received, 0) + l.socketStats().reduce((a, s) => a + s.unclaimed, 0);
  while (taken() < n) {
    if (Date.now() > deadline) throw new Error(`only ${taken()} of ${n} datagrams arrived`);
    await new Promise((r) => setTimeout(r, 5));
  }
  await l.idle();
}

describe.each(VARIANTS)('flow listener, %s', (_name, make) => {
  beforeEach(() => {
    factory = make;
  });

  it('decodes real exporter datagrams into the totals nfdump found for them', async () => {
    const sink = new SummarySink();
    const l = await listen({ netflow: { listen: '127.0.0.1:0' } }, sink);
    const port = l.addresses().netflow!.port;
    const s = await sender();
    const payloads = v9.datagrams().map((d) => d.payload);
    await send(s, payloads, port);
    await settle(l, payloads.length);
    const ref = v9.reference();
    expect(sink.summary('netflow')).toMatchObject(ref.totals);
    const stats = l.sourceStats()[0]!;
    expect(stats.received).toBe(payloads.length);
    expect(stats.exporters['127.0.0.1']).toMatchObject({ packets: payloads.length, flows: ref.totals.flows, malformed: 0 });
  });

  it('counts a malformed datagram and keeps serving', async () => {
    const sink = new SummarySink();
    const l = await listen({ netflow: { listen: '127.0.0.1:0' } }, sink);
    const port = l.addresses().netflow!.port;
    const s = await sender();
    const good = v5.datagrams().map((d) => d.payload);
    const truncated = Buffer.from(good[0]!).subarray(0, 30); // v5 header promising 30 records
    const wrongVersion = Buffer.from([0, 7, 0, 1, 1, 2, 3, 4]);
    const empty = Buffer.alloc(0);
    await send(s, [truncated, good[0]!, wrongVersion, empty, ...good.slice(1)], port);
    await settle(l, good.length + 3);
    const c = l.sourceStats()[0]!.exporters['127.0.0.1']!;
    expect(c.malformed).toBe(2);
    expect(c.unknownVersion).toBe(1);
    expect(sink.summary()).toMatchObject(v5.reference().totals);
  });

  it('listens on IPv6 loopback and records the exporter address', async () => {
    const rows: string[] = [];
    const sink: FlowSink = {
      write(_source, batch: FlowBatch) {
        for (let i = 0; i < batch.length; i++) rows.push(formatAddress(batch.exporter, i));
      },
    };
    const l = await listen({ v6: { listen: '[::1]:0' } }, sink);
    const s = await sender('::1');
    const payloads = ipfix.datagrams().map((d) => d.payload);
    await send(s, payloads, l.addresses().v6!.port, '::1');
    await settle(l, payloads.length);
    expect(rows).toHaveLength(ipfix.reference().totals.flows);
    expect(new Set(rows)).toEqual(new Set(['::1']));
  });

  it('gives each source on a shared port the exporters it claims, and counts the unclaimed', async () => {
    const port = await freeUdpPort();
    const sink = new SummarySink();
    const l = await listen(
      {
        core: { listen: `127.0.0.1:${port}`, exporters: ['127.0.0.2'] },
        edge: { listen: `127.0.0.1:${port}`, exporters: ['127.0.0.3'] },
      },
      sink,
    );
    expect(l.socketStats()).toHaveLength(1);
    const payloads = v9.datagrams().map((d) => d.payload);
    const five = v5.datagrams().map((d) => d.payload);
    await send(await sender('127.0.0.2'), payloads, port);
    await send(await sender('127.0.0.3'), five, port);
    await send(await sender('127.0.0.4'), [five[0]!], port);
    await settle(l, payloads.length + five.length + 1);
    expect(sink.summary('core')).toMatchObject(v9.reference().totals);
    expect(sink.summary('edge')).toMatchObject(v5.reference().totals);
    expect(l.socketStats()[0]!.unclaimed).toBe(1);
    // The two sources keep separate template stores and counters.
    expect(Object.keys(l.sourceStats().find((s) => s.source === 'core')!.exporters)).toEqual(['127.0.0.2']);
  });

  it("sends a busy source's rows in full batches, and a quiet source's once its first row is flushDelayMs old", async () => {
    const port = await freeUdpPort();
    const seen: { source: string; rows: number; at: number }[] = [];
    const summary = new SummarySink();
    const sink: FlowSink = {
      write(source, batch) {
        seen.push({ source, rows: batch.length, at: Date.now() });
        summary.write(source, batch);
      },
    };
    const batchRows = 256;
    const l = await listen(
      {
        busy: { listen: `127.0.0.1:${port}`, exporters: ['127.0.0.2'] },
        quiet: { listen: `127.0.0.1:${port}`, exporters: ['127.0.0.3'] },
      },
      sink,
      { batchRows, flushDelayMs: 300 },
    );
    const v9s = v9.datagrams().map((d) => d.payload);
    const busy = await sender('127.0.0.2');
    const started = Date.now();
    await send(
      await sender('127.0.0.3'),
      v5
        .datagrams()
        .map((d) => d.payload)
        .slice(0, 1),
      port,
    );
    // The busy exporter keeps sending (its batches fill in a few datagrams) for 1.2 s.
    let loops = 0;
    while (Date.now() - started < 1200) {
      await send(busy, v9s, port);
      loops++;
      await new Promise((r) => setTimeout(r, 2)); // sends complete on next ticks: let the loop poll sockets
    }
    const quiet = seen.filter((b) => b.source === 'quiet');
    expect(quiet).toHaveLength(1);
    expect(quiet[0]!.at - started).toBeGreaterThanOrEqual(250);
    expect(quiet[0]!.at - started).toBeLessThan(1000);
    const busyBatches = seen.filter((b) => b.source === 'busy');
    expect(busyBatches.length).toBeGreaterThan(3);
    for (const b of busyBatches) expect(b.rows).toBeGreaterThanOrEqual(batchRows);
    await settle(l, 1 + loops * v9s.length);
    expect(summary.summary('busy').flows).toBe(v9.reference().totals.flows * loops);
  });

  it('sends unclaimed exporters to the one source on the port that claims none', async () => {
    const port = await freeUdpPort();
    const sink = new SummarySink();
    const l = await listen(
      { special: { listen: `127.0.0.1:${port}`, exporters: ['127.0.0.9'] }, rest: { listen: `127.0.0.1:${port}` } },
      sink,
    );
    const five = v5.datagrams().map((d) => d.payload);
    await send(await sender('127.0.0.5'), five, port);
    await settle(l, five.length);
    expect(sink.sources()).toEqual(['rest']);
    expect(l.socketStats()[0]!.unclaimed).toBe(0);
  });

  it('drops and counts datagrams while the sink is stuck, never blocking the socket', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const summary = new SummarySink();
    let writes = 0;
    const sink: FlowSink = {
      async write(source, batch) {
        writes++;
        summary.write(source, batch);
        if (writes === 1) await gate;
      },
    };
    // batchRows 1 and maxInFlightRows 1 (worker): the first batch holds everything behind it.
    const l = await listen({ netflow: { listen: '127.0.0.1:0' } }, sink, { queueDatagrams: 4, batchRows: 1, maxInFlightRows: 1 });
    const payloads = v5.datagrams().map((d) => d.payload);
    await send(await sender(), payloads, l.addresses().netflow!.port);
    const deadline = Date.now() + 5000;
    const st = (): { received: number; queueDrops: number } => l.sourceStats()[0]!;
    while (st().received < payloads.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    // At most one datagram is stuck in the sink and four wait in the queue: the rest were dropped.
    expect(st().received).toBe(payloads.length);
    expect(st().queueDrops).toBeGreaterThanOrEqual(payloads.length - 1 - 4);
    release();
    await l.idle();
    const c = l.sourceStats()[0]!.exporters['127.0.0.1']!;
    expect(c.packets + st().queueDrops).toBe(payloads.length);
    expect(summary.summary().flows).toBe(c.flows);
    expect(l.socketStats()[0]!.queueHighWater).toBe(4);
  });

  it('counts a failing sink and keeps serving', async () => {
    let fail = true;
    const summary = new SummarySink();
    const sink: FlowSink = {
      write(source, batch) {
        if (fail) throw new Error('disk full');
        summary.write(source, batch);
      },
    };
    const errors: unknown[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (o: object) => errors.push(o) };
    const l = await listen({ netflow: { listen: '127.0.0.1:0' } }, sink, {}, logger);
    const port = l.addresses().netflow!.port;
    const s = await sender();
    const payloads = v5.datagrams().map((d) => d.payload);
    await send(s, payloads.slice(0, 1), port);
    await settle(l, 1);
    fail = false;
    await send(s, payloads.slice(1), port);
    await settle(l, payloads.length);
    const st = l.sourceStats()[0]!;
    expect(st.sinkErrors).toBe(1);
    expect(st.sinkLostFlows + summary.summary().flows).toBe(v5.reference().totals.flows);
    expect(errors).toHaveLength(1);
  });

  it('asks for the configured receive buffer and says when the kernel grants less', async () => {
    const warnings: object[] = [];
    const logger = { info: () => {}, warn: (o: object) => warnings.push(o), error: () => {} };
    const l = await listen({ small: { listen: '127.0.0.1:0', receiveBuffer: 1 << 20 } }, new SummarySink(), {}, logger);
    expect(l.socketStats()[0]!.receiveBufferGranted).toBeGreaterThanOrEqual(1 << 20);
    expect(warnings).toHaveLength(0);
    // No kernel grants 1 GiB without a raised net.core.rmem_max.
    const big = await listen({ big: { listen: '127.0.0.1:0', receiveBuffer: 1 << 30 } }, new SummarySink(), {}, logger);
    expect(big.socketStats()[0]!.receiveBufferGranted).toBeLessThan(1 << 30);
    expect(warnings).toEqual([expect.objectContaining({ requested: 1 << 30 })]);
  });

  it('keeps templates across a restart, so data before the next template announcement decodes', async () => {
    const f = fixtures.find((x) => x.name === '1/pmacct-v9')!;
    const all = f.datagrams().map((d) => d.payload);
    // v9: a datagram carries templates when one of its flowsets has id 0 or 1.
    const hasTemplate = (p: Buffer): boolean => {
      for (let o = 20; o + 4 <= p.length;) {
        const id = p.readUInt16BE(o);
        const len = p.readUInt16BE(o + 2);
        if (id < 256) return true;
        if (len < 4) break;
        o += len;
      }
      return false;
    };
    const dataOnly = all.filter((p) => !hasTemplate(p));
    expect(dataOnly.length).toBeGreaterThan(0);
    expect(dataOnly.length).toBeLessThan(all.length);
    const templateDir = mkdtempSync(join(tmpdir(), 'netsvc-templates-'));
    const first = await listen({ netflow: { listen: '127.0.0.1:0' } }, new SummarySink(), { templateDir });
    await send(await sender(), all, first.addresses().netflow!.port);
    await settle(first, all.length);
    const flowsFirst = first.sourceStats()[0]!.total.flows;
    await first.close();

    const sink = new SummarySink();
    const second = await listen({ netflow: { listen: '127.0.0.1:0' } }, sink, { templateDir });
    await send(await sender(), dataOnly, second.addresses().netflow!.port);
    await settle(second, dataOnly.length);
    const c = second.sourceStats()[0]!.total;
    expect(c.dataWithoutTemplate).toBe(0);
    expect(c.flows).toBeGreaterThan(0);
    // Without the saved templates the same datagrams give nothing.
    const bare = await listen({ netflow: { listen: '127.0.0.1:0' } }, new SummarySink());
    await send(await sender(), dataOnly, bare.addresses().netflow!.port);
    await settle(bare, dataOnly.length);
    expect(bare.sourceStats()[0]!.total.flows).toBe(0);
    expect(flowsFirst).toBe(f.reference().totals.flows);
    await second.close(); // saves the templates once more, before the directory goes
    rmSync(templateDir, { recursive: true, force: true });
  });

  it('saves new templates within about a second, so a crash soon after loses none of them', async () => {
    const f = fixtures.find((x) => x.name === '1/pmacct-v9')!;
    const all = f.datagrams().map((d) => d.payload);
    const hasTemplate = (p: Buffer): boolean => {
      for (let o = 20; o + 4 <= p.length;) {
        const id = p.readUInt16BE(o);
        const len = p.readUInt16BE(o + 2);
        if (id < 256) return true;
        if (len < 4) break;
        o += len;
      }
      return false;
    };
    const templatesOnly = all.filter(hasTemplate);
    const dataOnly = all.filter((p) => !hasTemplate(p));
    const templateDir = mkdtempSync(join(tmpdir(), 'netsvc-templates-'));
    // The first listener is never closed before the second starts: as after kill -9, only what it saved on its own counts.
    const first = await listen({ netflow: { listen: '127.0.0.1:0' } }, new SummarySink(), { templateDir });
    await send(await sender(), templatesOnly, first.addresses().netflow!.port);
    await settle(first, templatesOnly.length);
    await new Promise((r) => setTimeout(r, 1500));
    const second = await listen({ netflow: { listen: '127.0.0.1:0' } }, new SummarySink(), { templateDir });
    await send(await sender(), dataOnly, second.addresses().netflow!.port);
    await settle(second, dataOnly.length);
    const c = second.sourceStats()[0]!.total;
    expect(c.dataWithoutTemplate).toBe(0);
    expect(c.flows).toBeGreaterThan(0);
    await first.close();
    await second.close();
    rmSync(templateDir, { recursive: true, force: true });
  });

  it("holds early data as long and as much as the source's pendingMaxAgeSec and pendingMaxSets say", async () => {
    const f = fixtures.find((x) => x.name === '1/pmacct-v9')!;
    const all = f.datagrams().map((d) => d.payload);
    const hasTemplate = (p: Buffer): boolean => {
      for (let o = 20; o + 4 <= p.length;) {
        const len = p.readUInt16BE(o + 2);
        if (p.readUInt16BE(o) < 256) return true;
        if (len < 4) break;
        o += len;
      }
      return false;
    };
    const dataOnly = all.filter((p) => !hasTemplate(p));
    const withTemplates = all.filter(hasTemplate);
    expect(dataOnly.length).toBeGreaterThan(1);
    const l = await listen(
      { short: { listen: '127.0.0.1:0', pendingMaxAgeSec: 1 }, few: { listen: '127.0.0.1:0', pendingMaxSets: 1 } },
      new SummarySink(),
    );
    const s = await sender();
    const ports = l.addresses();
    await send(s, dataOnly, ports.short!.port);
    await send(s, dataOnly, ports.few!.port);
    await settle(l, 2 * dataOnly.length);
    await new Promise((r) => setTimeout(r, 1200));
    await send(s, withTemplates, ports.short!.port);
    await settle(l, 2 * dataOnly.length + withTemplates.length);
    const [short, few] = l.sourceStats().map((x) => x.total);
    // Held longer than 1 s: dropped when the template came, none decoded late.
    expect(short!.pendingBuffered).toBeGreaterThan(1);
    expect(short!.pendingExpired).toBe(short!.pendingBuffered);
    expect(short!.pendingDecoded).toBe(0);
    // Room for one held set: every earlier one was pushed out.
    expect(few!.pendingDropped).toBe(few!.pendingBuffered - 1);
  });

  it('fails to start on a port in use and leaves nothing bound', async () => {
    const taken = await sender();
    const port = taken.address().port;
    const free = await freeUdpPort();
    const l = make(
      { first: { listen: `127.0.0.1:${free}` }, second: { listen: `127.0.0.1:${port}` } },
      { sink: new SummarySink() },
      {},
    );
    const err = await l.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenerBindError);
    // It says what holds the port and which setting moves the source.
    expect((err as Error).message).toBe(
      `cannot listen on 127.0.0.1:${port}: the port is in use (another collector, nfcapd or a second netsvc, holds it); ` +
        'stop that one, or set flowSources.second.listen (NETSVC_FLOW_SOURCES__SECOND__LISTEN) to another port',
    );
    // The first socket was closed again: its port can be bound.
    const probe = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.bind(free, '127.0.0.1', () => resolve());
    });
    probe.close();
  });
});

describe('flow listener, worker thread, handing batches over', () => {
  it('gives a sink that can take them the decoded buffers of full batches as they are, and copies only small ones', async () => {
    const summary = new SummarySink();
    const seen: { how: 'take' | 'write'; rows: number; room: number }[] = [];
    const sink: FlowSink = {
      write(source, batch) {
        seen.push({ how: 'write', rows: batch.length, room: batch.capacity });
        summary.write(source, batch);
      },
      take(source, batch) {
        seen.push({ how: 'take', rows: batch.length, room: batch.capacity });
        summary.write(source, batch);
      },
    };
    // Batches of 2048 rows (room for 4096); a long flush delay so only a full batch or idle() sends one.
    const l = createThreadedFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink },
      { statsEveryMs: 20, batchRows: 2048, flushDelayMs: 60_000 },
    );
    open.push(l);
    await l.start();
    const payloads = v9.datagrams().map((d) => d.payload);
    const loops = 6;
    for (let k = 0; k < loops; k++) await send(await sender(), payloads, l.addresses().netflow!.port);
    await settle(l, payloads.length * loops);
    const ref = v9.reference().totals;
    expect(summary.summary('netflow')).toMatchObject({
      flows: ref.flows * loops,
      bytes: ref.bytes * loops,
      packets: ref.packets * loops,
    });
    const full = seen.filter((b) => b.rows >= 2048);
    // The batches seen, should none be full (CI saw this once under load and it did not recur).
    expect(full.length, JSON.stringify(seen)).toBeGreaterThan(0);
    for (const b of full) expect(b).toMatchObject({ how: 'take', room: 4096 });
    // What idle() flushed at the end is a few rows: copied out to exactly their size.
    const last = seen[seen.length - 1]!;
    expect(last.rows).toBeLessThan(2048);
    expect(last.room).toBe(last.rows);
  });
});

describe('flow listener, worker thread, two sockets held back by the in-flight bound', () => {
  it("lets every socket's batches through once the sink catches up, and idles and closes", async () => {
    const rows: Record<string, number> = {};
    const summary = new SummarySink();
    // A sink slower than the datagrams, and room for one row in flight: both sockets' writes wait.
    const sink: FlowSink = {
      async write(source, batch) {
        await new Promise((r) => setTimeout(r, 30));
        rows[source] = (rows[source] ?? 0) + batch.length;
        summary.write(source, batch);
      },
    };
    const l = createThreadedFlowListeners(
      { a: { listen: '127.0.0.1:0' }, b: { listen: '127.0.0.1:0' } },
      { sink },
      { statsEveryMs: 20, maxInFlightRows: 1, flushDelayMs: 0 },
    );
    open.push(l);
    await l.start();
    const five = v5
      .datagrams()
      .map((d) => d.payload)
      .slice(0, 4);
    const s = await sender();
    for (const p of five) {
      await send(s, [p], l.addresses().a!.port);
      await send(s, [p], l.addresses().b!.port);
    }
    const flows = five.reduce((n, p) => n + p.readUInt16BE(2), 0);
    const timeout = new Promise<string>((r) => setTimeout(() => r('timed out'), 4000));
    expect(await Promise.race([settle(l, five.length * 2).then(() => 'idle'), timeout])).toBe('idle');
    expect(rows).toEqual({ a: flows, b: flows });
    expect(await Promise.race([l.close().then(() => 'closed'), timeout])).toBe('closed');
  });
});

describe('flow listener, worker thread, the thread dies', () => {
  it('logs it, tells onFailure, and idle() and close() return instead of waiting for it forever', async () => {
    const errors: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (_o: object, msg?: string) => errors.push(msg ?? '') };
    const l = createThreadedFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink: new SummarySink(), logger },
      { statsEveryMs: 20, faultInjection: 'crash' },
    );
    open.push(l);
    const failures: Error[] = [];
    l.onFailure((err) => failures.push(err));
    await l.start();
    const deadline = Date.now() + 4000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(errors).toContain('flow ingest worker failed; flow listeners stopped');
    // Whoever runs the listeners hears of it (serve stops, for its supervisor to restart it).
    expect(failures.map((e) => e.message)).toEqual(['injected crash of the flow ingest thread']);
    const timeout = new Promise<string>((r) => setTimeout(() => r('timed out'), 3000));
    expect(await Promise.race([l.idle().then(() => 'idle'), timeout])).toBe('idle');
    expect(await Promise.race([l.close().then(() => 'closed'), timeout])).toBe('closed');
  });
});

describe.skipIf(process.platform !== 'linux')('flow listener, receive buffer', () => {
  const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
  const warned = async (receiveBuffer: number): Promise<object[]> => {
    const warns: object[] = [];
    const logger = {
      info: () => {},
      warn: (o: object, m?: string) => void (m?.startsWith('kernel granted a smaller UDP receive buffer') && warns.push(o)),
      error: () => {},
    };
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0', receiveBuffer } },
      { sink: new SummarySink(), logger },
      { socketThread: true },
    );
    open.push(l);
    await l.start();
    return warns;
  };

  it('warns when the kernel caps the buffer at net.core.rmem_max (it reports twice what it set)', async () => {
    expect(await warned(rmemMax * 2)).toEqual([
      expect.objectContaining({ requested: rmemMax * 2, granted: rmemMax, fix: `sysctl -w net.core.rmem_max=${rmemMax * 2}` }),
    ]);
  });

  it('says nothing when it got what it asked for', async () => {
    expect(await warned(Math.min(rmemMax, 1024 * 1024))).toEqual([]);
  });
});

describe('flow listener with a socket thread, the socket thread dies', () => {
  it('starts it again on the same port, keeps what it had queued, and counts the restart', async () => {
    const lines: string[] = [];
    const logger = {
      info: (_o: object, m?: string) => lines.push(m ?? ''),
      warn: () => {},
      error: (_o: object, m?: string) => lines.push(m ?? ''),
    };
    const summary = new SummarySink();
    const payloads = v9.datagrams().map((d) => d.payload);
    // The thread dies once it took the capture's datagrams: they are in the ring, and decoded all the same.
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink: summary, logger },
      { socketThread: true, faultInjection: `socket-crash:${payloads.length}` },
    );
    open.push(l);
    await l.start();
    const port = l.addresses().netflow!.port;
    await send(await sender(), payloads, port);
    const deadline = Date.now() + 5000;
    while (!lines.includes('flow socket thread restarted') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(lines).toContain('flow socket thread died; its sockets are read again once it is restarted');
    expect(lines).toContain('flow socket thread restarted');
    expect(l.addresses().netflow!.port).toBe(port);
    expect(l.socketStats()[0]!.readerRestarts).toBe(1);
    // After: the same port is read again.
    await send(await sender(), payloads, port);
    await settle(l, payloads.length * 2);
    expect(summary.summary().flows).toBe(v9.reference().totals.flows * 2);
    const timeout = new Promise<string>((r) => setTimeout(() => r('timed out'), 3000));
    expect(await Promise.race([l.close().then(() => 'closed'), timeout])).toBe('closed');
    expect(await portFree(port)).toBe(true);
  });

  it.skipIf(process.platform !== 'linux')(
    'worker thread: threadId() names the restarted socket thread, not the dead one',
    async () => {
      const l = createThreadedFlowListeners(
        { netflow: { listen: '127.0.0.1:0' } },
        { sink: new SummarySink() },
        { statsEveryMs: 10, warmUp: false, faultInjection: 'socket-crash:1', restartDelayMs: 20 },
      );
      open.push(l);
      await l.start();
      const first = l.threadId()!;
      expect(existsSync(`/proc/self/task/${first}`)).toBe(true);
      await send(await sender(), [v5.datagrams()[0]!.payload], l.addresses().netflow!.port);
      const deadline = Date.now() + 5000;
      while ((l.socketStats()[0]?.readerRestarts ?? 0) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(l.socketStats()[0]!.readerRestarts).toBe(1);
      const now = l.threadId()!;
      expect(now).not.toBe(first);
      expect(existsSync(`/proc/self/task/${now}`)).toBe(true);
    },
  );

  it('a close() while the restart waits stops it for good', async () => {
    const lines: string[] = [];
    const logger = {
      info: (_o: object, m?: string) => lines.push(m ?? ''),
      warn: () => {},
      error: (_o: object, m?: string) => lines.push(m ?? ''),
    };
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink: new SummarySink(), logger },
      { socketThread: true, faultInjection: 'socket-crash:1' },
    );
    open.push(l);
    await l.start();
    const port = l.addresses().netflow!.port;
    await send(await sender(), [v5.datagrams()[0]!.payload], port);
    const deadline = Date.now() + 5000;
    while (!lines.some((m) => m.startsWith('flow socket thread died')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(lines.some((m) => m.startsWith('flow socket thread died'))).toBe(true);
    expect(l.socketStats()[0]!.reader).toBe('none');
    await l.close();
    await new Promise((r) => setTimeout(r, 400)); // past the 250 ms restart delay
    expect(lines).not.toContain('flow socket thread restarting');
    expect(await portFree(port)).toBe(true);
  });

  it.each([
    [
      'in-thread',
      (o: Record<string, unknown>, d: FlowListenerDeps) =>
        createFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, d, { socketThread: true, ...o }),
    ],
    // From the ingest worker the failure crosses to the main thread.
    [
      'worker thread',
      (o: Record<string, unknown>, d: FlowListenerDeps) =>
        createThreadedFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, d, { statsEveryMs: 10, warmUp: false, ...o }),
    ],
  ] as const)(
    '%s: gives up after five failed restarts (its port taken meanwhile) and says so through onFailure',
    async (_name, make) => {
      const lines: string[] = [];
      const logger = {
        info: (_o: object, m?: string) => lines.push(m ?? ''),
        warn: () => {},
        error: (_o: object, m?: string) => lines.push(m ?? ''),
      };
      const l = make({ faultInjection: 'socket-crash:1', restartDelayMs: 20 }, { sink: new SummarySink(), logger });
      open.push(l);
      const failures: Error[] = [];
      l.onFailure((err) => failures.push(err));
      await l.start();
      const port = l.addresses().netflow!.port;
      await send(await sender(), [v5.datagrams()[0]!.payload], port);
      let deadline = Date.now() + 5000;
      while (!lines.some((m) => m.startsWith('flow socket thread died')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 1));
      // Within the 20 ms pause, someone else binds the port.
      const squatter = createSocket('udp4');
      sockets.push(squatter);
      await new Promise<void>((ok) => squatter.bind(port, '127.0.0.1', () => ok()));
      deadline = Date.now() + 5000;
      while (failures.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(failures.map((e) => e.message)).toEqual([
        expect.stringMatching(/^flow socket thread could not be restarted \(5 attempts\): cannot listen on 127\.0\.0\.1:\d+/),
      ]);
      expect(lines.filter((m) => m === 'flow socket thread restarting')).toHaveLength(5);
      deadline = Date.now() + 2000; // the worker's counters come every 10 ms
      while (l.socketStats()[0]!.reader !== 'none' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(l.socketStats()[0]!.reader).toBe('none');
      // A subscriber that comes late still hears of it.
      const late: Error[] = [];
      l.onFailure((err) => late.push(err));
      expect(late).toEqual(failures);
    },
  );
});

describe('flow listener warm-up', () => {
  it.each(VARIANTS)('%s: decodes synthetic datagrams at start and leaves no trace of them', async (_name, make) => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-warm-'));
    try {
      const seen: number[] = [];
      const sink: FlowSink = { write: (_s, b) => void seen.push(b.length) };
      const l = make({ netflow: { listen: '127.0.0.1:0' } }, { sink }, { warmUp: true, templateDir: dir });
      open.push(l);
      await l.start();
      await l.idle();
      const st = l.sourceStats()[0]!;
      expect(st.total).toMatchObject({ packets: 0, flows: 0, templatesAdded: 0 });
      expect(st.exporters).toEqual({});
      expect(seen).toEqual([]);
      // Real traffic after it decodes as without it.
      await send(
        await sender(),
        v9.datagrams().map((d) => d.payload),
        l.addresses().netflow!.port,
      );
      await settle(l, v9.datagrams().length);
      expect(l.sourceStats()[0]!.total).toMatchObject({ flows: v9.reference().totals.flows, templatesAdded: expect.any(Number) });
      await l.close();
      expect(Object.keys(l.sourceStats()[0]!.exporters)).toEqual(['127.0.0.1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('flow listener with a socket thread, warm-up', () => {
  it('warms up through the socket thread and the rings without counting the warm-up as traffic', async () => {
    const infos: [object, string | undefined][] = [];
    const logger = { info: (o: object, m?: string) => infos.push([o, m]), warn: () => {}, error: () => {} };
    const summary = new SummarySink();
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink: summary, logger },
      { warmUp: true, socketThread: true },
    );
    open.push(l);
    await l.start();
    const warm = infos.find(([, m]) => m === 'flow socket thread warmed up')?.[0] as
      { sent: number; received: number; flows: number } | undefined;
    expect(warm?.received).toBeGreaterThan(100);
    expect(warm?.flows).toBeGreaterThan(1000);
    expect(l.sourceStats()[0]).toMatchObject({ received: 0, total: expect.objectContaining({ flows: 0, packets: 0 }) });
    expect(summary.summary().flows).toBe(0);
    // Nor as a backlog: the warm-up went through the first ring.
    expect(l.socketStats()[0]!.queueHighWater).toBe(0);
    // Real traffic afterwards is decoded as usual.
    const payloads = v9.datagrams().map((d) => d.payload);
    await send(await sender(), payloads, l.addresses().netflow!.port);
    await settle(l, payloads.length);
    expect(summary.summary().flows).toBe(v9.reference().totals.flows);
  });

  it('a close() while the socket thread warms up waits for it and leaves no socket open', async () => {
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { sink: new SummarySink() },
      { warmUp: true, socketThread: true },
    );
    const started = l.start();
    await new Promise((r) => setTimeout(r, 30)); // inside the socket thread's warm-up
    await l.close();
    await started;
    const port = l.addresses().netflow?.port;
    if (port !== undefined) expect(await portFree(port)).toBe(true);
  });

  it('rejects with ListenerBindError when the socket thread cannot bind, and after a second start decodes without being asked', async () => {
    const taken = await sender();
    const port = taken.address().port;
    const summary = new SummarySink();
    // Source a binds and is warmed up (its ring polled) before b fails: the retry must watch its ring again.
    const l = createFlowListeners(
      { a: { listen: '127.0.0.1:0' }, b: { listen: `127.0.0.1:${port}` } },
      { sink: summary },
      { socketThread: true, warmUp: true, flushDelayMs: 1 },
    );
    open.push(l);
    const err = await l.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenerBindError);
    expect((err as Error).message).toMatch(
      /^cannot listen on 127\.0\.0\.1:\d+: the port is in use .* set flowSources\.b\.listen \(NETSVC_FLOW_SOURCES__B__LISTEN\) to another port$/,
    );
    expect(l.threadId()).toBeUndefined();
    await new Promise<void>((r) => taken.close(() => r()));
    sockets.splice(sockets.indexOf(taken), 1);
    await l.start();
    expect(l.addresses().b!.port).toBe(port);
    const payloads = v5.datagrams().map((d) => d.payload);
    await send(await sender(), payloads, l.addresses().a!.port);
    // No idle(): decoding has to happen on its own.
    const deadline = Date.now() + 5000;
    while (summary.summary().flows < v5.reference().totals.flows && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(summary.summary().flows).toBe(v5.reference().totals.flows);
  });
});

describe('flow listener, decoding slower than datagrams arrive', () => {
  // A decoder that takes 1 ms per datagram, as code not yet optimised after a start can be.
  const slow = (): FlowDecoder => {
    const real = createFlowDecoder();
    return {
      ...real,
      decode(datagram, exporter, receivedMs, out) {
        const until = performance.now() + 1;
        while (performance.now() < until);
        return real.decode(datagram, exporter, receivedMs, out);
      },
    };
  };

  async function burst(
    options: Record<string, unknown>,
  ): Promise<{ highWater: number; flows: number; packets: number; queueDrops: number }> {
    const summary = new SummarySink();
    const l = createFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, { sink: summary, createDecoder: slow }, options);
    open.push(l);
    await l.start();
    const payloads = v9.datagrams().map((d) => d.payload);
    const s = await sender();
    const port = l.addresses().netflow!.port;
    // Ten loops of the capture sent at once: 200 datagrams wait in the kernel buffer.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        Promise.all(payloads.map((p) => new Promise<void>((r) => s.send(p, port, '127.0.0.1', () => r())))),
      ),
    );
    await settle(l, payloads.length * 10);
    return {
      highWater: l.socketStats()[0]!.queueHighWater,
      flows: summary.summary().flows,
      packets: l.sourceStats()[0]!.total.packets,
      queueDrops: l.sourceStats()[0]!.queueDrops,
    };
  }

  /** Every datagram of the burst was counted and every flow decoded. */
  const expectAllDecoded = (r: { packets: number; flows: number }): void => {
    expect(r.packets).toBe(v9.datagrams().length * 10);
    expect(r.flows).toBe(v9.reference().totals.flows * 10);
  };

  it('takes the backlog off the socket into its own queue instead of leaving it in the kernel buffer', async () => {
    const r = await burst({});
    // The event loop reads at most 32 datagrams per turn; a longer queue means reads went on between decodes.
    expect(r.highWater).toBeGreaterThan(64);
    expectAllDecoded(r);
  });

  it('without a time slice, decodes a whole chunk between reads and the queue never holds more than one read', async () => {
    const r = await burst({ drainSliceMs: 1e9, backlogDatagrams: 1e9 });
    expect(r.highWater).toBeLessThanOrEqual(32);
  });

  it('stops reading first once the queue is half full: the kernel buffer keeps the rest and nothing is dropped', async () => {
    // A queue of 80: reading first to the end would fill it and drop what the 8 MiB kernel buffer could hold.
    const r = await burst({ drainSliceMs: 1e9, backlogDatagrams: 8, queueDatagrams: 80 });
    expect(r.queueDrops).toBe(0);
    expectAllDecoded(r);
  });

  it('once behind by more than backlogDatagrams, decodes in short turns, so the socket is read first', async () => {
    // No time slice at a steady rate: only the backlog rule can end a turn early here.
    const r = await burst({ drainSliceMs: 1e9, backlogDatagrams: 16 });
    expect(r.highWater).toBeGreaterThan(64);
    expectAllDecoded(r);
  });
});

describe('flow listener, a decode stall while a burst arrives', () => {
  // The decoder stops the thread for 500 ms at the first datagram, as a long compile or GC pause can.
  const stallingOnce = (): FlowDecoder => {
    const real = createFlowDecoder();
    let stalled = false;
    return {
      ...real,
      decode(datagram, exporter, receivedMs, out) {
        if (!stalled) {
          stalled = true;
          const until = performance.now() + 500;
          while (performance.now() < until);
        }
        return real.decode(datagram, exporter, receivedMs, out);
      },
    };
  };

  /**
   * Sends `loops` × the v9 capture from another thread, one capture (20 datagrams) per ms: within the
   * stall, and slow enough for a thread that only reads (a sender at full speed outruns any reader).
   */
  async function burstFromAnotherThread(port: number, loops: number): Promise<number> {
    const payloads = v9.datagrams().map((d) => d.payload);
    const w = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const s = require('node:dgram').createSocket('udp4');
       (async () => {
         for (let l = 0; l < workerData.loops; l++) {
           await Promise.all(workerData.payloads.map((p) => new Promise((ok) => s.send(p, workerData.port, '127.0.0.1', ok))));
           await new Promise((ok) => setTimeout(ok, 1));
         }
         s.close();
         parentPort.postMessage('sent');
       })();`,
      { eval: true, workerData: { payloads, loops, port } },
    );
    await new Promise((ok) => w.once('message', ok));
    await w.terminate();
    return payloads.length * loops;
  }

  async function received(
    socketThread: boolean,
  ): Promise<{ sent: number; received: number; flows: number; kernelDrops: number | undefined }> {
    const summary = new SummarySink();
    // A kernel buffer of about 1 800 datagrams (Linux counts about 2.3 KB per 1.4 KB datagram): the burst of 4 000, unread, overflows it.
    const l = createFlowListeners(
      { netflow: { listen: '127.0.0.1:0', receiveBuffer: 2 * 1024 * 1024 } },
      { sink: summary, createDecoder: stallingOnce },
      { socketThread },
    );
    open.push(l);
    await l.start();
    // The burst sent below fits this buffer with a margin for a busy machine.
    expect(l.socketStats()[0]!.receiveBufferGranted, 'this test needs net.core.rmem_max >= 2 MiB').toBeGreaterThanOrEqual(
      2 * 1024 * 1024,
    );
    const sent = await burstFromAnotherThread(l.addresses().netflow!.port, 200);
    await new Promise((r) => setTimeout(r, 200));
    await l.idle();
    return {
      sent,
      received: l.sourceStats()[0]!.received,
      flows: summary.summary().flows,
      kernelDrops: l.socketStats()[0]!.kernelDrops,
    };
  }

  it('with a socket thread, receives and decodes every datagram: the stall only delays decoding', async () => {
    const r = await received(true);
    expect(r.received).toBe(r.sent);
    if (process.platform === 'linux') expect(r.kernelDrops).toBe(0);
    expect(r.flows).toBe(v9.reference().totals.flows * 200);
  });

  it('reading on the decoding thread, loses what overflows the kernel buffer during the stall, and counts it', async () => {
    const r = await received(false);
    expect(r.received).toBeLessThan(r.sent);
    // Every datagram that did not arrive was dropped by the kernel at this socket, and is counted.
    if (process.platform === 'linux') expect(r.kernelDrops).toBe(r.sent - r.received);
  });
});

describe('flow listener, a decoder that throws', () => {
  it('counts the datagram, logs once, and keeps decoding the following datagrams', async () => {
    const payloads = v5.datagrams().map((d) => d.payload);
    const bad = new Set([0, 2].map((i) => payloads[i]!.toString('hex')));
    const summary = new SummarySink();
    const errors: object[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (o: object) => errors.push(o) };
    const createDecoder = (): FlowDecoder => {
      const real = createFlowDecoder();
      return {
        ...real,
        decode(datagram, exporter, receivedMs, out) {
          if (bad.has(datagram.toString('hex'))) throw new TypeError('injected decoder bug');
          return real.decode(datagram, exporter, receivedMs, out);
        },
      };
    };
    const l = createFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, { sink: summary, logger, createDecoder });
    open.push(l);
    await l.start();
    await send(await sender(), payloads, l.addresses().netflow!.port);
    await settle(l, payloads.length);
    const st = l.sourceStats()[0]!;
    expect(st.decoderErrors).toBe(2);
    expect(errors).toEqual([expect.objectContaining({ source: 'netflow', err: expect.any(TypeError) })]);
    const lost = [0, 2].reduce((n, i) => n + payloads[i]!.readUInt16BE(2), 0); // v5 header: record count
    expect(summary.summary().flows).toBe(v5.reference().totals.flows - lost);
  });
});

describe.each(VARIANTS)('flow listener, %s, a failing hand-over or expiry step', (_name, make) => {
  const flowsOf = (p: Buffer): number => p.readUInt16BE(2); // v5 header: record count

  async function withFault(fault: string, options: Record<string, unknown>): Promise<FlowListeners> {
    const l = make({ netflow: { listen: '127.0.0.1:0' } }, { sink: summary, logger }, { faultInjection: fault, ...options });
    open.push(l);
    await l.start();
    return l;
  }
  let summary = new SummarySink();
  let errors: object[] = [];
  const logger = { info: () => {}, warn: () => {}, error: (o: object) => errors.push(o) };
  beforeEach(() => {
    summary = new SummarySink();
    errors = [];
  });

  it('counts a failed hand-over to the sink, loses only that batch, and decodes what comes after', async () => {
    const payloads = v5.datagrams().map((d) => d.payload);
    const l = await withFault('flush:1', {});
    const s = await sender();
    const port = l.addresses().netflow!.port;
    await send(s, payloads.slice(0, 1), port);
    await settle(l, 1);
    await send(s, payloads.slice(1), port);
    await settle(l, payloads.length);
    expect(l.sourceStats()[0]).toMatchObject({ sinkErrors: 1, sinkLostFlows: flowsOf(payloads[0]!) });
    expect(errors).toContainEqual(expect.objectContaining({ source: 'netflow', lostFlows: flowsOf(payloads[0]!) }));
    expect(summary.summary().flows).toBe(v5.reference().totals.flows - flowsOf(payloads[0]!));
  });

  it('counts failed expiry runs and keeps decoding', async () => {
    const payloads = v5.datagrams().map((d) => d.payload);
    const l = await withFault('expire:2', { expireEveryMs: 1 });
    const s = await sender();
    const port = l.addresses().netflow!.port;
    await send(s, payloads.slice(0, 1), port);
    await settle(l, 1);
    await new Promise((r) => setTimeout(r, 50)); // expiry runs (and fails) while idle
    await send(s, payloads.slice(1), port);
    await settle(l, payloads.length);
    expect(l.sourceStats()[0]!.ingestErrors).toBe(2);
    expect(errors).toContainEqual(expect.objectContaining({ source: 'netflow', step: 'expire' }));
    expect(summary.summary().flows).toBe(v5.reference().totals.flows);
  });
});
