/**
 * The flow socket thread (see datagram-ring.ts for why it exists):
 *
 *   this thread                        decode thread (udp-listener.ts)
 *   recv → claim → ring ──shared memory──▶ decode → batch → sink
 *
 * It binds the sockets of a socket plan, takes each datagram, finds the
 * flow source that claims its exporter and appends it to the socket's ring;
 * when a ring is full the datagram is counted as a queue drop. It decodes
 * nothing, so nothing but the CPU keeps it from reading. Counters live in
 * shared memory (SocketThreadCounters), read by the decode thread.
 *
 * With `warmUp` it first receives the synthetic datagrams (synthetic.ts)
 * over loopback on a throwaway socket, through the same code, into the
 * first ring as source WARM_UP_SOURCE, which the decode thread decodes and
 * throws away: the whole path is optimised before the first real datagram.
 */
import type { RemoteInfo, Socket } from 'node:dgram';
import { parentPort, workerData } from 'node:worker_threads';
import { DatagramRingWriter, type DatagramRingMemory } from './datagram-ring.js';
import { SocketThreadCounters, WARM_UP_SOURCE, type SocketThreadInput, type SocketThreadMessage, type SocketThreadSocket } from './socket-thread-handle.js';
import { sendSyntheticOverLoopback, WARM_UP_ROUNDS } from './loopback-warm-up.js';
import { LogThrottle } from './log-throttle.js';
import { bindFlowSocket } from './udp-socket.js';
import { currentThreadId } from './thread-id.js';

class Receiver {
  readonly claims: Map<string, number>;
  readonly writer: DatagramRingWriter;
  constructor(
    readonly listen: string,
    readonly socketIdx: number,
    claims: [string, number][],
    readonly defaultSource: number,
    ring: DatagramRingMemory,
    private readonly counters: SocketThreadCounters,
    private readonly rateLog: (key: string, obj: object, msg: string) => void,
  ) {
    this.claims = new Map(claims);
    this.writer = new DatagramRingWriter(ring);
  }

  onMessage(msg: Buffer, rinfo: RemoteInfo): void {
    const time = Date.now();
    let src = this.claims.get(rinfo.address);
    const slots = this.counters.slots;
    if (src === undefined) {
      if (this.defaultSource < 0) {
        slots[this.counters.unclaimedSlot(this.socketIdx)]!++;
        this.rateLog(`unclaimed:${this.listen}:${rinfo.address}`, { listen: this.listen, exporter: rinfo.address }, 'datagram from an exporter no flow source claims; dropped');
        return;
      }
      src = this.defaultSource;
    }
    slots[this.counters.receivedSlot(src)]!++;
    if (!this.writer.push(msg, rinfo.address, time, src)) {
      const d = this.counters.dropsSlot(src);
      slots[d]!++;
      if (src !== WARM_UP_SOURCE) this.rateLog(`drop:${src}`, { source: input.sourceNames[src], queueDrops: slots[d] }, 'flow queue full: datagrams dropped');
    }
  }
}

const port = parentPort!;
const input = workerData as SocketThreadInput;
const post = (m: SocketThreadMessage): void => port.postMessage(m);
const counters = new SocketThreadCounters(input.counters, input.sourceNames.length);
const throttle = new LogThrottle(input.logEveryMs);
function rateLog(key: string, obj: object, msg: string): void {
  if (throttle.allow(key, Date.now())) post({ t: 'log', level: 'warn', obj, msg });
}

const sockets: Socket[] = [];

function bind(s: SocketThreadSocket, receiver: Receiver): Promise<Socket> {
  return bindFlowSocket(
    { type: s.type, host: s.host, port: s.port, recvBufferSize: s.requestedBuffer },
    (msg, rinfo) => receiver.onMessage(msg, rinfo),
    (err) => post({ t: 'log', level: 'error', obj: { err: { name: err.name, message: err.message }, listen: s.listen }, msg: 'flow socket error' }),
  );
}

/** Receives the synthetic datagrams over loopback into the first ring (as WARM_UP_SOURCE), within the budget. */
async function warmUp(first: SocketThreadSocket): Promise<{ sent: number; received: number }> {
  const receiver = new Receiver('warm-up', 0, [], WARM_UP_SOURCE, first.ring, counters, () => undefined);
  const received = (): number => counters.received(WARM_UP_SOURCE);
  const base = received();
  const deadline = performance.now() + input.warmUpBudgetMs;
  let sent = 0;
  let socket: Socket | undefined;
  try {
    socket = await bind({ ...first, listen: '127.0.0.1:0', host: '127.0.0.1', port: 0, type: 'udp4', requestedBuffer: 4 * 1024 * 1024 }, receiver);
    sent = await sendSyntheticOverLoopback(socket.address().port, () => received() - base, Date.now(), WARM_UP_ROUNDS, deadline);
  } catch {
    // No loopback: no warm-up.
  } finally {
    socket?.close();
  }
  return { sent, received: received() - base };
}

/** Resolves when the decode thread says `bind` (it has decoded the warm-up). */
let bindNow: () => void = () => {};
const mayBind = new Promise<void>((resolve) => (bindNow = resolve));

async function start(): Promise<void> {
  if (input.warmUp && input.sockets.length > 0) {
    post({ t: 'warmed', ...(await warmUp(input.sockets[0]!)) });
    await mayBind;
  }
  const bound: { address: string; port: number; granted: number }[] = [];
  for (const [i, s] of input.sockets.entries()) {
    const receiver = new Receiver(s.listen, i, s.claims, s.defaultSource, s.ring, counters, rateLog);
    let socket: Socket;
    try {
      socket = await bind(s, receiver);
    } catch (err) {
      for (const open of sockets) open.close();
      post({ t: 'failed', message: `cannot listen on ${s.listen}: ${(err as Error).message}`, listen: s.listen });
      port.close();
      return;
    }
    sockets.push(socket);
    const a = socket.address();
    bound.push({ address: a.address, port: a.port, granted: socket.getRecvBufferSize() });
  }
  post({ t: 'bound', tid: currentThreadId(), sockets: bound });
}

// A close that comes during the start (the warm-up takes up to a second) waits for it, so
// no socket is bound after the close and the thread ends.
const started = start();
port.on('message', (m: { t: 'close' | 'bind' }) => {
  if (m.t === 'bind') return bindNow();
  if (m.t !== 'close') return;
  void started.then(() => {
    let open = sockets.length;
    const done = (): void => {
      post({ t: 'closed' });
      port.close();
    };
    if (open === 0) return done();
    for (const s of sockets.splice(0)) s.close(() => --open === 0 && done());
  });
});
