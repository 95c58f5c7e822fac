/**
 * The embedded syslog receiver's counters on the Prometheus registry: a real
 * receiver on an ephemeral loopback port, messages over UDP (and TCP), the
 * counters read back from the registry's exposition text; then the same
 * through `/metrics` of a running service.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendUdp } from '../helpers/net.js';
import { loopbackConfig } from '../helpers/service.js';
import { SyslogReceiver, type SyslogReceiverConfig } from '../../collector/syslog/syslog-receiver.js';
import { openSqlClient } from '../../storage/sql/open-sql-client.js';
import type { SqlClient } from '../../storage/sql/sql-client.js';
import { SqliteSyslogStore } from '../../storage/syslog/sqlite-syslog-store.js';
import { parseMetrics } from '../../src/commands/status-run.js';
import { createLogger } from '../../src/log.js';
import { startService, type ServiceHandle } from '../../src/main.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { freePort } from '../helpers/net.js';

const CONFIG: SyslogReceiverConfig = {
  host: '127.0.0.1',
  port: 0,
  udp: true,
  tcp: true,
  batchSize: 50,
  flushIntervalMs: 20,
  maxMessageBytes: 200,
  maxQueue: 1000,
  timezone: 'UTC',
};

/** One sample's value from the registry text; undefined when the series is absent. */
async function value(
  metrics: Metrics | (() => Promise<string>),
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = typeof metrics === 'function' ? await metrics() : await metrics.text();
  const hit = parseMetrics(text).find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hit?.value;
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('syslog receiver counters on the registry', () => {
  let dir: string;
  let store: SqliteSyslogStore;
  let raw: SqlClient;
  let receiver: SyslogReceiver;
  let ports: { udpPort?: number; tcpPort?: number };
  let metrics: Metrics;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-metrics-syslog-'));
    const url = `sqlite:${join(dir, 'syslog.sqlite')}`;
    store = new SqliteSyslogStore(openSqlClient(url, dir));
    await store.ensureSchema();
    raw = openSqlClient(url, dir);
    receiver = new SyslogReceiver(CONFIG, { sink: store });
    ports = await receiver.start();
    metrics = createMetrics();
    metrics.addSyslogReceiver(receiver);
  });

  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    await raw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has help and type for every series, all zero before the first message', async () => {
    const text = await metrics.text();
    expect(text).toContain('# TYPE netsvc_syslog_received_total counter');
    expect(text).toMatch(/# HELP netsvc_syslog_received_total Syslog messages received, by transport/);
    for (const n of ['stored', 'malformed', 'truncated', 'dropped', 'write_errors', 'tcp_connections', 'tcp_idle_closed']) {
      expect(text).toContain(`# TYPE netsvc_syslog_${n}_total counter`);
      expect(await value(metrics, `netsvc_syslog_${n}_total`), n).toBe(0);
    }
    expect(text).toContain('# TYPE netsvc_syslog_queue_depth gauge');
    expect(await value(metrics, 'netsvc_syslog_received_total', { transport: 'udp' })).toBe(0);
    for (const reason of ['address_limit', 'connection_limit', 'closing']) {
      expect(await value(metrics, 'netsvc_syslog_tcp_rejected_total', { reason }), reason).toBe(0);
    }
    // Linux: the UDP socket's drop counter and buffer, from the kernel.
    if (process.platform === 'linux') {
      expect(await value(metrics, 'netsvc_syslog_kernel_drops_total')).toBe(0);
      expect(await value(metrics, 'netsvc_syslog_receive_buffer_bytes')).toBeGreaterThan(0);
    }
  });

  it('counts messages per transport, stored, malformed and truncated, as the receiver does', async () => {
    const udp = ports.udpPort!;
    await sendUdp(udp, '<134>1 2026-01-02T03:04:05Z host-a app 12 - - a good RFC 5424 message');
    await sendUdp(udp, '<13>Jan  2 03:04:05 host-b sshd[12]: a good RFC 3164 message');
    await sendUdp(udp, 'no PRI and no header at all');
    await sendUdp(udp, `<14>1 2026-01-02T03:04:05Z host-c app - - - ${'x'.repeat(300)}`);
    const tcp = connect(ports.tcpPort!, '127.0.0.1');
    await new Promise<void>((r) => tcp.once('connect', () => r()));
    expect(await value(metrics, 'netsvc_syslog_tcp_open_connections')).toBe(1);
    await new Promise<void>((r) =>
      tcp.end('<13>1 2026-01-02T03:04:05Z h app - - - over tcp one\n<13>1 2026-01-02T03:04:05Z h app - - - over tcp two\n', () =>
        r(),
      ),
    );

    await until(async () => (await value(metrics, 'netsvc_syslog_stored_total')) === 6);
    await until(async () => (await value(metrics, 'netsvc_syslog_tcp_open_connections')) === 0);
    expect(await value(metrics, 'netsvc_syslog_received_total', { transport: 'udp' })).toBe(4);
    expect(await value(metrics, 'netsvc_syslog_received_total', { transport: 'tcp' })).toBe(2);
    expect(await value(metrics, 'netsvc_syslog_malformed_total')).toBe(1);
    expect(await value(metrics, 'netsvc_syslog_truncated_total')).toBe(1);
    expect(await value(metrics, 'netsvc_syslog_tcp_connections_total')).toBe(1);
    expect(await value(metrics, 'netsvc_syslog_dropped_total')).toBe(0);
    expect(await value(metrics, 'netsvc_syslog_write_errors_total')).toBe(0);
    expect(await value(metrics, 'netsvc_syslog_queue_depth')).toBe(0);
    // The rows are really there: what stored_total says is what SystemEvents holds.
    expect(Number((await raw.query<{ n: number }>('SELECT COUNT(*) AS n FROM SystemEvents'))[0]!.n)).toBe(6);
    // Every counter of the receiver is on the registry with the receiver's own number.
    const c = receiver.counters;
    expect({
      udp: c.receivedUdp,
      tcp: c.receivedTcp,
      stored: c.stored,
      malformed: c.malformed,
      truncated: c.truncated,
      dropped: c.dropped,
      writeErrors: c.writeErrors,
      conns: c.tcpConnections,
      rejected: c.tcpRejectedAddressLimit,
    }).toEqual({
      udp: await value(metrics, 'netsvc_syslog_received_total', { transport: 'udp' }),
      tcp: await value(metrics, 'netsvc_syslog_received_total', { transport: 'tcp' }),
      stored: await value(metrics, 'netsvc_syslog_stored_total'),
      malformed: await value(metrics, 'netsvc_syslog_malformed_total'),
      truncated: await value(metrics, 'netsvc_syslog_truncated_total'),
      dropped: await value(metrics, 'netsvc_syslog_dropped_total'),
      writeErrors: await value(metrics, 'netsvc_syslog_write_errors_total'),
      conns: await value(metrics, 'netsvc_syslog_tcp_connections_total'),
      rejected: await value(metrics, 'netsvc_syslog_tcp_rejected_total', { reason: 'address_limit' }),
    });
  });

  it('shows a failing database: write errors, the queue held back, then what overflowed as dropped', async () => {
    const small = new SyslogReceiver(
      { ...CONFIG, tcp: false, batchSize: 2, maxQueue: 3, flushIntervalMs: 60_000 },
      { sink: store },
    );
    const { udpPort } = await small.start();
    const m = createMetrics();
    m.addSyslogReceiver(small);
    try {
      // The table disappears under the receiver (a restored dump, an operator's mistake).
      await raw.execute('DROP TABLE SystemEvents');
      for (let i = 0; i < 6; i++) await sendUdp(udpPort!, `<13>1 2026-01-02T03:04:05Z h app - - - lost or kept ${i}`);
      await until(async () => (await value(m, 'netsvc_syslog_received_total', { transport: 'udp' })) === 6);
      await small.flush();
      expect(await value(m, 'netsvc_syslog_write_errors_total')).toBeGreaterThanOrEqual(1);
      expect(await value(m, 'netsvc_syslog_dropped_total')).toBe(3);
      expect(await value(m, 'netsvc_syslog_queue_depth')).toBe(3);
      expect(await value(m, 'netsvc_syslog_stored_total')).toBe(0);
      // The table is back: the held messages are written.
      await store.ensureSchema();
      await small.flush();
      expect(await value(m, 'netsvc_syslog_stored_total')).toBe(3);
      expect(await value(m, 'netsvc_syslog_queue_depth')).toBe(0);
      expect(await value(m, 'netsvc_syslog_write_errors_total')).toBe(small.counters.writeErrors);
    } finally {
      await small.close();
    }
    // A scrape after the receiver closed (serve shutting down) still answers.
    expect(await value(m, 'netsvc_syslog_stored_total')).toBe(3);
  });

  it('exposes no syslog series when no receiver runs', async () => {
    expect(await createMetrics().text()).not.toContain('netsvc_syslog_');
  });
});

describe('netsvc serve: the receiver counters on /metrics', () => {
  let dir: string;
  let service: ServiceHandle;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-serve-metrics-'));
    port = await freePort();
    const config = loopbackConfig(dir, {
      syslogReceiver: { host: '127.0.0.1', port, flushIntervalMs: 20 },
    });
    service = await startService(config, { logger: createLogger('silent'), now: Date.now });
  });

  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts a datagram sent to the running service', async () => {
    const scrape = async () => (await fetch(`${service.url}/metrics`)).text();
    await sendUdp(port, '<13>1 2026-01-02T03:04:05Z h app - - - to the service');
    await until(async () => (await value(scrape, 'netsvc_syslog_stored_total')) === 1);
    expect(await value(scrape, 'netsvc_syslog_received_total', { transport: 'udp' })).toBe(1);
    expect(await value(scrape, 'netsvc_syslog_received_total', { transport: 'tcp' })).toBe(0);
  });
});
