/**
 * The embedded receiver end to end: real `logger` processes send RFC 3164 and
 * RFC 5424 messages over UDP and TCP (LF and octet-counted framing) to the
 * receiver on loopback; the rows are read back through the SQLite store's
 * newest-first query, as `latest` serves them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendUdp } from '../../helpers/net.js';
import { SyslogReceiver, type SyslogReceiverConfig } from '../../../collector/syslog/syslog-receiver.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { ListenerBindError } from '../../../collector/listen/listener-errors.js';
import { SqliteSyslogStore } from '../../../storage/syslog/sqlite-syslog-store.js';
import type { SyslogEvent } from '../../../common/syslog-event.js';
import type { SyslogRecord } from '../../../storage/syslog/syslog-store.js';
import { requireAll } from '../../helpers/databases.js';

const run = promisify(execFile);

async function hasLogger(): Promise<boolean> {
  try {
    await run('logger', ['-V']);
    return true;
  } catch {
    if (requireAll) throw new Error('logger (util-linux/bsdutils) is missing and NETSVC_REQUIRE_ALL=1');
    return false;
  }
}

const CONFIG: SyslogReceiverConfig = {
  host: '127.0.0.1',
  port: 0,
  udp: true,
  tcp: true,
  batchSize: 50,
  flushIntervalMs: 30,
  maxMessageBytes: 8192,
  maxQueue: 1000,
  timezone: 'UTC',
};

async function waitFor<T>(fn: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const loggerOk = await hasLogger();

describe.skipIf(!loggerOk)('SyslogReceiver with logger over UDP and TCP', () => {
  let dir: string;
  let store: SqliteSyslogStore;
  let receiver: SyslogReceiver;
  let udpPort: number;
  let tcpPort: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-receiver-'));
    store = new SqliteSyslogStore(openSqlClient(`sqlite:${join(dir, 'syslog.sqlite')}`, dir));
    await store.ensureSchema();
    receiver = new SyslogReceiver(CONFIG, { sink: store });
    const ports = await receiver.start();
    udpPort = ports.udpPort!;
    tcpPort = ports.tcpPort!;
  });

  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Sends with logger and returns the newest row whose message contains `marker`. */
  async function viaLogger(
    args: string[],
    text: string,
    marker = text,
  ): Promise<{ row: SyslogRecord; before: number; after: number }> {
    const before = Math.floor(Date.now() / 1000) * 1000;
    await run('logger', ['-n', '127.0.0.1', ...args, text], { env: { ...process.env, TZ: 'UTC' } });
    const row = await waitFor(async () => (await store.find({ message: marker }, { page: 1, perPage: 1 }))[0]);
    return { row, before, after: Date.now() };
  }

  function inWindow(time: string | null, before: number, after: number): boolean {
    const t = Date.parse(`${time!.replace(' ', 'T')}Z`);
    return t >= before - 1000 && t <= after + 1000;
  }

  it('stores an RFC 5424 message sent over UDP', async () => {
    const { row, before, after } = await viaLogger(
      ['-P', String(udpPort), '-d', '-t', 'mytag', '-p', 'local0.warning'],
      'udp-5424-a1',
    );
    expect(row).toMatchObject({ SysLogTag: 'mytag', Priority: 4, processid: '', Message: 'udp-5424-a1' });
    expect(row.FromHost).not.toBe('');
    expect(inWindow(row.ReceivedAt, before, after)).toBe(true);
    expect(inWindow(row.DeviceReportedTime, before, after)).toBe(true);
  });

  it('stores an RFC 3164 message with a pid sent over UDP, keeping the colon', async () => {
    const { row } = await viaLogger(
      ['-P', String(udpPort), '-d', '--rfc3164', '--id=4242', '-t', 'sshd', '-p', 'auth.err'],
      'udp-3164-b2',
    );
    expect(row).toMatchObject({ SysLogTag: 'sshd[4242]:', processid: '4242', Priority: 3, Message: ' udp-3164-b2' });
  });

  it('stores messages sent over TCP, LF-delimited and octet-counted', async () => {
    const lf = await viaLogger(['-P', String(tcpPort), '-T', '-t', 'tcpapp', '-p', 'user.info'], 'tcp-lf-c3');
    expect(lf.row).toMatchObject({ SysLogTag: 'tcpapp', Priority: 6, Message: 'tcp-lf-c3' });
    const counted = await viaLogger(
      ['-P', String(tcpPort), '-T', '--octet-count', '--rfc3164', '-t', 'hostapd', '-p', 'daemon.debug'],
      'tcp-octet-d4 with\nnewline',
      'tcp-octet-d4',
    );
    expect(counted.row).toMatchObject({ SysLogTag: 'hostapd:', Priority: 7, Message: ' tcp-octet-d4 with#012newline' });
  });

  it('shows them newest first, as latest does', async () => {
    const rows = await store.find({}, { page: 1, perPage: 100 });
    const markers = rows.map((r) => /([a-z0-9-]+-[a-z]\d)/.exec(r.Message)?.[1]).filter(Boolean);
    expect(markers).toEqual(['tcp-octet-d4', 'tcp-lf-c3', 'udp-3164-b2', 'udp-5424-a1']);
  });

  it('stores malformed and overlong messages as best it can and keeps running', async () => {
    const before = receiver.counters.malformed;
    const truncatedBefore = receiver.counters.truncated;
    await sendUdp(udpPort, Buffer.from([0xff, 0xfe, 0x3c, 0x00, 0x41]));
    await sendUdp(udpPort, '<14>bare message e5 without header');
    await sendUdp(udpPort, `<134>1 2026-01-02T03:04:05Z ${'h'.repeat(61)} app - - - overlong host f6`);
    const bare = await waitFor(async () => (await store.find({ message: 'e5 without' }, { page: 1, perPage: 1 }))[0]);
    expect(bare).toMatchObject({ FromHost: '127.0.0.1', Message: 'bare message e5 without header' });
    const long = await waitFor(async () => (await store.find({ message: 'overlong host f6' }, { page: 1, perPage: 1 }))[0]);
    expect(long.FromHost).toBe('h'.repeat(60));
    expect(receiver.counters.malformed - before).toBeGreaterThanOrEqual(2);
    expect(receiver.counters.truncated - truncatedBefore).toBe(1);
    const after = await viaLogger(['-P', String(udpPort), '-d', '-t', 'still'], 'alive-g7');
    expect(after.row.SysLogTag).toBe('still');
  });
});

describe('SyslogReceiver batching and failures', () => {
  class FlakySink {
    batches: SyslogEvent[][] = [];
    failing = false;
    async insertEvents(events: readonly SyslogEvent[]): Promise<void> {
      if (this.failing) throw new Error('database away');
      this.batches.push([...events]);
    }
  }

  it('writes in batches of batchSize, retries after a failed write and counts what overflowed', async () => {
    const sink = new FlakySink();
    const receiver = new SyslogReceiver(
      { ...CONFIG, tcp: false, batchSize: 3, maxQueue: 5, flushIntervalMs: 60_000 },
      { sink, now: () => Date.UTC(2026, 0, 2, 10, 0, 0) },
    );
    const { udpPort } = await receiver.start();
    try {
      sink.failing = true;
      for (let i = 0; i < 8; i++) await sendUdp(udpPort!, `<13>Jan  2 10:00:00 h t: m${i}`);
      await waitFor(async () => (receiver.counters.received === 8 ? true : undefined));
      expect(receiver.counters.writeErrors).toBeGreaterThan(0);
      expect(receiver.counters.dropped).toBe(3);
      sink.failing = false;
      await receiver.flush();
      expect(sink.batches.map((b) => b.length)).toEqual([3, 2]);
      expect(sink.batches.flat().map((e) => e.message)).toEqual([' m3', ' m4', ' m5', ' m6', ' m7']);
      expect(sink.batches[0]![0]).toMatchObject({ receivedAt: '2026-01-02 10:00:00', fromHost: 'h', sysLogTag: 't:' });
      expect(receiver.counters.stored).toBe(5);
    } finally {
      await receiver.close();
    }
  });

  it('says which setting moves it when its port is taken, and holds no socket after', async () => {
    const { createSocket } = await import('node:dgram');
    const holder = createSocket('udp4');
    await new Promise<void>((r) => holder.bind(0, '127.0.0.1', () => r()));
    const port = holder.address().port;
    try {
      const receiver = new SyslogReceiver({ ...CONFIG, port }, { sink: new FlakySink() });
      const err = await receiver.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ListenerBindError);
      expect((err as Error).message).toBe(
        `cannot listen on 127.0.0.1:${port} (syslog udp): the port is in use (rsyslog, syslog-ng or a second netsvc, holds it); ` +
          'stop that one, or set syslogReceiver.port (NETSVC_SYSLOG_RECEIVER__PORT) to another port',
      );
    } finally {
      holder.close();
    }
    // Nothing of the failed start stays bound: the port can be taken again at once.
    const again = new SyslogReceiver({ ...CONFIG, port }, { sink: new FlakySink() });
    await again.start();
    await again.close();
  });

  it('refuses a configuration with neither UDP nor TCP', () => {
    expect(() => new SyslogReceiver({ ...CONFIG, udp: false, tcp: false }, { sink: new FlakySink() })).toThrow(/udp, tcp/);
  });
});
