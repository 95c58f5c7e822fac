/**
 * Acceptance: the same export datagrams go into nfcapd (replayed over UDP on
 * loopback) and into netsvc (`netsvc import` of the same pcap, its record
 * times moved to one hour per capture); for every hour and for the window
 * over all of them, the netflow API's KPI, top lists and flow list equal
 * what nfdump 1.7 prints for the corresponding nfcapd files.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { AuthService } from '../../api/auth.js';
import { createNetflowRoutes } from '../../api/routes/netflow.js';
import { protocolName } from '../../api/routes/netflow-format.js';
import { runCli } from '../../src/cli.js';
import { processContext, type CliContext } from '../../src/commands/context.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { SqliteAdminStore } from '../../storage/admin/sqlite-admin-store.js';
import type { ReverseDns } from '../../storage/dns/reverse-dns.js';
import { CaptureNetflowQuery } from '../../storage/kpi/capture-netflow-query.js';
import { serviceName } from '../../storage/kpi/iana-names.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
import { createLogger } from '../../src/log.js';
import { flowFixtures, freeUdpPort, hasProgram, requireAll, type FlowFixture } from '../helpers/flow-fixtures.js';
import { getJson, postJson, serveOnLoopback, type TestServer } from '../helpers/http.js';

const HOUR = 3_600_000;
const H0 = Date.parse('2026-03-25T08:00:00Z');
const haveNfdump = hasProgram('nfdump') && hasProgram('nfcapd', '-h');
if (!haveNfdump && requireAll) throw new Error('nfdump/nfcapd are required (NETSVC_REQUIRE_ALL=1)');

/** Copy of a classic pcap with every record time moved so the first one is at `firstMs`. */
function shiftPcap(data: Buffer, firstMs: number): Buffer {
  const out = Buffer.from(data);
  if (out.readUInt32LE(0) !== 0xa1b2c3d4) throw new Error('expected a little-endian microsecond pcap');
  let delta: number | undefined;
  for (let o = 24; o + 16 <= out.length;) {
    const sec = out.readUInt32LE(o);
    delta ??= Math.floor(firstMs / 1000) - sec;
    out.writeUInt32LE(sec + delta, o);
    o += 16 + out.readUInt32LE(o + 8);
  }
  return out;
}

/** Replays a capture's datagrams into a fresh nfcapd and returns its file (nfcapd stopped). */
async function nfcapdFile(fixture: FlowFixture, dir: string, children: ChildProcess[]): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const port = await freeUdpPort();
  const child = spawn('nfcapd', ['-w', dir, '-b', '127.0.0.1', '-p', String(port), '-t', '3600'], { stdio: 'ignore' });
  children.push(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise((r) => setTimeout(r, 400)); // nfcapd binds
  const sock = createSocket('udp4');
  for (const d of fixture.datagrams()) {
    await new Promise<void>((r) => sock.send(d.payload, port, '127.0.0.1', () => r()));
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise<void>((r) => sock.close(() => r()));
  await new Promise((r) => setTimeout(r, 300));
  child.kill('SIGTERM');
  await exited;
  const files = readdirSync(dir).filter((n) => /^nfcapd\.\d{12}$/.test(n));
  if (files.length !== 1) throw new Error(`nfcapd left ${files.join(', ') || 'no file'} in ${dir}`);
  return join(dir, files[0]!);
}

function nfdump(args: string[]): string {
  const r = spawnSync('nfdump', args, { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
  if (r.status !== 0) throw new Error(`nfdump ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

interface StatRow {
  val: string;
  fl: number;
  pkt: number;
  byt: number;
  pr: string;
}

/** `nfdump -o csv -s …`: the rows and the Summary line. */
function stat(args: string[]): { rows: StatRow[]; summary: { flows: number; bytes: number; packets: number } } {
  const lines = nfdump(['-6', '-o', 'csv', ...args])
    .split('\n')
    .filter((l) => l.trim());
  const rows: StatRow[] = [];
  let header: string[] | undefined;
  let summary = { flows: 0, bytes: 0, packets: 0 };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('ts,te,td,pr,val')) header = l.split(',');
    else if (l === 'Summary') {
      const keys = lines[i + 1]!.split(',');
      const vals = lines[i + 2]!.split(',').map(Number);
      const get = (k: string) => vals[keys.indexOf(k)]!;
      summary = { flows: get('flows'), bytes: get('bytes'), packets: get('packets') };
      break;
    } else if (header && l.includes(',')) {
      const v = l.split(',').map((x) => x.trim());
      const col = (...names: string[]) => v[header!.findIndex((h) => names.includes(h))]!;
      rows.push({
        val: col('val'),
        pr: col('pr'),
        fl: Number(col('fl')),
        pkt: Number(col('pkt', 'ipkt')),
        byt: Number(col('byt', 'ibyt')),
      });
    }
  }
  return { rows, summary };
}

/** What the API should answer for these nfcapd files, from nfdump alone. */
function expectedKpi(files: string[]) {
  // One file: -r; several hours: they share one directory, which -R reads whole.
  const input = files.length === 1 ? ['-r', files[0]!] : ['-R', files[0]!.slice(0, files[0]!.lastIndexOf('/'))];
  const proto = stat([...input, '-s', 'proto/bytes', '-n', '0']);
  const rst = stat([...input, '-s', 'proto/bytes', '-n', '0', 'flags R']).summary.flows;
  const top = (kind: string, filter: string[] = []) => stat([...input, '-s', kind, '-n', '10', ...filter]).rows;
  return {
    totals: proto.summary,
    rst,
    protocols: proto.rows.map((r) => ({ proto_num: Number(r.val), bytes: r.byt, flows: r.fl })),
    topSrc: top('srcip/bytes').map((r) => ({ ip: r.val, bytes: r.byt, packets: r.pkt, flows: r.fl })),
    topDst: top('dstip/bytes').map((r) => ({ ip: r.val, bytes: r.byt, packets: r.pkt, flows: r.fl })),
    topPorts: top('dstport/flows', ['proto tcp or proto udp']).map((r) => ({
      port: Number(r.val),
      label: serviceName(Number(r.val)),
      flows: r.fl,
      bytes: r.byt,
    })),
    flows: nfdump([...input, '-q', '-N', '-6', '-O', 'tstart', '-o', 'fmt:%ts,%sa,%da,%sp,%dp,%pr,%flg,%pkt,%byt,%td'])
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const [ts, sa, da, sp, dp, pr, flg, pkt, byt, td] = l.split(',').map((x) => x.trim());
        const proto = Number(pr);
        return {
          ts: ts!.slice(0, 19),
          src_ip: sa!,
          dst_ip: da!,
          src_port: sp!,
          dst_port: dp!,
          proto: protocolName(proto),
          flags: proto === 6 ? flg!.slice(2) : '......',
          packets: pkt!,
          bytes: byt!,
          duration: td!,
        };
      })
      .reverse(),
  };
}

/** Groups a newest-first list by `ts`, each group as a sorted multiset, so tie order inside one second does not matter. */
function byTs(rows: Array<Record<string, string>>): Array<[string, string[]]> {
  const groups: Array<[string, string[]]> = [];
  for (const r of rows) {
    const { dst_fqdn: _f, verdict: _v, ...rest } = r;
    const last = groups[groups.length - 1];
    if (last && last[0] === r.ts) last[1].push(JSON.stringify(rest));
    else groups.push([r.ts!, [JSON.stringify(rest)]]);
  }
  return groups.map(([ts, g]) => [ts, g.sort()]);
}

const noDns: ReverseDns = { resolve: async (ips) => new Map(ips.map((ip) => [ip, ''])), peek: () => '', close: () => undefined };

describe.skipIf(!haveNfdump)('netflow API beside nfdump 1.7 on the same datagrams', () => {
  const children: ChildProcess[] = [];
  let dir: string;
  let server: TestServer;
  let token: string;
  let admin: SqliteAdminStore;
  let cache: SqliteKpiCache;
  const fixtures = [
    flowFixtures().find((f) => f.name === '1/softflowd-v9')!,
    flowFixtures().find((f) => f.name === '2/pmacct-v10')!,
  ];
  const nfFiles: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-nfdump-'));
    const config = join(dir, 'netsvc.config.json');
    writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), timezone: 'UTC' }));
    for (const [i, f] of fixtures.entries()) {
      // nfdump's side: the datagrams over UDP into nfcapd, its file renamed to the hour netsvc puts them in.
      const raw = await nfcapdFile(f, join(dir, 'nfcapd-run', String(i)), children);
      const hourDir = join(dir, 'nfcapd');
      mkdirSync(hourDir, { recursive: true });
      const named = join(hourDir, `nfcapd.${new Date(H0 + i * HOUR).toISOString().slice(0, 13).replace(/[-T]/g, '')}00`);
      renameSync(raw, named);
      nfFiles.push(named);
      // netsvc's side: `netsvc import` of the same pcap, record times moved into hour i.
      const pcap = join(dir, `export-${i}.pcap`);
      writeFileSync(pcap, shiftPcap(readFileSync(f.pcap), H0 + i * HOUR + 10 * 60_000));
      const ctx: CliContext = { ...processContext(), out: () => undefined, err: () => undefined };
      expect(await runCli(['import', pcap, '--config', config, '--source', 'netflow', '--json'], ctx)).toBe(0);
    }

    cache = new SqliteKpiCache(join(dir, 'data', 'kpi.sqlite'));
    const query = new CaptureNetflowQuery({
      dataDir: join(dir, 'data'),
      timezone: 'UTC',
      sources: ['netflow'],
      cache,
      now: () => H0 + 10 * HOUR,
    });
    admin = new SqliteAdminStore(':memory:');
    admin.addEntity('acme', { netflow: true });
    admin.addUser('acme', 'alice', { netflow: true });
    const auth = new AuthService(admin, {
      key: randomBytes(32),
      tokenTtlSec: 3600,
      maxFailures: 10,
      failureWindowSec: 300,
      now: () => H0,
    });
    const app = createApp({
      auth,
      logger: createLogger('silent'),
      bodyLimitBytes: 1 << 20,
      areas: { netflow: createNetflowRoutes({ query, dns: noDns, timezone: 'UTC', sourcesOf: () => ['netflow'] }) },
    });
    server = await serveOnLoopback(app.fetch);
    const cred = generateCredential();
    admin.replaceCredential('acme', 'alice', cred.apiId, await hashSecret(cred.secret));
    token = (await postJson(`${server.url}/svc/api/netflow/auth`, { api_id: cred.apiId, secret: cred.secret })).body.result
      .access_token;
  }, 60_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await server?.close();
    cache?.close();
    admin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(/-/g, '/').replace('T', ' ');

  async function compare(hours: number[], files: string[]) {
    const q = new URLSearchParams({
      start: minute(H0 + hours[0]! * HOUR),
      end: minute(H0 + (hours[hours.length - 1]! + 1) * HOUR - 60_000),
    });
    const kpi = (await getJson(`${server.url}/svc/api/netflow/kpi?${q}`, token)).body.result;
    const flows = (await getJson(`${server.url}/svc/api/netflow/flows?${q}&limit=200`, token)).body.result.flows;
    const want = expectedKpi(files);
    expect(kpi.meta.source).toBe('hourly_cache');
    expect({ bytes: kpi.kpi.total_bytes, flows: kpi.kpi.active_flows, denied: kpi.kpi.denied_flows }).toEqual({
      bytes: want.totals.bytes,
      flows: want.totals.flows,
      denied: want.rst,
    });
    expect(
      kpi.protocols.map((p: { proto_num: number; bytes: number; flows: number }) => ({
        proto_num: p.proto_num,
        bytes: p.bytes,
        flows: p.flows,
      })),
    ).toEqual(want.protocols);
    expect(kpi.protocols.map((p: { pct: number }) => p.pct)).toEqual(
      want.protocols.map((p) => Math.round((p.bytes / want.totals.bytes) * 10000) / 100),
    );
    expect(kpi.top_src).toEqual(want.topSrc);
    expect(kpi.top_dst_ip).toEqual(want.topDst);
    expect(kpi.top_dst).toEqual(want.topPorts);
    // The newest 200: whole one-second groups must match; the oldest group may be cut at 200 by either side.
    const mine = byTs(flows);
    const theirs = byTs(want.flows.slice(0, 200));
    expect(mine.slice(0, -1)).toEqual(theirs.slice(0, -1));
    const [ts, lastMine] = mine[mine.length - 1]!;
    const pool = byTs(want.flows).find(([t]) => t === ts)![1];
    for (const r of lastMine) expect(pool).toContain(r);
  }

  it('equals nfdump for every hour', async () => {
    await compare([0], [nfFiles[0]!]);
    await compare([1], [nfFiles[1]!]);
  });

  it('equals nfdump over a window of several hours', async () => {
    await compare([0, 1], nfFiles);
  });
});
