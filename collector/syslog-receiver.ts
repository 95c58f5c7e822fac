/**
 * The embedded syslog receiver: UDP and TCP on one port (default 5514),
 * RFC 3164 and RFC 5424, rows written into SystemEvents in batches through a
 * SyslogEventSink. Nothing moves until `start()`; `close()` stops listening
 * and writes what is still queued.
 *
 * Expected problems are counted, never thrown: a malformed message is stored
 * as best it can be; a failed write is retried with the next batch; when the
 * database stays away longer than `maxQueue` messages, the oldest are dropped
 * and counted, with a rate-limited log line.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import type { SyslogEvent, SyslogEventSink } from '../storage/syslog/syslog-store.js';
import { parseSyslog, SyslogFrameDecoder, type ParsedSyslog } from './syslog-parser.js';

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
}

/** The logger subset the receiver uses (pino's Logger fits). */
export interface ReceiverLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Injected dependencies. */
export interface SyslogReceiverDeps {
  sink: SyslogEventSink;
  now?: () => number;
  log?: ReceiverLog;
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
  tcpRejected: number;
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
    tcpRejected: 0,
  };
  private readonly now: () => number;
  private readonly clock: Intl.DateTimeFormat;
  private queue: SyslogEvent[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly connections = new Set<Socket>();
  private lastLog = new Map<string, number>();
  /** ReceivedAt of the current second, formatted once (formatToParts is slow per message). */
  private stamp = { second: NaN, text: '' };
  private closed = false;

  constructor(
    private readonly config: SyslogReceiverConfig,
    private readonly deps: SyslogReceiverDeps,
  ) {
    if (!config.udp && !config.tcp) throw new Error('syslog receiver: enable udp, tcp or both');
    if (config.batchSize < 1 || config.maxQueue < config.batchSize) throw new Error('syslog receiver: need 1 <= batchSize <= maxQueue');
    this.now = deps.now ?? Date.now;
    this.clock = wallClockFormatter(config.timezone);
  }

  /** Messages received and not yet written (what a database outage holds back, up to maxQueue). */
  get queueDepth(): number {
    return this.queue.length;
  }

  /** TCP connections open now. */
  get openConnections(): number {
    return this.connections.size;
  }

  /** Binds the listeners; resolves with the ports actually bound. */
  async start(): Promise<{ udpPort?: number; tcpPort?: number }> {
    const out: { udpPort?: number; tcpPort?: number } = {};
    try {
      if (this.config.udp) out.udpPort = await this.startUdp();
      if (this.config.tcp) out.tcpPort = await this.startTcp();
    } catch (err) {
      await this.close();
      throw err;
    }
    this.timer = setInterval(() => void this.flush(), this.config.flushIntervalMs);
    this.timer.unref();
    this.deps.log?.info({ host: this.config.host, ...out }, 'syslog receiver listening');
    return out;
  }

  private startUdp(): Promise<number> {
    const socket = createSocket({ type: isIPv6(this.config.host) ? 'udp6' : 'udp4', reuseAddr: false });
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
        resolve(socket.address().port);
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

  private serveConnection(conn: Socket): void {
    if (this.closed || this.connections.size >= (this.config.maxConnections ?? 512)) {
      this.counters.tcpRejected += 1;
      conn.destroy();
      return;
    }
    this.counters.tcpConnections += 1;
    this.connections.add(conn);
    const sender = conn.remoteAddress ?? '';
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
    conn.on('error', () => undefined); // a peer reset is its business; 'close' cleans up
    conn.on('close', () => this.connections.delete(conn));
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
      sender: sender.startsWith('::ffff:') ? sender.slice(7) : sender,
      truncated,
    });
    if (parsed.problems.length) {
      const cut = parsed.problems.some((p) => p.endsWith('-truncated'));
      if (cut) this.counters.truncated += 1;
      if (parsed.problems.some((p) => !p.endsWith('-truncated'))) this.counters.malformed += 1;
    }
    this.queue.push({
      deviceReportedTime: parsed.deviceReportedTime,
      receivedAt: parsed.receivedAt,
      fromHost: parsed.fromHost,
      sysLogTag: parsed.sysLogTag,
      priority: parsed.priority,
      facility: parsed.facility,
      message: parsed.message,
    });
    if (this.queue.length > this.config.maxQueue) {
      const excess = this.queue.length - this.config.maxQueue;
      this.queue.splice(0, excess);
      this.counters.dropped += excess;
      this.rateLimitedWarn('dropped', { dropped: this.counters.dropped }, 'syslog queue full: oldest messages dropped');
    }
    if (this.queue.length >= this.config.batchSize) void this.flush();
  }

  /** Writes everything queued, one batch at a time; resolves when the queue is empty or a write failed. */
  flush(): Promise<void> {
    if (this.writing) return this.writing;
    if (this.queue.length === 0) return Promise.resolve();
    this.writing = (async () => {
      try {
        while (this.queue.length) {
          const batch = this.queue.slice(0, this.config.batchSize);
          try {
            await this.deps.sink.insertEvents(batch);
          } catch (err) {
            // Keep the batch: the next flush retries it; the queue bound limits what is held.
            this.counters.writeErrors += 1;
            this.rateLimitedWarn('write', { err, queued: this.queue.length }, 'syslog write failed; will retry');
            return;
          }
          this.queue.splice(0, batch.length);
          this.counters.stored += batch.length;
        }
      } finally {
        this.writing = undefined;
      }
    })();
    return this.writing;
  }

  private rateLimitedWarn(key: string, obj: object, msg: string): void {
    const t = this.now();
    const last = this.lastLog.get(key);
    if (last !== undefined && t - last < LOG_EVERY_MS) return;
    this.lastLog.set(key, t);
    this.deps.log?.warn({ ...obj, counters: { ...this.counters } }, msg);
  }

  /** Stops listening, closes connections, and writes what is queued (one retry if the write fails). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const udp = this.udp;
    const tcp = this.tcp;
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()));
    for (const conn of this.connections) conn.destroy();
    if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    await this.flush();
    if (this.queue.length) await this.flush();
    if (this.queue.length) {
      this.counters.dropped += this.queue.length;
      this.deps.log?.warn({ lost: this.queue.length }, 'syslog receiver closed with unwritten messages');
      this.queue = [];
    }
  }
}
