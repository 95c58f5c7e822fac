/**
 * The receiver under the attacks of issue 16, small: hundreds of idle TCP
 * connections from one address (a 127.0.0.0/8 alias: all of it is loopback
 * on Linux) while honest senders on other addresses are served, and idle
 * connections closed after the timeout; a UDP burst into a small receive
 * buffer, where every datagram sent is either received or a kernel drop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openIdleConnections,
  sendTcpLines,
  syslogLine,
  udpBurst,
  type IdleConnections,
} from '../../../bench/hostile-syslog-lib.js';
import { SyslogReceiver, type SyslogReceiverConfig } from '../../../collector/syslog/syslog-receiver.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { SqliteSyslogStore } from '../../../storage/syslog/sqlite-syslog-store.js';

const CONFIG: SyslogReceiverConfig = {
  host: '127.0.0.1',
  port: 0,
  udp: false,
  tcp: true,
  batchSize: 100,
  flushIntervalMs: 30,
  maxMessageBytes: 8192,
  maxQueue: 100_000,
  timezone: 'UTC',
};

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('SyslogReceiver under hostile senders', () => {
  let dir: string;
  let store: SqliteSyslogStore;
  let receiver: SyslogReceiver | undefined;
  let idle: IdleConnections | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-receiver-hostile-'));
    store = new SqliteSyslogStore(openSqlClient(`sqlite:${join(dir, 'syslog.sqlite')}`, dir));
    await store.ensureSchema();
  });

  afterEach(async () => {
    idle?.destroy();
    idle = undefined;
    await receiver?.close();
    receiver = undefined;
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const messages = async (marker: string): Promise<string[]> =>
    (await store.find({ message: marker }, { page: 1, perPage: 1000 })).map((r) => r.Message).sort();

  it('serves an honest TCP sender while 600 idle connections come from one other address, and closes the idle ones after the timeout', async () => {
    const idleMs = 2000;
    receiver = new SyslogReceiver(
      { ...CONFIG, maxConnections: 512, maxConnectionsPerAddress: 32, tcpIdleTimeoutMs: idleMs },
      { sink: store },
    );
    const { tcpPort } = await receiver.start();

    const openedAt = performance.now();
    idle = await openIdleConnections(tcpPort!, '127.0.0.2', 600);
    await until(() => receiver!.counters.tcpRejectedAddressLimit === 568);
    expect(receiver.openConnections).toBe(32);
    await until(() => idle!.open() === 32);

    // Another address is served: its messages are stored.
    const honest = Array.from({ length: 20 }, (_, i) => syslogLine(`honest-${String(i).padStart(2, '0')}`));
    await sendTcpLines(tcpPort!, '127.0.0.3', honest);
    await until(async () => (await messages('honest-')).length === 20);
    expect(await messages('honest-')).toEqual(honest.map((l) => l.slice(l.indexOf('honest-'))).sort());
    expect(receiver.counters.tcpRejectedConnectionLimit).toBe(0);

    // A sender that keeps talking is not idle: it stays connected past the timeout.
    const talker = connect({ port: tcpPort!, host: '127.0.0.1', localAddress: '127.0.0.4' });
    talker.on('error', () => undefined);
    let talkerClosed = false;
    talker.once('close', () => (talkerClosed = true));
    let said = 0;
    const talk = setInterval(() => talker.write(`${syslogLine(`talker-${said++}`)}\n`), idleMs / 4);
    const talkedLongEnough = sleep(idleMs * 1.5);

    // The idle ones are closed once the timeout has passed since they were accepted, never before, and counted.
    await until(() => idle!.open() === 0, idleMs + 5000);
    await talkedLongEnough;
    clearInterval(talk);
    expect(Math.min(...idle.closedAt.slice(-32)) - openedAt).toBeGreaterThanOrEqual(idleMs - 100);
    expect(receiver.counters.tcpIdleClosed).toBe(32);
    expect(talkerClosed).toBe(false);
    await new Promise<void>((r) => talker.end(() => r()));
    await until(async () => (await messages('talker-')).length === said);
    expect(said).toBeGreaterThanOrEqual(5);
    expect(receiver.counters.tcpIdleClosed).toBe(32);
  });

  it('refuses past maxConnections in all, counting it apart from the per-address limit', async () => {
    receiver = new SyslogReceiver(
      { ...CONFIG, maxConnections: 40, maxConnectionsPerAddress: 32, tcpIdleTimeoutMs: 0 },
      { sink: store },
    );
    const { tcpPort } = await receiver.start();
    idle = await openIdleConnections(tcpPort!, '127.0.0.2', 32);
    const more = await openIdleConnections(tcpPort!, '127.0.0.5', 20);
    try {
      await until(() => receiver!.counters.tcpRejectedConnectionLimit === 12);
      expect(receiver.openConnections).toBe(40);
      expect(receiver.counters.tcpRejectedAddressLimit).toBe(0);
    } finally {
      more.destroy();
    }
  });

  it('retries a refused write after a pause instead of once per arriving message, and loses nothing', async () => {
    let attempts = 0;
    let busy = true;
    const sink = {
      insertEvents: async (events: readonly unknown[]): Promise<void> => {
        attempts++;
        if (busy) throw new Error('SQLITE_BUSY');
        await store.insertEvents(events as never);
      },
    };
    receiver = new SyslogReceiver({ ...CONFIG, udp: true, tcp: false, batchSize: 10, flushIntervalMs: 20 }, { sink });
    const { udpPort } = await receiver.start();
    for (let i = 0; i < 500; i++) {
      await udpBurst(udpPort!, 1, () => Buffer.from(syslogLine(`busy-${i}`)));
      if (i % 50 === 49) await sleep(20);
    }
    await until(() => receiver!.counters.receivedUdp === 500);
    // Each of 500 arrivals past a full batch would have tried (and failed) a write; the pauses keep it to a few.
    expect(attempts).toBeLessThan(30);
    busy = false;
    await until(() => receiver!.counters.stored === 500, 5000);
    expect(receiver.counters.dropped).toBe(0);
    expect((await messages('busy-')).length).toBe(500);
  });

  it.skipIf(process.platform !== 'linux')(
    'accounts for every datagram of a burst into a small receive buffer: received + kernel drops = sent',
    async () => {
      const sent = 20_000;
      receiver = new SyslogReceiver({ ...CONFIG, udp: true, tcp: false, receiveBuffer: 64 * 1024 }, { sink: store });
      const { udpPort } = await receiver.start();
      expect(receiver.udpStats()).toMatchObject({ receiveBufferRequested: 65536, receiveBufferGranted: 65536, kernelDrops: 0 });

      const { sendErrors } = await udpBurst(udpPort!, sent, (i) => Buffer.from(syslogLine(`burst-${i}`)));
      expect(sendErrors).toBe(0);
      // Quiet: nothing more arrives.
      let last = -1;
      await until(async () => {
        const n = receiver!.counters.receivedUdp;
        if (n === last) return true;
        last = n;
        await sleep(200);
        return false;
      });
      const received = receiver.counters.receivedUdp;
      const drops = receiver.udpStats()!.kernelDrops!;
      // The buffer did overflow, and what the kernel dropped is no longer invisible.
      expect(drops).toBeGreaterThan(0);
      expect(Math.abs(received + drops - sent)).toBeLessThanOrEqual(sent * 0.01);
      await receiver.flush();
      expect(receiver.counters.stored).toBe(received);
    },
  );
});
