/**
 * The embedded syslog receiver: UDP and TCP on one port (default 5514),
 * RFC 3164 and RFC 5424, rows written into SystemEvents in batches through a
 * SyslogEventSink. Nothing moves until `start()`; `close()` stops listening
 * and writes what is still queued.
 *
 * Expected problems are counted, never thrown: a malformed message is stored
 * as best it can be; a failed write is kept and retried after a growing
 * pause (never by waiting on the database, so a locked SQLite file does not
 * hold the event loop); when the database stays away longer than `maxQueue`
 * messages, the oldest are dropped and counted, with a rate-limited log line.
 *
 * Hostile senders are bounded: at most `maxConnectionsPerAddress` TCP
 * connections from one address and `maxConnections` in all, so one noisy
 * address never takes every slot; a connection silent for `tcpIdleTimeoutMs`
 * is closed; the UDP socket asks for a `receiveBuffer` and what the kernel
 * drops when it is full is read back from /proc (kernel-drops.ts).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import type { SyslogEvent, SyslogEventSink } from '../../common/syslog-event.js';
import { dropsOf, readUdpDrops } from '../listen/kernel-drops.js';
import { bindMessage, ListenerBindError } from '../listen/listener-errors.js';
import { formatHostPort, setBufferSize } from '../listen/udp-socket.js';
import { parseSyslog, SyslogFrameDecoder, type ParsedSyslog } from './syslog-parser.js';
import { DropOldestQueue } from './syslog-queue.js';
import type { Log } from '../../common/log.js';
import { LogThrottle } from '../../common/log-throttle.js';

/** What the receiver is built from (the `syslogReceiver` config keys plus the zone). */
export interface SyslogReceiverConfig {
  host: string;
  /** 0 picks an ephemeral port (tests); UDP and TCP then get a port each. */
  port: number;
  udp: boolean;
  tcp: boolean;
  batchSize: number;
  flushIntervalMs: number;
  maxMessageBytes: number;
  maxQueue: number;
  /** IANA zone of ReceivedAt, as rsyslog writes its local time. */
  timezone: string;
  /** Most TCP connections served at once (default 512). */
  maxConnections?: number;
  /** Most TCP connections from one address at once (default 32); keep it well under maxConnections. */
  maxConnectionsPerAddress?: number;
  /** A TCP connection that sends nothing for this long is closed; 0 = never (default 300 000). */
  tcpIdleTimeoutMs?: number;
  /** SO_RCVBUF asked for on the UDP socket, bytes (default: the kernel's, net.core.rmem_default). */
  receiveBuffer?: number;
}

/** Defaults of the optional limits, shared with the config schema's documentation. */
export const RECEIVER_LIMIT_DEFAULTS = {
  maxConnections: 512,
  maxConnectionsPerAddress: 32,
  tcpIdleTimeoutMs: 300_000,
} as const;

/** Injected dependencies. */
export interface SyslogReceiverDeps {
  sink: SyslogEventSink;
  now?: () => number;
  log?: Log;
}

/** Everything that moves gets a counter. */
export interface SyslogReceiverCounters {
  received: number;
  receivedUdp: number;
  receivedTcp: number;
  stored: number;
  /** Stored, but something had to be repaired (no PRI, bad timestamp, …). */
  malformed: number;
  /** Host, tag or message cut to fit. */
  truncated: number;
  /** Lost because the queue overflowed while the database was failing. */
  dropped: number;
  writeErrors: number;
  tcpConnections: number;
  /** Refused: this address already had maxConnectionsPerAddress connections. */
  tcpRejectedAddressLimit: number;
  /** Refused: maxConnections were open. */
  tcpRejectedConnectionLimit: number;
  /** Refused: the receiver was closing. */
  tcpRejectedClosing: number;
  /** Closed by netsvc after tcpIdleTimeoutMs without data. */
  tcpIdleClosed: number;
}

/** The UDP socket as the kernel set it up, and what the kernel dropped on it. */
export interface SyslogUdpStats {
  listen: string;
  receiveBufferRequested: number | undefined;
  receiveBufferGranted: number;
  /** Datagrams the kernel dropped because the receive buffer was full; undefined outside Linux. */
  kernelDrops: number | undefined;
}

/** Formats an instant as `YYYY-MM-DD HH:MM:SS` wall clock in `timeZone`. */
export function wallClock(formatter: Intl.DateTimeFormat, ms: number): string {
  const p: Record<string, string> = {};
  for (const part of formatter.formatToParts(ms)) p[part.type] = part.value;
  const hour = p.hour === '24' ? '00' : p.hour;
  return `${p.year}-${p.month}-${p.day} ${hour}:${p.minute}:${p.second}`;
}

/** Builds the formatter `wallClock` needs for a zone. */
export function wallClockFormatter(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

const LOG_EVERY_MS = 10_000;
/** First pause after a failed write; it doubles with each failure in a row, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 1000;
/** Writes tried at close before what is still queued is counted as dropped (pauses 50…800 ms, 1.5 s in all). */
const CLOSE_ATTEMPTS = 5;

/** `::ffff:10.0.0.1` → `10.0.0.1`: one address, one name, whichever socket family it came in on. */
function plainAddress(addr: string): string {
  return addr.startsWith('::ffff:') ? addr.slice(7) : addr;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** UDP + TCP syslog listener writing into a SyslogEventSink. */
export class SyslogReceiver {
  readonly counters: SyslogReceiverCounters = {
    received: 0,
    receivedUdp: 0,
    receivedTcp: 0,
    stored: 0,
    malformed: 0,
    truncated: 0,
    dropped: 0,
    writeErrors: 0,
    tcpConnections: 0,
    tcpRejectedAddressLimit: 0,
    tcpRejectedConnectionLimit: 0,
    tcpRejectedClosing: 0,
    tcpIdleClosed: 0,
  };
  private readonly now: () => number;
  private readonly clock: Intl.DateTimeFormat;
  private readonly queue: DropOldestQueue<SyslogEvent>;
  /** The batch being written: out of the queue, so nothing the queue drops meanwhile can be confused with it. */
  private inFlight = 0;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set while pausing after a failed write: new messages wait for it rather than hammer a locked database. */
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay = 0;
  private udp: UdpSocket | undefined;
  private udpStatic: (Omit<SyslogUdpStats, 'kernelDrops'> & { address: string; port: number }) | undefined;
  private tcp: Server | undefined;
  private readonly connections = new Set<Socket>();
  private readonly perAddress = new Map<string, number>();
  private readonly maxConnections: number;
  private readonly maxPerAddress: number;
  private readonly idleMs: number;
  private readonly logThrottle: LogThrottle;
  /** ReceivedAt of the current second, formatted once (formatToParts is slow per message). */
  private stamp = { second: NaN, text: '' };
  private closed = false;

  constructor(
    private readonly config: SyslogReceiverConfig,
    private readonly deps: SyslogReceiverDeps,
  ) {
    if (!config.udp && !config.tcp) throw new Error('syslog receiver: enable udp, tcp or both');
    if (config.batchSize < 1 || config.maxQueue < config.batchSize)
      throw new Error('syslog receiver: need 1 <= batchSize <= maxQueue');
    this.maxConnections = config.maxConnections ?? RECEIVER_LIMIT_DEFAULTS.maxConnections;
    this.maxPerAddress = config.maxConnectionsPerAddress ?? RECEIVER_LIMIT_DEFAULTS.maxConnectionsPerAddress;
    this.idleMs = config.tcpIdleTimeoutMs ?? RECEIVER_LIMIT_DEFAULTS.tcpIdleTimeoutMs;
    if (!(this.maxConnections >= 1) || !(this.maxPerAddress >= 1))
      throw new Error('syslog receiver: TCP connection limits must be at least 1');
    if (!(this.idleMs >= 0)) throw new Error('syslog receiver: tcpIdleTimeoutMs must be 0 (never) or more');
    this.now = deps.now ?? Date.now;
    this.logThrottle = new LogThrottle(LOG_EVERY_MS, this.now);
    this.clock = wallClockFormatter(config.timezone);
    this.queue = new DropOldestQueue(config.maxQueue);
  }

  /** Messages received and not yet written (what a database outage holds back, up to maxQueue). */
  get queueDepth(): number {
    return this.queue.length + this.inFlight;
  }

  /** TCP connections open now. */
  get openConnections(): number {
    return this.connections.size;
  }

  /** The UDP socket's receive buffer and kernel drops (read from /proc now), when UDP listens. */
  udpStats(): SyslogUdpStats | undefined {
    const u = this.udpStatic;
    if (!u) return undefined;
    // The bound address as kept at bind: a scrape during shutdown must not ask a closed socket.
    return {
      listen: u.listen,
      receiveBufferRequested: u.receiveBufferRequested,
      receiveBufferGranted: u.receiveBufferGranted,
      kernelDrops: dropsOf(readUdpDrops(), u.address, u.port),
    };
  }

  /** Binds the listeners; resolves with the ports actually bound. */
  async start(): Promise<{ udpPort?: number; tcpPort?: number }> {
    const out: { udpPort?: number; tcpPort?: number } = {};
    try {
      if (this.config.udp) out.udpPort = await this.bound('udp', this.startUdp());
      if (this.config.tcp) out.tcpPort = await this.bound('tcp', this.startTcp());
    } catch (err) {
      await this.close();
      throw err;
    }
    this.timer = setInterval(() => {
      if (!this.retryTimer) void this.flush();
    }, this.config.flushIntervalMs);
    this.timer.unref();
    this.deps.log?.info(
      { host: this.config.host, ...out, receiveBuffer: this.udpStatic?.receiveBufferGranted },
      'syslog receiver listening',
    );
    return out;
  }

  /** A bind that failed becomes a ListenerBindError saying what to do (a taken port, a privileged one). */
  private async bound(proto: 'udp' | 'tcp', binding: Promise<number>): Promise<number> {
    try {
      return await binding;
    } catch (err) {
      const listen = `${formatHostPort(this.config.host, this.config.port)} (syslog ${proto})`;
      const what = {
        setting: 'syslogReceiver.port',
        env: 'NETSVC_SYSLOG_RECEIVER__PORT',
        holders: 'rsyslog, syslog-ng or a second netsvc',
      };
      throw new ListenerBindError(bindMessage(listen, what, err as Error), listen, { cause: err });
    }
  }

  private startUdp(): Promise<number> {
    const requested = this.config.receiveBuffer;
    const socket = createSocket({
      type: isIPv6(this.config.host) ? 'udp6' : 'udp4',
      reuseAddr: false,
      ...(requested !== undefined ? { recvBufferSize: requested } : {}),
    });
    this.udp = socket;
    socket.on('message', (msg, rinfo) => {
      this.counters.receivedUdp += 1;
      const cut = msg.length > this.config.maxMessageBytes;
      this.accept(cut ? msg.subarray(0, this.config.maxMessageBytes) : msg, rinfo.address, cut);
    });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.config.port, this.config.host, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.rateLimitedWarn('udp', { err }, 'syslog UDP socket error'));
        const addr = socket.address();
        const granted = setBufferSize(socket.getRecvBufferSize());
        const listen = formatHostPort(addr.address, addr.port);
        this.udpStatic = {
          listen,
          address: addr.address,
          port: addr.port,
          receiveBufferRequested: requested,
          receiveBufferGranted: granted,
        };
        if (requested !== undefined && granted < requested) {
          // A burst past the buffer is lost in the kernel, before any counter of ours: say how to fix it.
          this.deps.log?.warn(
            { listen, requested, granted, fix: `sysctl -w net.core.rmem_max=${requested}` },
            `kernel granted a smaller syslog UDP receive buffer than configured (${granted} of ${requested} bytes): raise net.core.rmem_max to ${requested}`,
          );
        }
        resolve(addr.port);
      });
    });
  }

  private startTcp(): Promise<number> {
    const port = this.config.udp && this.config.port === 0 ? 0 : this.config.port;
    const server = createServer((conn) => this.serveConnection(conn));
    this.tcp = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.config.host, () => {
        server.off('error', reject);
        server.on('error', (err) => this.rateLimitedWarn('tcp', { err }, 'syslog TCP server error'));
        const addr = server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : port);
      });
    });
  }

  /** Why a new connection from `sender` is refused, if it is. */
  private refusal(sender: string): 'closing' | 'address' | 'total' | undefined {
    if (this.closed) return 'closing';
    // The address limit first: one address past its share is refused as such, even when all slots are taken.
    if ((this.perAddress.get(sender) ?? 0) >= this.maxPerAddress) return 'address';
    if (this.connections.size >= this.maxConnections) return 'total';
    return undefined;
  }

  private serveConnection(conn: Socket): void {
    const sender = plainAddress(conn.remoteAddress ?? '');
    const refused = this.refusal(sender);
    if (refused) {
      if (refused === 'closing') this.counters.tcpRejectedClosing += 1;
      else if (refused === 'address') {
        this.counters.tcpRejectedAddressLimit += 1;
        this.rateLimitedWarn(
          'tcp-address',
          { sender, limit: this.maxPerAddress },
          'syslog TCP connection refused: too many connections from this address (maxConnectionsPerAddress)',
        );
      } else {
        this.counters.tcpRejectedConnectionLimit += 1;
        this.rateLimitedWarn(
          'tcp-total',
          { sender, limit: this.maxConnections },
          'syslog TCP connection refused: too many connections (maxConnections)',
        );
      }
      conn.destroy();
      return;
    }
    this.counters.tcpConnections += 1;
    this.connections.add(conn);
    this.perAddress.set(sender, (this.perAddress.get(sender) ?? 0) + 1);
    const decoder = new SyslogFrameDecoder(this.config.maxMessageBytes);
    const take = (frames: { data: Buffer; truncated: boolean }[]): void => {
      for (const f of frames) {
        this.counters.receivedTcp += 1;
        this.accept(f.data, sender, f.truncated);
      }
    };
    conn.on('data', (chunk: Buffer) => take(decoder.push(chunk)));
    conn.on('end', () => {
      take(decoder.end());
      conn.end();
    });
    if (this.idleMs > 0) {
      // Node restarts this timer on every read and write, so it fires only after idleMs of silence.
      conn.setTimeout(this.idleMs, () => {
        this.counters.tcpIdleClosed += 1;
        take(decoder.end()); // an unterminated last message is kept, as at a normal close
        conn.destroy();
      });
    }
    conn.on('error', () => undefined); // a peer reset is its business; 'close' cleans up
    conn.on('close', () => {
      this.connections.delete(conn);
      const n = (this.perAddress.get(sender) ?? 1) - 1;
      if (n > 0) this.perAddress.set(sender, n);
      else this.perAddress.delete(sender);
    });
  }

  private receivedAt(): string {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.stamp.second) this.stamp = { second, text: wallClock(this.clock, second * 1000) };
    return this.stamp.text;
  }

  /** Parses one message and queues its row. */
  private accept(raw: Buffer, sender: string, truncated: boolean): void {
    this.counters.received += 1;
    const parsed: ParsedSyslog = parseSyslog(raw, {
      receivedAt: this.receivedAt(),
      sender: plainAddress(sender),
      truncated,
    });
    if (parsed.problems.length) {
      const cut = parsed.problems.some((p) => p.endsWith('-truncated'));
      if (cut) this.counters.truncated += 1;
      if (parsed.problems.some((p) => !p.endsWith('-truncated'))) this.counters.malformed += 1;
    }
    const dropped = this.queue.push({
      deviceReportedTime: parsed.deviceReportedTime,
      receivedAt: parsed.receivedAt,
      fromHost: parsed.fromHost,
      sysLogTag: parsed.sysLogTag,
      priority: parsed.priority,
      facility: parsed.facility,
      message: parsed.message,
    });
    if (dropped) this.countDropped(dropped);
    // While pausing after a failed write, the retry timer writes; arrivals only queue.
    if (this.queue.length >= this.config.batchSize && !this.retryTimer) void this.flush();
  }

  private countDropped(n: number): void {
    this.counters.dropped += n;
    this.rateLimitedWarn('dropped', { dropped: this.counters.dropped }, 'syslog queue full: oldest messages dropped');
  }

  /**
   * Writes everything queued, one batch at a time; resolves when the queue is
   * empty or a write failed. A failed batch goes back to the front of the
   * queue and a retry is scheduled after a pause that doubles per failure.
   */
  flush(): Promise<void> {
    if (this.writing) return this.writing;
    if (this.queue.length === 0) return Promise.resolve();
    this.writing = (async () => {
      try {
        while (this.queue.length) {
          const batch = this.queue.take(this.config.batchSize);
          this.inFlight = batch.length;
          try {
            await this.deps.sink.insertEvents(batch);
          } catch (err) {
            this.inFlight = 0;
            // Kept, oldest first; if the queue filled meanwhile, what no longer fits is the oldest, counted.
            const dropped = this.queue.unshift(batch);
            if (dropped) this.countDropped(dropped);
            this.counters.writeErrors += 1;
            this.scheduleRetry();
            this.rateLimitedWarn(
              'write',
              { err, queued: this.queueDepth, retryInMs: this.retryDelay },
              'syslog write failed; will retry',
            );
            return;
          }
          this.inFlight = 0;
          this.counters.stored += batch.length;
          this.retryDelay = 0;
          // A synchronous driver (better-sqlite3) never yields inside the loop: let sockets and HTTP in
          // between batches, so draining a backlog of maxQueue messages does not hold the event loop.
          if (this.queue.length) await new Promise<void>((r) => setImmediate(r));
        }
      } finally {
        this.writing = undefined;
      }
    })();
    return this.writing;
  }

  private scheduleRetry(): void {
    this.retryDelay = this.retryDelay ? Math.min(RETRY_MAX_MS, this.retryDelay * 2) : RETRY_FIRST_MS;
    if (this.closed) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.flush();
    }, this.retryDelay);
    this.retryTimer.unref();
  }

  private rateLimitedWarn(key: string, obj: object, msg: string): void {
    if (!this.logThrottle.allow(key)) return;
    this.deps.log?.warn({ ...obj, counters: { ...this.counters } }, msg);
  }

  /**
   * Stops listening, closes connections, and writes what is queued: a few
   * tries with short pauses (a database locked for a moment), then what is
   * left is counted as dropped.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const udp = this.udp;
    const tcp = this.tcp;
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()));
    for (const conn of this.connections) conn.destroy();
    if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    for (let attempt = 0; attempt < CLOSE_ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(RETRY_FIRST_MS << (attempt - 1));
      await this.flush();
      if (this.queueDepth === 0) break;
    }
    const lost = this.queue.clear();
    if (lost) {
      this.counters.dropped += lost;
      this.deps.log?.warn({ lost }, 'syslog receiver closed with unwritten messages');
    }
  }
}
