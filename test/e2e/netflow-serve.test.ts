/**
 * `netsvc serve` end to end: export datagrams over UDP into the running
 * service, answered by the netflow API; then kill -9 during ingest and a
 * restart: every flow received more than one flush interval before the kill
 * is still there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../collector/decode/decoder.js';
import { FlowBatch } from '../../common/flow-batch.js';
import { runCli } from '../../src/cli.js';
import { processContext, type CliContext } from '../../src/commands/context.js';
import { flowFixtures, freeUdpPort } from '../helpers/flow-fixtures.js';
import { getJson, postJson } from '../helpers/http.js';
import { nfdumpReference } from '../helpers/netflow-data.js';

const CLI = resolve('dist/src/cli.js');
const FLUSH_MS = 500;

describe('netsvc serve: flows over UDP to the netflow API, surviving kill -9', () => {
  const children: ChildProcess[] = [];
  let dir: string;
  let config: string;
  let udpPort: number;
  let credentials: { api_id: string; secret: string };
  const a = flowFixtures().find((f) => f.name === '1/softflowd-v9')!;
  const b = flowFixtures().find((f) => f.name === '2/softflowd-v10')!;

  async function serve(configPath = config): Promise<{ child: ChildProcess; url: string; out: () => string }> {
    const child = spawn(process.execPath, [CLI, 'serve', '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`serve did not start: ${out} ${err}`)), 20_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          ok(m[1]!);
        }
      });
      child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${err}`)));
    });
    return { child, url, out: () => out };
  }

  async function send(fixture: typeof a): Promise<void> {
    await sendPayloads(fixture.datagrams().map((d) => d.payload));
  }

  async function sendPayloads(payloads: Buffer[]): Promise<void> {
    const sock = createSocket('udp4');
    for (const p of payloads) await new Promise<void>((r) => sock.send(p, udpPort, '127.0.0.1', () => r()));
    await new Promise<void>((r) => sock.close(() => r()));
  }

  async function token(url: string): Promise<string> {
    return (await postJson(`${url}/svc/api/netflow/auth`, credentials)).body.result.access_token;
  }

  const window = () => {
    // Three hours around now, so a run that crosses an hour boundary still sees everything.
    const now = Date.now();
    const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(/-/g, '/').replace('T', ' ');
    return new URLSearchParams({ start: fmt(now - 3_600_000), end: fmt(now + 3_600_000) });
  };

  /** Writes a configuration for serve: UDP on `udpPort`, the admin store of the first data dir. */
  function writeConfig(
    name: string,
    dataDir: string,
    flushIntervalMs: number,
    dnsPort: number,
    receiveBuffer = 8 * 1024 * 1024,
  ): string {
    const path = join(dir, name);
    writeFileSync(
      path,
      JSON.stringify({
        dataDir,
        timezone: 'UTC',
        http: { host: '127.0.0.1', port: 0 },
        log: { level: 'info' },
        admin: { database: `sqlite:${join(dir, 'data', 'admin.sqlite')}` },
        flowSources: { netflow: { listen: `127.0.0.1:${udpPort}`, receiveBuffer }, lentor: { listen: '127.0.0.1:0' } },
        capture: { flushIntervalMs },
        dns: { servers: [`127.0.0.1:${dnsPort}`], timeoutMs: 200 },
        entities: { default: { flowSources: ['netflow', 'lentor'] } },
      }),
    );
    return path;
  }

  let hupConfig: string;
  let smallBufferConfig: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-serve-'));
    udpPort = await freeUdpPort();
    const dnsPort = await freeUdpPort(); // nothing answers there: reverse lookups stay on loopback
    config = writeConfig('netsvc.config.json', join(dir, 'data'), FLUSH_MS, dnsPort);
    // Flushes only when told: rows reach the capture file on SIGHUP, or not before 10 minutes.
    hupConfig = writeConfig('hup.config.json', join(dir, 'data-hup'), 600_000, dnsPort);
    smallBufferConfig = writeConfig('small-buffer.config.json', join(dir, 'data-small'), FLUSH_MS, dnsPort, 64 * 1024);
    const lines: string[] = [];
    const ctx: CliContext = { ...processContext(), out: (t) => lines.push(t), err: () => undefined };
    expect(await runCli(['admin', 'entity', 'add', 'default', '--areas', 'netflow', '--config', config], ctx)).toBe(0);
    expect(await runCli(['admin', 'user', 'add', 'default', 'alice', '--areas', 'netflow', '--config', config], ctx)).toBe(0);
    lines.length = 0;
    expect(await runCli(['admin', 'credentials', 'issue', 'default', 'alice', '--json', '--config', config], ctx)).toBe(0);
    credentials = JSON.parse(lines.join(''));
  });

  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers kpi and flows for datagrams received live, and keeps them across kill -9', async () => {
    const first = await serve();
    await send(a);
    await new Promise((r) => setTimeout(r, FLUSH_MS * 3)); // well past one flush interval
    const t = await token(first.url);
    const before = (await getJson(`${first.url}/svc/api/netflow/kpi?${window()}`, t)).body.result;
    const ref = nfdumpReference(a).totals;
    expect(before.meta.source).toBe('fallback');
    expect({ flows: before.kpi.active_flows, bytes: before.kpi.total_bytes }).toEqual({ flows: ref.flows, bytes: ref.bytes });
    const flows = (await getJson(`${first.url}/svc/api/netflow/flows?${window()}`, t)).body.result;
    expect(flows.total).toBe(200);

    // More datagrams, then kill -9 at once: those may be lost, the earlier ones may not.
    await send(b);
    const killed = new Promise<void>((r) => first.child.once('exit', () => r()));
    first.child.kill('SIGKILL');
    await killed;

    const second = await serve();
    const t2 = await token(second.url);
    const after = (await getJson(`${second.url}/svc/api/netflow/kpi?${window()}`, t2)).body.result;
    expect(after.kpi.active_flows).toBeGreaterThanOrEqual(ref.flows);
    expect(after.kpi.active_flows).toBeLessThanOrEqual(ref.flows + nfdumpReference(b).totals.flows);
    for (const p of before.protocols as Array<{ proto_num: number; flows: number; bytes: number }>) {
      const now = (after.protocols as Array<{ proto_num: number; flows: number; bytes: number }>).find(
        (x) => x.proto_num === p.proto_num,
      );
      expect(now?.flows ?? 0).toBeGreaterThanOrEqual(p.flows);
      expect(now?.bytes ?? 0).toBeGreaterThanOrEqual(p.bytes);
    }
    const exited = new Promise<number | null>((r) => second.child.once('exit', (code) => r(code)));
    second.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('SIGHUP during ingest writes every received flow and keeps serving; the flows outlive a kill -9 right after', async () => {
    const first = await serve(hupConfig);
    await send(a);
    await new Promise((r) => setTimeout(r, FLUSH_MS * 3));
    const ref = nfdumpReference(a).totals;
    const flowsIn = async (url: string, t: string): Promise<number> =>
      (await getJson(`${url}/svc/api/netflow/kpi?${window()}`, t)).body.result.kpi.active_flows;
    const t = await token(first.url);
    // Received but held for the next flush, ten minutes away.
    expect(await flowsIn(first.url, t)).toBe(0);

    const hups = (): number => first.out().split('received data written; still running').length - 1;
    // A hang-up while datagrams keep arriving: nothing is lost, nothing stops.
    const more = (async () => {
      for (let loop = 0; loop < 3; loop++) await send(a);
    })();
    first.child.kill('SIGHUP');
    await more;
    for (let i = 0; i < 50 && hups() < 1; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, FLUSH_MS * 3));
    first.child.kill('SIGHUP');
    for (let i = 0; i < 50 && hups() < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(first.out()).toContain('"signal":"SIGHUP"');
    let flows = 0;
    for (let i = 0; i < 50 && flows !== 4 * ref.flows; i++) {
      flows = await flowsIn(first.url, t);
      if (flows !== 4 * ref.flows) await new Promise((r) => setTimeout(r, 100));
    }
    expect(flows).toBe(4 * ref.flows);
    expect(first.child.exitCode).toBeNull();
    expect(first.child.signalCode).toBeNull();

    const killed = new Promise<void>((r) => first.child.once('exit', () => r()));
    first.child.kill('SIGKILL');
    await killed;
    const second = await serve(hupConfig);
    expect(await flowsIn(second.url, await token(second.url))).toBe(4 * ref.flows);
    const exited = new Promise<number | null>((r) => second.child.once('exit', (code) => r(code)));
    second.child.kill('SIGQUIT');
    expect(await exited).toBe(0);
  });

  it.runIf(process.platform === 'linux')(
    'counts in /metrics and netsvc status the datagrams the kernel dropped while serve was not reading',
    async () => {
      const s = await serve(smallBufferConfig);
      const payloads = a.datagrams().map((d) => d.payload);
      const metric = async (name: string): Promise<number> => {
        const text = await (await fetch(`${s.url}/metrics`)).text();
        const line = text
          .split('\n')
          .find((l) => l.startsWith(`${name}{`) && (l.includes(`:${udpPort}"`) || l.includes('source="netflow"')));
        return Number(line?.split(' ').pop());
      };
      expect(await metric('netsvc_flow_kernel_drops_total')).toBe(0);
      const received = await metric('netsvc_flow_received_datagrams_total');
      // Stopped, serve reads nothing: 100 loops of the capture overflow a 64 KiB buffer many times over.
      s.child.kill('SIGSTOP');
      let sent = 0;
      try {
        for (let loop = 0; loop < 100; loop++) {
          await sendPayloads(payloads);
          sent += payloads.length;
        }
      } finally {
        s.child.kill('SIGCONT');
      }
      let drops = 0;
      let got = 0;
      for (let i = 0; i < 50 && drops + got - received < sent; i++) {
        await new Promise((r) => setTimeout(r, 200));
        drops = await metric('netsvc_flow_kernel_drops_total');
        got = await metric('netsvc_flow_received_datagrams_total');
      }
      expect(drops).toBeGreaterThan(0);
      // Every datagram sent was either received or dropped by the kernel, and counted as such.
      expect(got - received + drops).toBe(sent);
      const status: string[] = [];
      const ctx: CliContext = { ...processContext(), out: (t) => status.push(t), err: () => undefined };
      expect(await runCli(['status', '--url', `${s.url}/metrics`], ctx)).toBe(0);
      expect(status.join('\n')).toContain(`kernel drops ${drops}`);
      const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
      s.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );

  // From a runner at nice 0 (from a niced one, nice 10 would be a raise, which is refused).
  it.runIf(process.platform === 'linux' && getPriority() === 0)(
    'runs every thread but the flow socket thread at nice 10, so the socket is read first',
    async () => {
      const s = await serve();
      // Logged while the flow path starts, before the service logs its URL.
      const line = s
        .out()
        .split('\n')
        .find((l) => l.includes('"ingestThread"'));
      expect(line).toBeDefined();
      const { ingestThread, nice, failed } = JSON.parse(line!) as { ingestThread: number; nice: number; failed: number };
      expect({ nice, failed }).toEqual({ nice: 10, failed: 0 });
      // undefined for a thread that ended between the listing and the read.
      const niceOf = (tid: string): number | undefined => {
        try {
          const stat = readFileSync(`/proc/${s.child.pid}/task/${tid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]); // field 19 of stat(5)
        } catch {
          return undefined;
        }
      };
      const threads = readdirSync(`/proc/${s.child.pid}/task`);
      expect(threads).toContain(String(ingestThread));
      expect(niceOf(String(ingestThread))).toBe(0);
      const others = threads.map((t) => (t === String(ingestThread) ? undefined : niceOf(t))).filter((n) => n !== undefined);
      expect(others.length).toBeGreaterThan(2); // main, V8's helpers, libuv's pool
      expect(others).toEqual(others.map(() => 10));
      const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
      s.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );

  it('keeps templates learned 1.5 s before a kill -9: data-only datagrams after the restart decode', async () => {
    // A v9 source id no earlier test used, so no template saved before counts.
    const payloads = flowFixtures()
      .find((f) => f.name === '1/pmacct-v9')!
      .datagrams()
      .map((d) => {
        const p = Buffer.from(d.payload);
        p.writeUInt32BE(0x4b494c4c, 16);
        return p;
      });
    const hasTemplate = (p: Buffer): boolean => {
      for (let o = 20; o + 4 <= p.length;) {
        const len = p.readUInt16BE(o + 2);
        if (p.readUInt16BE(o) < 256) return true;
        if (len < 4) break;
        o += len;
      }
      return false;
    };
    const templates = payloads.filter(hasTemplate);
    const dataOnly = payloads.filter((p) => !hasTemplate(p));
    // What the data-only datagrams hold, decoded with the templates known.
    const decoder = createFlowDecoder();
    const batch = new FlowBatch();
    for (const p of templates) decoder.decode(p, exporterRef('127.0.0.1'), Date.now(), batch);
    batch.clear();
    for (const p of dataOnly) decoder.decode(p, exporterRef('127.0.0.1'), Date.now(), batch);
    expect(batch.length).toBeGreaterThan(0);

    const first = await serve();
    await sendPayloads(templates);
    await new Promise((r) => setTimeout(r, 1500));
    const killed = new Promise<void>((r) => first.child.once('exit', () => r()));
    first.child.kill('SIGKILL');
    await killed;

    const second = await serve();
    const t = await token(second.url);
    const flows = async (): Promise<number> =>
      (await getJson(`${second.url}/svc/api/netflow/kpi?${window()}`, t)).body.result.kpi.active_flows;
    const before = await flows();
    await sendPayloads(dataOnly);
    await new Promise((r) => setTimeout(r, FLUSH_MS * 3));
    expect((await flows()) - before).toBe(batch.length);
    const exited = new Promise<number | null>((r) => second.child.once('exit', (code) => r(code)));
    second.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
