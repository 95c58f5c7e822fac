/** `netsvc status` with a syslog receiver running: its counters in the JSON report and the table. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdleConnections, syslogLine, udpBurst } from '../../../bench/hostile-syslog-lib.js';
import { SyslogReceiver } from '../../../collector/syslog/syslog-receiver.js';
import { openSqlClient } from '../../../storage/sql/open-sql-client.js';
import { SqliteSyslogStore } from '../../../storage/syslog/sqlite-syslog-store.js';
import { formatStatus, parseMetrics, statusFromSamples } from '../../../src/commands/status-run.js';
import { createMetrics } from '../../../src/metrics.js';

describe('netsvc status: syslog receiver', () => {
  let dir: string;
  let store: SqliteSyslogStore;
  let receiver: SyslogReceiver;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-status-syslog-'));
    store = new SqliteSyslogStore(openSqlClient(`sqlite:${join(dir, 'syslog.sqlite')}`, dir));
    await store.ensureSchema();
    receiver = new SyslogReceiver(
      {
        host: '127.0.0.1',
        port: 0,
        udp: true,
        tcp: true,
        batchSize: 10,
        flushIntervalMs: 20,
        maxMessageBytes: 2048,
        maxQueue: 100,
        timezone: 'UTC',
        maxConnectionsPerAddress: 1,
        receiveBuffer: 65536,
      },
      { sink: store },
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reports received, stored, kernel drops and refused connections', async () => {
    const { udpPort, tcpPort } = await receiver.start();
    await udpBurst(udpPort!, 5, (i) => Buffer.from(syslogLine(`status-${i}`)));
    const idle = await openIdleConnections(tcpPort!, '127.0.0.2', 2);
    try {
      for (
        const end = Date.now() + 5000;
        (receiver.counters.stored < 5 || receiver.counters.tcpRejectedAddressLimit < 1) && Date.now() < end;
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const metrics = createMetrics();
      metrics.addSyslogReceiver(receiver);
      const report = statusFromSamples('http://x/metrics', parseMetrics(await metrics.text()));
      expect(report.syslog).toMatchObject({
        receivedUdp: 5,
        receivedTcp: 0,
        stored: 5,
        dropped: 0,
        queueDepth: 0,
        tcpOpen: 1,
        tcpRejected: { address_limit: 1, connection_limit: 0, closing: 0 },
        tcpIdleClosed: 0,
      });
      if (process.platform === 'linux') expect(report.syslog).toMatchObject({ kernelDrops: 0, receiveBuffer: 65536 });
      const text = formatStatus(report);
      expect(text).toMatch(/^syslog: received udp 5 .*stored 5, queued 0, dropped 0/m);
      expect(text).toMatch(/^syslog tcp: 1 open, 1 refused \(address_limit 1\), 0 closed idle$/m);
    } finally {
      idle.destroy();
    }
  });

  it('has no syslog part when no receiver reports', () => {
    const report = statusFromSamples('http://x/metrics', []);
    expect(report.syslog).toBeUndefined();
    expect(formatStatus(report)).not.toContain('syslog');
  });
});
