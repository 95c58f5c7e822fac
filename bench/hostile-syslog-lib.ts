/**
 * What the syslog attacks of issue 16 share (bench/hostile-syslog-*.ts, and
 * the tests that run them small): a `netsvc serve` spawned on its own data
 * directory with every listener on loopback, idle TCP connections from one
 * loopback alias address, a UDP burst, a second process holding an
 * exclusive lock on a SQLite file, and /metrics read back as numbers.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseMetrics } from '../src/commands/status-run.js';
import { spawnServe, type ServeProcess } from './spawned-serve.js';
import { freePort } from '../test/helpers/net.js';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** Sum of a metric's samples whose labels include `labels`; undefined when there is none. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = parseMetrics(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length ? hits.reduce((n, s) => n + s.value, 0) : undefined;
}

/** The syslog receiver's counters from a /metrics text (0 for an absent series). */
export function syslogCounters(text: string): {
  receivedUdp: number;
  receivedTcp: number;
  kernelDrops: number;
  stored: number;
  dropped: number;
  queueDepth: number;
  writeErrors: number;
  tcpOpen: number;
  tcpRejectedAddress: number;
  tcpRejectedTotal: number;
  tcpIdleClosed: number;
  receiveBuffer: number;
} {
  const v = (name: string, labels: Record<string, string> = {}): number =>
    metricValue(text, `netsvc_syslog_${name}`, labels) ?? 0;
  return {
    receivedUdp: v('received_total', { transport: 'udp' }),
    receivedTcp: v('received_total', { transport: 'tcp' }),
    kernelDrops: v('kernel_drops_total'),
    stored: v('stored_total'),
    dropped: v('dropped_total'),
    queueDepth: v('queue_depth'),
    writeErrors: v('write_errors_total'),
    tcpOpen: v('tcp_open_connections'),
    tcpRejectedAddress: v('tcp_rejected_total', { reason: 'address_limit' }),
    tcpRejectedTotal: v('tcp_rejected_total'),
    tcpIdleClosed: v('tcp_idle_closed_total'),
    receiveBuffer: v('receive_buffer_bytes'),
  };
}

/** A `netsvc serve` started by `spawnSyslogServe`. */
export interface SpawnedServe {
  pid: number;
  url: string;
  dataDir: string;
  syslogPort: number;
  /** GET /metrics; answers the text and how long it took, ms. */
  metrics(): Promise<{ text: string; ms: number }>;
  /** Stops it (SIGTERM, then SIGKILL after 10 s) and removes its data directory. */
  stop(): Promise<void>;
  /** What it printed on stderr (and stdout log lines), for a failure's message. */
  output(): string;
}

/**
 * Spawns `node dist/src/cli.js serve` on a fresh data directory: HTTP and the
 * flow sockets on ephemeral 127.0.0.1 ports, the syslog receiver on a free
 * non-standard 127.0.0.1 port with `syslogReceiver` merged over that.
 */
export async function spawnSyslogServe(syslogReceiver: Record<string, unknown> = {}): Promise<SpawnedServe> {
  const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-hostile-syslog-'));
  const syslogPort = await freePort();
  let serve: ServeProcess;
  try {
    serve = await spawnServe(
      dataDir,
      {
        flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
        syslogReceiver: { host: '127.0.0.1', port: syslogPort, ...syslogReceiver },
      },
      (out) => out.includes('syslog receiver listening'),
      10_000,
    );
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const { url } = serve;
  const stop = async (): Promise<void> => {
    await serve.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    pid: serve.pid,
    url,
    dataDir,
    syslogPort,
    async metrics() {
      const a = performance.now();
      const text = await (await fetch(`${url}/metrics`)).text();
      return { text, ms: performance.now() - a };
    },
    stop,
    output: serve.output,
  };
}

/** Connections opened by `openIdleConnections`. */
export interface IdleConnections {
  /** Those the server accepted and still holds open. */
  open(): number;
  /** Those the server closed (refused at once, or later as idle), with the time each closed (performance.now()). */
  closedAt: number[];
  /** Closes every connection still open. */
  destroy(): void;
}

/**
 * Opens `n` TCP connections from `localAddress` (a 127.0.0.0/8 alias on
 * Linux) to `port` and sends nothing; resolves once each is connected or
 * closed.
 */
export async function openIdleConnections(
  port: number,
  localAddress: string,
  n: number,
  host = '127.0.0.1',
): Promise<IdleConnections> {
  const sockets: Socket[] = [];
  const closedAt: number[] = [];
  const settle: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect({ port, host, localAddress });
    sockets.push(s);
    s.on('error', () => undefined); // refused ones may be reset; 'close' counts them
    settle.push(
      new Promise<void>((resolve) => {
        s.once('connect', () => {
          resolve();
        });
        s.once('close', () => {
          resolve();
        });
      }),
    );
    s.once('close', () => {
      closedAt.push(performance.now());
    });
  }
  await Promise.all(settle);
  return {
    open: () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length,
    closedAt,
    destroy: () => {
      for (const s of sockets) s.destroy();
    },
  };
}

/** Sends `lines` over one TCP connection from `localAddress`, newline-framed, then closes it; resolves when closed. */
export function sendTcpLines(port: number, localAddress: string, lines: readonly string[], host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host, localAddress }, () => {
      s.end(lines.map((l) => `${l}\n`).join(''));
    });
    s.once('error', reject);
    s.once('close', (hadError) => (hadError ? undefined : resolve()));
    s.resume();
  });
}

/**
 * Sends `n` UDP datagrams `payload(i)` to `port` as fast as the socket takes
 * them (the kernel's send queue paces the loop); answers how many the kernel
 * refused to send (those never left this process).
 */
export async function udpBurst(
  port: number,
  n: number,
  payload: (i: number) => Buffer,
  host = '127.0.0.1',
): Promise<{ sendErrors: number }> {
  const s = createSocket('udp4');
  let sendErrors = 0;
  let pending = 0;
  let drained: (() => void) | undefined;
  for (let i = 0; i < n; i++) {
    pending++;
    s.send(payload(i), port, host, (err) => {
      if (err) sendErrors++;
      if (--pending === 0) drained?.();
    });
    // Yield now and then so send callbacks run (and, in one process with a receiver, it reads meanwhile).
    if (i % 256 === 255 || pending >= 1024) await new Promise<void>((r) => setImmediate(r));
  }
  if (pending > 0) await new Promise<void>((r) => (drained = r));
  s.close();
  return { sendErrors };
}

/** An exclusive lock held by another process on a SQLite file. */
export interface HeldLock {
  pid: number;
  /** Resolves when the lock is released (the holder committed and exited). */
  released: Promise<void>;
  /** Kills the holder now, by its PID, if still running. */
  kill(): void;
}

/**
 * Starts a process that opens `path`, runs `BEGIN EXCLUSIVE`, holds it for
 * `holdMs`, then commits and exits; resolves once the lock is taken.
 */
export async function holdSqliteLock(path: string, holdMs: number): Promise<HeldLock> {
  const script = `
    const Database = require(process.argv[1]);
    const db = new Database(process.argv[2]);
    db.pragma('busy_timeout = 10000');
    db.exec('BEGIN EXCLUSIVE');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write('released\\n'); }, Number(process.argv[3]));
  `;
  const child = spawn(process.execPath, ['-e', script, BETTER_SQLITE3, path, String(holdMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const released = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('locked')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`lock holder exited (${code}) before locking: ${err}`)));
  });
  return {
    pid: child.pid!,
    released,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** A syslog line (RFC 5424) carrying `marker`, so rows can be told apart. */
export function syslogLine(marker: string): string {
  return `<134>1 2026-01-02T03:04:05Z bench-host hostile - - - ${marker}`;
}
