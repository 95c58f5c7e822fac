/**
 * Replay of export datagrams over UDP: the harness `netsvc replay`, the
 * acceptance test (feeding nfcapd) and the ingest benchmark send with.
 *
 * Datagrams go, in order, to one destination the caller names; nothing is
 * ever sent to an address found in the capture. Pacing: the capture's own
 * record times (`original`), a fixed rate in datagrams per second (`fixed`),
 * or as fast as the socket takes them (`max`). Sends are bounded in flight,
 * so a slow socket slows the sender instead of queuing without limit.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';

/** One datagram to send: payload and its record time (ms) for `original` pacing. */
export interface ReplayDatagram {
  payload: Uint8Array;
  timeMs: number;
}

/** How to pace the datagrams. */
export type ReplayTiming = 'original' | 'fixed' | 'max';

/** Settings of one replay. */
export interface ReplayOptions {
  host: string;
  port: number;
  timing: ReplayTiming;
  /** Datagrams per second for `fixed`. */
  rate?: number;
  /** Times the whole list is sent (default 1). */
  loops?: number;
  /** `original` only: 2 plays twice as fast (default 1). */
  speed?: number;
  /** Socket send buffer in bytes (default 4 MiB). */
  sendBuffer?: number;
  /** Stops early when aborted; the result says how far it got. */
  signal?: AbortSignal;
  /** Called now and then with the number of datagrams sent so far. */
  onProgress?: (sent: number) => void;
  /** Clock in ms (default performance.now); injected by tests. */
  clock?: () => number;
}

/** What a replay did. */
export interface ReplayResult {
  sent: number;
  bytes: number;
  /** Sends the kernel refused (e.g. ECONNREFUSED surfacing from an earlier send, ENOBUFS). */
  errors: number;
  elapsedMs: number;
}

/** A replay destination or setting that cannot be used. */
export class ReplayOptionError extends Error {
  override readonly name = 'ReplayOptionError';
}

const MAX_IN_FLIGHT = 512;

/** Parses `HOST:PORT` or `[V6]:PORT` where HOST is an IP address literal (no name lookups). */
export function parseDestination(text: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]]+):(\d{1,5})$/.exec(text);
  const host = m?.[1] === 'localhost' ? '127.0.0.1' : m?.[1];
  const port = Number(m?.[2]);
  if (!m || host === undefined || isIP(host) === 0 || port < 1 || port > 65535) {
    throw new ReplayOptionError(`destination must be IP:PORT or [IPv6]:PORT with an address literal, got '${text}'`);
  }
  return { host, port };
}

/** Sends the datagrams to host:port with the requested pacing. */
export async function replayDatagrams(datagrams: readonly ReplayDatagram[], opts: ReplayOptions): Promise<ReplayResult> {
  const loops = opts.loops ?? 1;
  if (!Number.isInteger(loops) || loops < 1) throw new ReplayOptionError('loops must be an integer ≥ 1');
  if (opts.timing === 'fixed' && !(opts.rate !== undefined && opts.rate > 0)) {
    throw new ReplayOptionError('fixed timing needs a rate > 0 (datagrams per second)');
  }
  const speed = opts.speed ?? 1;
  if (!(speed > 0)) throw new ReplayOptionError('speed must be > 0');
  const family = isIP(opts.host);
  if (family === 0) throw new ReplayOptionError(`not an IP address: ${opts.host}`);
  const clock = opts.clock ?? (() => performance.now());
  const socket = createSocket({ type: family === 6 ? 'udp6' : 'udp4', sendBufferSize: opts.sendBuffer ?? 4 * 1024 * 1024 });
  const result: ReplayResult = { sent: 0, bytes: 0, errors: 0, elapsedMs: 0 };
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(opts.port, opts.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    // Errors of connected UDP sockets (ICMP port unreachable) arrive asynchronously.
    socket.on('error', () => result.errors++);
    await pump(socket, datagrams, loops, speed, opts, clock, result);
  } finally {
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
  return result;
}

async function pump(
  socket: Socket,
  datagrams: readonly ReplayDatagram[],
  loops: number,
  speed: number,
  opts: ReplayOptions,
  clock: () => number,
  result: ReplayResult,
): Promise<void> {
  const total = datagrams.length * loops;
  if (total === 0) return;
  const t0 = clock();
  const first = datagrams[0]!.timeMs;
  const last = datagrams[datagrams.length - 1]!.timeMs;
  // Original timing of a loop spans the capture plus one mean gap, so loops do not collide.
  const span = datagrams.length > 1 ? (last - first) * (1 + 1 / (datagrams.length - 1)) : 1;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const done = (err: Error | null): void => {
    inFlight--;
    if (err) result.errors++;
    if (wake && inFlight < MAX_IN_FLIGHT / 2) {
      const w = wake;
      wake = undefined;
      w();
    }
  };
  const dueAt = (i: number): number => {
    if (opts.timing === 'max') return 0;
    if (opts.timing === 'fixed') return (i / opts.rate!) * 1000;
    const loop = Math.floor(i / datagrams.length);
    const d = datagrams[i % datagrams.length]!;
    return (loop * span + (d.timeMs - first)) / speed;
  };
  let i = 0;
  let lastProgress = 0;
  while (i < total) {
    if (opts.signal?.aborted) break;
    const now = clock() - t0;
    // Send everything already due, within the in-flight bound.
    while (i < total && inFlight < MAX_IN_FLIGHT && dueAt(i) <= now) {
      const d = datagrams[i % datagrams.length]!;
      inFlight++;
      socket.send(d.payload, done);
      result.sent++;
      result.bytes += d.payload.length;
      i++;
    }
    if (opts.onProgress && i - lastProgress >= 1000) {
      lastProgress = i;
      opts.onProgress(i);
    }
    if (i >= total) break;
    if (inFlight >= MAX_IN_FLIGHT) {
      await new Promise<void>((resolve) => (wake = resolve));
      continue;
    }
    const wait = dueAt(i) - (clock() - t0);
    // Sleep until the next datagram is due; timers are ms-grained, so at high
    // rates each wake-up sends the datagrams that fell due meanwhile (a burst
    // of about rate/1000). Spinning instead would take a whole core from the
    // collector under test on a small machine.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.floor(wait))));
  }
  while (inFlight > 0) await new Promise<void>((resolve) => (wake = resolve));
  opts.onProgress?.(i);
  result.elapsedMs = clock() - t0;
}
