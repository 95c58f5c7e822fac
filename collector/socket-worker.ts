/**
 * The socket thread of the threaded flow listeners: binds the flow sockets
 * and does as little as possible per datagram — timestamp, find the source
 * that claims the exporter, copy into the shared ring (shared-ring.ts) —
 * so the kernel's receive buffer is emptied as fast as Node can read it.
 * Decoding happens in the ingest worker that started this thread; when it
 * falls behind, the ring (not the kernel buffer) absorbs the burst, and a
 * full ring is a counted queue drop.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';
import ipaddr from 'ipaddr.js';
import { RingProducer, type RingLayout } from './shared-ring.js';
import { parseListen } from './udp-listener.js';

/** What the ingest worker passes to this thread. */
export interface SocketWorkerInput {
  sab: SharedArrayBuffer;
  layout: RingLayout;
  sourceNames: string[];
  sockets: { listen: string; requestedBuffer: number; claims: [string, number][]; defaultSource: number }[];
  logEveryMs: number;
  /** Datagrams waiting per socket, at most (the ring also bounds bytes). */
  queueDatagrams: number;
}

/** Messages from this thread. */
export type SocketWorkerMessage =
  | { t: 'bound'; sockets: { address: string; port: number; granted: number }[] }
  | { t: 'failed'; name: string; message: string; listen: string }
  | { t: 'log'; level: 'info' | 'warn' | 'error'; obj: object; msg: string }
  | { t: 'closed' };

const port = parentPort!;
const input = workerData as SocketWorkerInput;
const ring = new RingProducer(input.sab, input.layout);
const post = (m: SocketWorkerMessage): void => port.postMessage(m);
const lastLog = new Map<string, number>();

function rateLog(key: string, obj: object, msg: string): void {
  const t = Date.now();
  const last = lastLog.get(key);
  if (last !== undefined && t - last < input.logEveryMs) return;
  if (lastLog.size > 10_000) lastLog.clear();
  lastLog.set(key, t);
  post({ t: 'log', level: 'warn', obj, msg });
}

function bytes16(address: string): Uint8Array {
  const parsed = ipaddr.process(address);
  const out = new Uint8Array(16);
  if (parsed.kind() === 'ipv4') {
    out[10] = 0xff;
    out[11] = 0xff;
    out.set(parsed.toByteArray(), 12);
  } else {
    out.set(parsed.toByteArray(), 0);
  }
  return out;
}

const stats = ring.stats;
const sockets: Socket[] = [];

function onMessage(g: number, claims: Map<string, number>, defaultSource: number, msg: Buffer, rinfo: RemoteInfo): void {
  const time = Date.now();
  const src = claims.get(rinfo.address) ?? defaultSource;
  if (src < 0) {
    stats[ring.socketStat(g, 'unclaimed')]!++;
    rateLog(`unclaimed:${g}:${rinfo.address}`, { listen: input.sockets[g]!.listen, exporter: rinfo.address }, 'datagram from an exporter no flow source claims; dropped');
    return;
  }
  stats[ring.sourceStat(src, 'received')]!++;
  const id = ring.exporterId(rinfo.address, () => bytes16(rinfo.address));
  const waiting = stats[ring.socketStat(g, 'produced')]! - stats[ring.socketStat(g, 'consumed')]!;
  if (id < 0 || waiting >= input.queueDatagrams || !ring.push(msg, src, g, id, time)) {
    const name = input.sourceNames[src]!;
    const drops = ++stats[ring.sourceStat(src, 'queueDrops')]!;
    rateLog(`drop:${src}`, { source: name, queueDrops: drops }, id < 0 ? 'too many exporter addresses: datagram dropped' : 'flow queue full: datagrams dropped');
    return;
  }
  const produced = ++stats[ring.socketStat(g, 'produced')]!;
  const depth = produced - stats[ring.socketStat(g, 'consumed')]!;
  if (depth > stats[ring.socketStat(g, 'highWater')]!) stats[ring.socketStat(g, 'highWater')] = depth;
}

async function bindAll(): Promise<{ address: string; port: number; granted: number }[]> {
  const out: { address: string; port: number; granted: number }[] = [];
  for (let g = 0; g < input.sockets.length; g++) {
    const plan = input.sockets[g]!;
    const claims = new Map(plan.claims);
    const { host, port: p, type } = parseListen(plan.listen);
    const socket = createSocket({ type, recvBufferSize: plan.requestedBuffer, ipv6Only: false });
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        socket.close();
        reject(Object.assign(new Error(`cannot listen on ${plan.listen}: ${err.message}`), { name: 'ListenerBindError', listen: plan.listen }));
      };
      socket.once('error', onError);
      socket.bind(p, host, () => {
        socket.off('error', onError);
        socket.on('error', (err) => post({ t: 'log', level: 'error', obj: { listen: plan.listen, err: { name: err.name, message: err.message } }, msg: 'flow socket error' }));
        resolve();
      });
    });
    socket.on('message', (msg, rinfo) => onMessage(g, claims, plan.defaultSource, msg, rinfo));
    sockets.push(socket);
    const a = socket.address();
    out.push({ address: a.address, port: a.port, granted: socket.getRecvBufferSize() });
  }
  return out;
}

async function closeAll(): Promise<void> {
  await Promise.all(sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
  sockets.length = 0;
}

port.on('message', (m: { t: 'close' }) => {
  if (m.t !== 'close') return;
  void closeAll().then(() => {
    ring.wake();
    post({ t: 'closed' });
    port.close();
  });
});

bindAll().then(
  (bound) => post({ t: 'bound', sockets: bound }),
  async (err: Error & { listen?: string }) => {
    await closeAll();
    post({ t: 'failed', name: err.name, message: err.message, listen: err.listen ?? '' });
    port.close();
  },
);
