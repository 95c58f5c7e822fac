/**
 * The flow socket thread (see datagram-ring.ts for why it exists):
 *
 *   this thread                        decode thread (listeners.ts)
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
import { constants } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { DatagramRingWriter, type DatagramRingMemory } from './datagram-ring.js';
import {
  BatchReader,
  batchRecvLoadError,
  loadBatchRecv,
  MAX_BATCH,
  takeSocketFd,
  type DatagramHandler,
} from '../native/batch-receive.js';
import {
  SocketThreadCounters,
  WARM_UP_SOURCE,
  type SocketReader,
  type SocketThreadBound,
  type SocketThreadInput,
  type SocketThreadMessage,
  type SocketThreadSocket,
} from './socket-thread-handle.js';
import { sendSyntheticOverLoopback, WARM_UP_ROUNDS } from './loopback-warm-up.js';
import { bindFailureMessage } from './listener-errors.js';
import { LogThrottle } from '../../common/log-throttle.js';
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

  /** A datagram from dgram's 'message' event. */
  onMessage(msg: Buffer, rinfo: RemoteInfo): void {
    this.onDatagram(msg, rinfo.address, Date.now());
  }

  /** A datagram (`payload` is valid only during the call: it is copied into the ring). */
  onDatagram(payload: Buffer, exporter: string, time: number): void {
    let src = this.claims.get(exporter);
    const slots = this.counters.slots;
    if (src === undefined) {
      if (this.defaultSource < 0) {
        slots[this.counters.unclaimedSlot(this.socketIdx)]!++;
        this.rateLog(
          `unclaimed:${this.listen}:${exporter}`,
          { listen: this.listen, exporter },
          'datagram from an exporter no flow source claims; dropped',
        );
        return;
      }
      src = this.defaultSource;
    }
    slots[this.counters.receivedSlot(src)]!++;
    if (src !== WARM_UP_SOURCE && --crashIn === 0)
      setImmediate(() => {
        throw new Error('injected crash of the flow socket thread');
      });
    if (!this.writer.push(payload, exporter, time, src)) {
      const d = this.counters.dropsSlot(src);
      slots[d]!++;
      if (src !== WARM_UP_SOURCE)
        this.rateLog(
          `drop:${src}`,
          { source: input.sourceNames[src], queueDrops: slots[d] },
          'flow queue full: datagrams dropped',
        );
    }
  }
}

const port = parentPort!;
const input = workerData as SocketThreadInput;
const post = (m: SocketThreadMessage): void => port.postMessage(m);
const counters = new SocketThreadCounters(input.counters, input.sourceNames.length);
/** Test hook `crash-after:N`: the thread dies of an uncaught error once it has taken N datagrams. */
let crashIn = Number(/^crash-after:(\d+)$/.exec(input.faultInjection ?? '')?.[1] ?? -1);
// The thread's own clock: it runs no timing logic a test must drive (the listeners' clock stays on the decode thread).
const throttle = new LogThrottle(input.logEveryMs, Date.now);
function rateLog(key: string, obj: object, msg: string, level: 'warn' | 'error' = 'warn'): void {
  if (throttle.allow(key)) post({ t: 'log', level, obj, msg });
}

const { EBADF, ENOTSOCK } = constants.errno;

/** How long one turn of batch reads runs before the thread looks at its messages (close, bind), ms. */
const TURN_MS = 20;
/** The same while the thread has work of its own (the warm-up's sender runs on it), ms. */
const SHORT_TURN_MS = 1;
/** After a read that did not fill a batch, how long to let the next one gather (fewer system calls per datagram; the kernel buffer holds them), ms. */
const GATHER_MS = 1;

/**
 * Reads every socket taken over from dgram with recvmmsg batches
 * (batch-receive.ts), in turns of TURN_MS: while traffic flows it reads,
 * gathers for GATHER_MS after a batch that was not full, and otherwise
 * sleeps in poll() until a socket can be read.
 */
class BatchPump {
  private readonly entries: { socket: Socket; fd: number; listen: string; handle: DatagramHandler }[] = [];
  private fds = new Int32Array(8);
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));
  private scheduled = false;
  /** Length of a turn: TURN_MS, or SHORT_TURN_MS while this thread has other work. */
  turnMs = TURN_MS;

  constructor(private readonly reader: BatchReader) {}

  add(socket: Socket, fd: number, listen: string, receiver: Receiver): void {
    this.entries.push({ socket, fd, listen, handle: (payload, exporter, time) => receiver.onDatagram(payload, exporter, time) });
    this.refreshFds();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  /** Stops reading a socket (before it is closed: its descriptor is then gone, and its number may be reused). */
  remove(socket: Socket): void {
    const i = this.entries.findIndex((e) => e.socket === socket);
    if (i < 0) return;
    this.entries.splice(i, 1);
    this.refreshFds();
  }

  private refreshFds(): void {
    if (this.fds.length < this.entries.length) this.fds = new Int32Array(this.entries.length * 2);
    this.entries.forEach((e, k) => (this.fds[k] = e.fd));
  }

  private readonly turn = (): void => {
    const end = performance.now() + this.turnMs;
    for (;;) {
      const time = Date.now();
      let read = 0;
      let full = false;
      let failed = false;
      for (let k = 0; k < this.entries.length; k++) {
        const e = this.entries[k]!;
        const n = this.reader.read(e.fd, e.handle, time);
        if (n >= 0) {
          read += n;
          if (n === MAX_BATCH) full = true;
          continue;
        }
        if (-n === EBADF || -n === ENOTSOCK) {
          // The descriptor is gone (a bug: sockets leave the pump before they close). Its number
          // could come back as another file or socket: this one is never read again.
          post({
            t: 'log',
            level: 'error',
            obj: { listen: e.listen, errno: -n },
            msg: 'flow socket descriptor lost; the socket is no longer read',
          });
          this.remove(e.socket);
          k--;
          continue;
        }
        // Not expected on a bound UDP socket; poll() would report it at once, so no waiting in poll below.
        failed = true;
        rateLog(`read:${e.listen}`, { listen: e.listen, errno: -n }, 'flow socket read failed', 'error');
      }
      const left = end - performance.now();
      if (left <= 0 || this.entries.length === 0) break;
      if (full) continue;
      if (read > 0 || failed || this.reader.wait(this.fds, this.entries.length, Math.ceil(left)) < 0) {
        Atomics.wait(this.nap, 0, 0, Math.min(GATHER_MS, left));
      }
    }
    if (this.entries.length > 0) setImmediate(this.turn);
    else this.scheduled = false;
  };
}

const addon = input.batchReceive ? loadBatchRecv() : undefined;
if (input.batchReceive && !addon) {
  post({
    t: 'log',
    level: 'warn',
    obj: { reason: batchRecvLoadError() },
    msg: 'recvmmsg batch reads unavailable (the native addon did not load); flow sockets are read through dgram, at a higher CPU cost',
  });
}
const pump = addon ? new BatchPump(new BatchReader(addon)) : undefined;
const sockets: Socket[] = [];

/** Binds a socket and reads it in batches when it can (else through dgram's 'message' events). */
async function bind(s: SocketThreadSocket, receiver: Receiver): Promise<{ socket: Socket; reader: SocketReader }> {
  const socket = await bindFlowSocket(
    { type: s.type, host: s.host, port: s.port, recvBufferSize: s.requestedBuffer },
    (msg, rinfo) => receiver.onMessage(msg, rinfo),
    (err) =>
      post({
        t: 'log',
        level: 'error',
        obj: { err: { name: err.name, message: err.message }, listen: s.listen },
        msg: 'flow socket error',
      }),
  );
  const fd = pump ? takeSocketFd(socket) : undefined;
  if (fd === undefined) {
    if (pump)
      rateLog(
        'takeover',
        { listen: s.listen },
        "Node's dgram socket did not give up its descriptor (not the internals this Node version was expected to have); the flow socket is read through dgram",
      );
    return { socket, reader: 'dgram' };
  }
  pump!.add(socket, fd, s.listen, receiver);
  return { socket, reader: 'recvmmsg' };
}

/** Closes a socket bound by `bind`. */
function shut(socket: Socket, done?: () => void): void {
  pump?.remove(socket);
  socket.close(done);
}

/** Receives the synthetic datagrams over loopback into the first ring (as WARM_UP_SOURCE), within the budget. */
async function warmUp(first: SocketThreadSocket): Promise<{ sent: number; received: number }> {
  const receiver = new Receiver('warm-up', 0, [], WARM_UP_SOURCE, first.ring, counters, () => undefined);
  const received = (): number => counters.received(WARM_UP_SOURCE);
  const base = received();
  const deadline = performance.now() + input.warmUpBudgetMs;
  let sent = 0;
  let socket: Socket | undefined;
  if (pump) pump.turnMs = SHORT_TURN_MS;
  try {
    socket = (
      await bind(
        { ...first, listen: '127.0.0.1:0', host: '127.0.0.1', port: 0, type: 'udp4', requestedBuffer: 4 * 1024 * 1024 },
        receiver,
      )
    ).socket;
    sent = await sendSyntheticOverLoopback(socket.address().port, () => received() - base, Date.now(), WARM_UP_ROUNDS, deadline);
  } catch {
    // No loopback: no warm-up.
  } finally {
    if (socket) shut(socket);
    if (pump) pump.turnMs = TURN_MS;
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
  const bound: SocketThreadBound[] = [];
  for (const [i, s] of input.sockets.entries()) {
    const receiver = new Receiver(s.listen, i, s.claims, s.defaultSource, s.ring, counters, rateLog);
    let socket: Socket;
    let reader: SocketReader;
    try {
      ({ socket, reader } = await bind(s, receiver));
    } catch (err) {
      for (const open of sockets) shut(open);
      const names = [...new Set([s.defaultSource, ...s.claims.map(([, src]) => src)])]
        .filter((n) => n >= 0)
        .map((n) => input.sourceNames[n]!);
      post({ t: 'failed', message: bindFailureMessage(s.listen, names, err as Error), listen: s.listen });
      port.close();
      return;
    }
    sockets.push(socket);
    const a = socket.address();
    bound.push({ address: a.address, port: a.port, granted: socket.getRecvBufferSize(), reader });
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
    for (const s of sockets.splice(0)) shut(s, () => --open === 0 && done());
  });
});
