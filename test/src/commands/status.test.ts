import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SummarySink } from '../../../common/flow-sink.js';
import { createFlowListeners } from '../../../collector/listen/udp-listener.js';
import type { FlowListeners } from '../../../collector/listen/flow-listeners.js';
import { runCli } from '../../../src/cli.js';
import { formatStatus, metricsUrl } from '../../../src/commands/status-run.js';
import { loadConfig } from '../../../src/config.js';
import { createMetrics } from '../../../src/metrics.js';
import { captureCli } from '../../helpers/cli.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';
import { createSocket } from 'node:dgram';

const fixture = flowFixtures().find((f) => f.name === '1/pmacct-v9')!;
let server: Server;
let url: string;
let listeners: FlowListeners;

beforeAll(async () => {
  listeners = createFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, { sink: new SummarySink() });
  await listeners.start();
  const s = createSocket('udp4');
  const payloads = fixture.datagrams().map((d) => d.payload);
  for (const p of payloads)
    await new Promise<void>((r) => s.send(p, listeners.addresses().netflow!.port, '127.0.0.1', () => r()));
  s.close();
  while (listeners.sourceStats()[0]!.received < payloads.length) await new Promise((r) => setTimeout(r, 5));
  await listeners.idle();
  const metrics = createMetrics();
  metrics.addFlowStats(listeners);
  server = createServer((req, res) => {
    // Not netsvc's /health: a page that is not JSON, which status must leave out, not crash on.
    if (req.url === '/health') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>');
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    void metrics.text().then((t) => res.writeHead(200, { 'content-type': metrics.contentType }).end(t));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await listeners.close();
});

describe('netsvc status', () => {
  it('--json gives the counters of the running instance', async () => {
    const ctx = captureCli();
    expect(await runCli(['status', '--url', url, '--json'], ctx)).toBe(0);
    const report = JSON.parse(ctx.stdout.join(''));
    const ref = fixture.reference();
    expect(report.sources.netflow.total).toMatchObject({
      flows: ref.totals.flows,
      bytes: ref.totals.bytes,
      packetsInFlows: ref.totals.packets,
      packets: ref.datagrams_replayed,
    });
    expect(report.sources.netflow.exporters['127.0.0.1'].flows).toBe(ref.totals.flows);
    expect(report.sources.netflow.queueDrops).toBe(0);
    expect(report.databases).toBeUndefined();
  });

  it('prints a table with a row per source and per exporter', async () => {
    const ctx = captureCli();
    expect(await runCli(['status', '--url', url], ctx)).toBe(0);
    const lines = ctx.stdout.join('\n').split('\n');
    expect(lines[0]).toMatch(/^source\s+exporter\s+datagrams\s+flows\s+bytes/);
    const ref = fixture.reference();
    expect(lines.find((l) => l.startsWith('netflow'))).toContain(` ${ref.totals.flows} `);
    expect(lines.some((l) => /^\s+127\.0\.0\.1\s/.test(l))).toBe(true);
  });

  it('takes the base URL of an instance for its /metrics', async () => {
    const ctx = captureCli();
    expect(await runCli(['status', '--url', url.replace(/\/metrics$/, ''), '--json'], ctx)).toBe(0);
    const report = JSON.parse(ctx.stdout.join(''));
    expect(report.url).toBe(url);
    expect(report.sources.netflow.total.flows).toBe(fixture.reference().totals.flows);
  });

  it("refuses a page that is not netsvc's metrics instead of reporting nothing received", async () => {
    // This server's /health is an HTML page, as a console or a proxy would answer.
    const page = url.replace(/\/metrics$/, '/health');
    const ctx = captureCli();
    expect(await runCli(['status', '--url', page], ctx)).toBe(1);
    expect(ctx.stderr.join('')).toContain(`${page} did not answer netsvc's metrics (no netsvc_ counters)`);
    expect(ctx.stdout.join('')).toBe('');
  });

  it('asks /health beside the /metrics it was given, behind a path prefix too', async () => {
    // A proxy that serves the instance under /netsvc/.
    const proxy = createServer((req, res) => {
      if (req.url === '/netsvc/metrics') {
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('netsvc_auth_verifications_total 0\n');
      }
      if (req.url === '/netsvc/health') {
        const body = { status: 'ok', databases: [{ entity: 'default', area: 'hotspot', kind: 'sqlite', state: 'ok' }] };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    try {
      const ctx = captureCli();
      const at = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/netsvc/metrics`;
      expect(await runCli(['status', '--url', at], ctx)).toBe(0);
      expect(ctx.stdout.join('\n')).toContain('database hotspot default (sqlite): ok');
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it('says clearly when no instance answers', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const ctx = captureCli();
    expect(await runCli(['status', '--url', `http://127.0.0.1:${port}/metrics`], ctx)).toBe(1);
    expect(ctx.stderr.join('')).toMatch(/cannot reach netsvc at http:\/\/127\.0\.0\.1:\d+\/metrics/);
  });

  it("names each database's server, and leaves it out for an older serve whose /health has none", () => {
    const text = formatStatus({
      url,
      sources: {},
      sockets: {},
      databases: [
        { entity: 'default', area: 'hotspot', kind: 'postgres', state: 'ok' },
        { entity: 'branch', area: 'logviewer', state: 'ok' },
      ],
    });
    expect(text).toContain('database hotspot default (postgres): ok');
    expect(text).toContain('database logviewer branch: ok');
  });

  it('finds the instance from the configured HTTP address', () => {
    const env = { NETSVC_HTTP__HOST: '0.0.0.0', NETSVC_HTTP__PORT: '9191' };
    expect(metricsUrl(loadConfig({ env, cwd: '/nonexistent' }))).toBe('http://127.0.0.1:9191/metrics');
    expect(metricsUrl(loadConfig({ env: { NETSVC_HTTP__HOST: '::1' }, cwd: '/nonexistent' }))).toBe('http://[::1]:8080/metrics');
  });
});
