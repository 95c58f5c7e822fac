import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync as mkdtemp, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import type { ImportReport } from '../../../src/commands/import-run.js';
import { listCaptureFiles, scanFlows } from '../../../storage/capture/reader.js';
import { captureCli } from '../../helpers/cli.js';
import { flowFixtures, freeUdpPort } from '../../helpers/flow-fixtures.js';
import { LOOPBACK_LISTENERS } from '../../helpers/service.js';

const made: string[] = [];
/** A temporary directory removed after the file's tests. */
function mkdtempSync(prefix: string): string {
  const d = mkdtemp(prefix);
  made.push(d);
  return d;
}
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

async function importJson(args: string[]): Promise<ImportReport> {
  const ctx = captureCli();
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-import-'));
  const code = await runCli(['import', '--json', '--data-dir', dir, ...args], ctx);
  expect(code, ctx.stderr.join('')).toBe(0);
  return JSON.parse(ctx.stdout.join('')) as ImportReport;
}

const fixtures = flowFixtures();

describe('netsvc import --json against nfdump on the committed references', () => {
  for (const f of fixtures) {
    it(`${f.name}: totals, per protocol and nfdump -I groups`, async () => {
      const r = await importJson([f.pcap]);
      const ref = f.reference();
      expect({ flows: r.flows, bytes: r.bytes, packets: r.packets }).toEqual(ref.totals);
      const protocols = Object.fromEntries(
        ref.protocols_by_bytes.map((p) => [String(p.number), { flows: p.flows, bytes: p.bytes, packets: p.packets }]),
      );
      expect(r.protocols).toEqual(protocols);
      const i = ref.nfcapd_file_stats;
      for (const g of ['tcp', 'udp', 'icmp', 'other'] as const) {
        expect(r.nfdumpGroups[g], g).toEqual({ flows: i[`flows_${g}`], bytes: i[`bytes_${g}`], packets: i[`packets_${g}`] });
      }
      expect(r.datagrams).toBe(ref.datagrams_replayed);
      expect(r.counters.malformed).toBe(0);
      expect(r.files[0]).toMatchObject({ format: 'pcap', udpDatagrams: ref.datagrams_replayed, fileErrors: 0 });
    });
  }

  it('takes the received time from the pcap records', async () => {
    const f = fixtures[0]!;
    const times = f.datagrams().map((d) => d.timeMs);
    const r = await importJson([f.pcap]);
    expect(r.firstReceived).toBe(new Date(Math.min(...times)).toISOString());
    expect(r.lastReceived).toBe(new Date(Math.max(...times)).toISOString());
  });

  it('imports several files into one source, in order', async () => {
    const a = fixtures.find((f) => f.name === '1/softflowd-v5')!;
    const b = fixtures.find((f) => f.name === '2/pmacct-v10')!;
    const r = await importJson([a.pcap, b.pcap]);
    expect(r.flows).toBe(a.reference().totals.flows + b.reference().totals.flows);
    expect(r.files.map((x) => x.file)).toEqual([a.pcap, b.pcap]);
  });
});

describe('netsvc import options', () => {
  const f = fixtures.find((x) => x.name === '1/softflowd-v9')!;
  const port: number = JSON.parse(readFileSync(join(f.dir, 'export.pcap.meta.json'), 'utf8')).port;

  it('--port keeps only datagrams sent to that port', async () => {
    expect((await importJson(['--port', String(port), f.pcap])).flows).toBe(f.reference().totals.flows);
    const other = await importJson(['--port', String(port + 1), f.pcap]);
    expect(other.flows).toBe(0);
    expect(other.files[0]!.otherPort).toBe(f.reference().datagrams_replayed);
  });

  it("applies the source's configured sampling override", async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'netsvc-import-')), 'c.json');
    writeFileSync(
      config,
      JSON.stringify({
        flowSources: { edge: { listen: '127.0.0.1:0', sampling: { '127.0.0.1': 10 } } },
        entities: { default: { flowSources: ['edge'] } },
      }),
    );
    const r = await importJson(['--config', config, '--source', 'edge', f.pcap]);
    expect(r.source).toBe('edge');
    expect(r.flows).toBe(f.reference().totals.flows);
    expect(r.bytes).toBe(f.reference().totals.bytes * 10);
    expect(r.packets).toBe(f.reference().totals.packets * 10);
  });

  it('reads what it can of a damaged file and reports it', async () => {
    const bytes = readFileSync(f.pcap);
    const cut = join(mkdtempSync(join(tmpdir(), 'netsvc-import-')), 'cut.pcap');
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const r = await importJson([cut]);
    expect(r.files[0]!.fileErrors).toBe(1);
    expect(r.datagrams).toBeGreaterThan(0);
    expect(r.datagrams).toBeLessThan(f.reference().datagrams_replayed);
    expect(r.flows).toBeLessThan(f.reference().totals.flows);
  });

  it('stores the flows in sealed hourly capture files of the source', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-import-'));
    const ctx = captureCli();
    expect(await runCli(['import', '--json', '-d', dataDir, '--source', 'lentor', f.pcap], ctx), ctx.stderr.join('')).toBe(0);
    const r = JSON.parse(ctx.stdout.join('')) as ImportReport;
    expect(r.stored).toMatchObject({ dir: join(dataDir, 'flows', 'lentor'), rowsWritten: r.flows, writeErrors: 0 });
    expect(r.stored!.files.length).toBeGreaterThan(0);
    let rows = 0;
    let bytes = 0;
    for (const batch of scanFlows(r.stored!.files)) {
      rows += batch.length;
      for (let i = 0; i < batch.length; i++) bytes += batch.cols.bytes[i]!;
    }
    expect({ rows, bytes }).toEqual({ rows: f.reference().totals.flows, bytes: f.reference().totals.bytes });
    // --no-store leaves the data directory alone.
    const bare = mkdtempSync(join(tmpdir(), 'netsvc-import-'));
    expect(await runCli(['import', '--no-store', '-d', bare, f.pcap], captureCli())).toBe(0);
    expect(existsSync(join(bare, 'flows'))).toBe(false);
  });

  it('prints a readable summary without --json', async () => {
    const ctx = captureCli();
    expect(await runCli(['import', f.pcap, '-d', mkdtempSync(join(tmpdir(), 'netsvc-import-'))], ctx)).toBe(0);
    const text = ctx.stdout.join('\n');
    const t = f.reference().totals;
    expect(text).toContain(`${t.flows} flows, ${t.bytes} bytes, ${t.packets} packets`);
  });

  it('refuses missing files and bad options with exit code 2', async () => {
    for (const args of [['/nonexistent.pcap'], ['--port', '0', f.pcap], ['--source', 'a/b', f.pcap]]) {
      const ctx = captureCli();
      expect(await runCli(['import', ...args], ctx), args.join(' ')).toBe(2);
      expect(ctx.stderr.join('')).toMatch(/^netsvc: /);
    }
  });
});

describe('netsvc import next to a running netsvc serve on the same data directory', () => {
  const f = fixtures.find((x) => x.name === '1/softflowd-v9')!;
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  async function serve(dataDir: string, udpPort: number): Promise<ChildProcess> {
    const env = {
      ...process.env,
      ...LOOPBACK_LISTENERS,
      NETSVC_FLOW_SOURCES: JSON.stringify({ netflow: { listen: `127.0.0.1:${udpPort}` }, lentor: { listen: '127.0.0.1:0' } }),
      NETSVC_HTTP__PORT: '0',
      NETSVC_CAPTURE__FLUSH_INTERVAL_MS: '300',
    };
    const child = spawn(process.execPath, [resolve('dist/src/cli.js'), 'serve', '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`serve did not start: ${out} ${err}`)), 20_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('netsvc listening')) {
          clearTimeout(timer);
          ok();
        }
      });
      child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${err}`)));
    });
    return child;
  }

  it('refuses to import while serve writes the data directory; serve keeps its flows', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-import-serve-'));
    const udpPort = await freeUdpPort();
    const child = await serve(dataDir, udpPort);
    const sock = createSocket('udp4');
    for (const d of f.datagrams()) await new Promise<void>((r) => sock.send(d.payload, udpPort, '127.0.0.1', () => r()));
    await new Promise<void>((r) => sock.close(() => r()));
    await new Promise((r) => setTimeout(r, 1500)); // several flush intervals
    const dir = join(dataDir, 'flows', 'netflow');
    const open = readdirSync(dir).filter((n) => n.startsWith('nfcapd.current.'));
    expect(open).toHaveLength(1);

    const ctx = captureCli();
    expect(await runCli(['import', '--data-dir', dataDir, f.pcap], ctx)).toBe(1);
    const msg = ctx.stderr.join('\n');
    expect(msg.split('\n')).toHaveLength(1);
    expect(msg).toContain(`pid ${child.pid}`);
    expect(msg).toContain('--data-dir');
    // Serve's open file was left alone: nothing was sealed under it.
    expect(readdirSync(dir)).toEqual(open);
    // --no-store writes nothing, so it may run.
    expect(await runCli(['import', '--no-store', '--data-dir', dataDir, f.pcap], captureCli())).toBe(0);

    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(dataDir, 'flows', 'serve.lock'))).toBe(false);
    // Every flow serve received is in its files (the open hour stays open across a restart).
    let rows = 0;
    for (const batch of scanFlows(listCaptureFiles(dataDir, 'netflow', 'UTC'))) rows += batch.length;
    expect(rows).toBe(f.reference().totals.flows);
  });

  it('takes over a lock left by a process that is gone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-import-serve-'));
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(join(dataDir, 'flows'), { recursive: true });
    writeFileSync(join(dataDir, 'flows', 'serve.lock'), `${dead.stdout} serve\n`);
    const ctx = captureCli();
    expect(await runCli(['import', '--json', '--data-dir', dataDir, f.pcap], ctx), ctx.stderr.join('')).toBe(0);
    expect((JSON.parse(ctx.stdout.join('')) as ImportReport).stored!.rowsWritten).toBe(f.reference().totals.flows);
    expect(existsSync(join(dataDir, 'flows', 'serve.lock'))).toBe(false);
  });
});
