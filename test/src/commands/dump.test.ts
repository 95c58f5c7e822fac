import { closeSync, openSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { listCaptureFiles } from '../../../storage/capture/reader.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { FakeClock, slice, tempDataDir } from '../../storage/capture/flows.js';
import { captureCli } from '../../helpers/cli.js';

const H9 = Date.UTC(2026, 2, 25, 9);

/** Three known flows: TCP over IPv4, UDP over IPv6, ICMP echo. */
function knownFlows(): FlowBatch {
  const b = new FlowBatch(3);
  const v6 = (last: number): Uint8Array => Uint8Array.from([0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last]);
  const rows = [
    { proto: 6, sp: 49604, dp: 443, flags: 0x18, pk: 5, by: 3827, rec: H9 + 60_000, start: H9 + 50_000, dur: 511 },
    { proto: 17, sp: 5353, dp: 53, flags: 0, pk: 2, by: 180, rec: H9 + 120_000, start: H9 + 119_000, dur: 48 },
    { proto: 1, sp: 0, dp: 8 * 256, flags: 0, pk: 1, by: 84, rec: H9 + 180_500, start: H9 + 180_000, dur: 0 },
  ];
  rows.forEach((r, k) => {
    const i = b.addRow();
    Object.assign(b.cols, {});
    b.cols.proto[i] = r.proto;
    b.cols.srcPort[i] = r.sp;
    b.cols.dstPort[i] = r.dp;
    b.cols.tcpFlags[i] = r.flags;
    b.cols.packets[i] = r.pk;
    b.cols.bytes[i] = r.by;
    b.cols.received[i] = r.rec;
    b.cols.start[i] = r.start;
    b.cols.end[i] = r.start + r.dur;
    if (k === 1) {
      b.cols.ipVersion[i] = 6;
      b.setV6('srcAddr', i, v6(1), 0);
      b.setV6('dstAddr', i, v6(2), 0);
    } else {
      b.cols.ipVersion[i] = 4;
      b.setV4('srcAddr', i, 0xc0a81426); // 192.168.20.38
      b.setV4('dstAddr', i, 0xcb007194); // 203.0.113.148
    }
  });
  return b;
}

/** An hour of the known flows, sealed or open; `blockEach` writes each flow as a block of its own (sealing then merges them). */
async function dataDirWithHour(seal: boolean, blockEach = false): Promise<string> {
  const dir = tempDataDir();
  const clock = new FakeClock(H9);
  const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
  await w.start();
  const flows = knownFlows();
  if (!blockEach) w.write('netflow', flows);
  else {
    for (let i = 0; i < flows.length; i++) {
      w.write('netflow', slice(flows, i, i + 1));
      w.flush();
    }
  }
  if (seal) clock.t = H9 + 3_700_000;
  await w.close();
  // UTC whatever the machine's zone is, so the printed times are known
  writeFileSync(join(dir, 'netsvc.config.json'), JSON.stringify({ timezone: 'UTC', dataDir: dir }));
  return dir;
}

const cfg = (dir: string): string[] => ['--config', join(dir, 'netsvc.config.json')];

describe('netsvc dump', () => {
  it('prints one line per flow like nfdump -r: start, duration, proto, endpoints, flags, packets, bytes', async () => {
    const dir = await dataDirWithHour(true);
    const ctx = captureCli();
    expect(await runCli(['dump', 'netflow', ...cfg(dir)], ctx)).toBe(0);
    const lines = ctx.stdout;
    expect(lines).toHaveLength(5);
    expect(lines[1]).toMatch(
      /^2026-03-25 09:00:50\.000 +0\.511 TCP +192\.168\.20\.38:49604 -> 203\.0\.113\.148:443 +\.AP\.\.\. +5 +3827$/,
    );
    expect(lines[2]).toMatch(
      /^2026-03-25 09:01:59\.000 +0\.048 UDP +2001:db8::1\.5353 -> 2001:db8::2\.53 +\.\.\.\.\.\. +2 +180$/,
    );
    expect(lines[3]).toMatch(/ICMP +192\.168\.20\.38:0 -> 203\.0\.113\.148:8\.0 /);
    expect(lines[4]).toBe('Summary: total flows: 3, total bytes: 4091, total packets: 8');
  });

  it('prints a sealed hour in received order, as nfdump -r does, though sealing stores a block by protocol and port', async () => {
    const dir = await dataDirWithHour(true, true);
    const [file] = listCaptureFiles(dir, 'netflow', 'UTC');
    const f = CaptureFile.open(file!.path, { requireSealed: true });
    expect(f.blocks).toHaveLength(1);
    expect(Array.from(f.readBlock(0).cols.proto)).toEqual([1, 6, 17]); // ICMP, TCP, UDP as stored
    f.close();
    for (const filter of [[], ['--filter', 'not proto 17']]) {
      const ctx = captureCli();
      expect(await runCli(['dump', 'netflow', ...cfg(dir), '--csv', ...filter], ctx)).toBe(0);
      expect(ctx.stdout.slice(1).map((l) => l.split(',')[4])).toEqual(filter.length ? ['TCP', 'ICMP'] : ['TCP', 'UDP', 'ICMP']);
    }
  });

  it('--filter keeps the flows an nfdump expression selects, in records and in --stats; a mistake shows its column', async () => {
    const dir = await dataDirWithHour(true);
    const ctx = captureCli();
    expect(await runCli(['dump', 'netflow', ...cfg(dir), '--filter', 'proto udp or dst port 443', '--csv'], ctx)).toBe(0);
    expect(ctx.stdout.slice(1).map((l) => l.split(',')[4])).toEqual(['TCP', 'UDP']);
    const stats = captureCli();
    expect(await runCli(['dump', 'netflow', ...cfg(dir), '--filter', 'inet', '--stats', '--json'], stats)).toBe(0);
    const t = JSON.parse(stats.stdout.join(''));
    expect([t.all.flows, t.all.bytes]).toEqual([2, 3827 + 84]);
    const bad = captureCli();
    expect(await runCli(['dump', 'netflow', ...cfg(dir), '--filter', 'proto tcp and port http'], bad)).toBe(2);
    // The message once, then the expression with a caret under column 20.
    const said = bad.stderr.join('\n').trimEnd().split('\n');
    expect(said).toEqual([
      expect.stringMatching(/--filter: column 20: expected a port number/),
      'proto tcp and port http',
      `${' '.repeat(19)}^`,
    ]);
  });

  it('selects by received time with --from/--to (minute inclusive) and --limit, as CSV or JSON', async () => {
    const dir = await dataDirWithHour(false);
    const file = listCaptureFiles(dir, 'netflow', 'UTC')[0]!.path;
    const csv = captureCli();
    expect(
      await runCli(['dump', file, '--from', '2026/03/25 09:02', '--to', '2026/03/25 09:03', '--csv', ...cfg(dir)], csv),
    ).toBe(0);
    expect(csv.stdout).toHaveLength(3); // header + the flows received at 09:02:00 and 09:03:00.5
    expect(csv.stdout[0]).toMatch(/^received,start,end,duration,proto,src_ip/);
    expect(csv.stdout[1]).toContain(',UDP,2001:db8::1,5353,2001:db8::2,53,');
    const json = captureCli();
    expect(await runCli(['dump', file, '--json', '--limit', '1', ...cfg(dir)], json)).toBe(0);
    const records = JSON.parse(json.stdout.join('')) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ proto: 'TCP', src_ip: '192.168.20.38', dst_port: '443', flags: '.AP...', bytes: 3827 });
  });

  it('prints totals like nfdump -I with --stats, from the footer of a sealed file and by scanning an open one', async () => {
    for (const seal of [true, false]) {
      const dir = await dataDirWithHour(seal);
      const ctx = captureCli();
      expect(await runCli(['dump', 'netflow', '--stats', ...cfg(dir)], ctx)).toBe(0);
      const kv = Object.fromEntries(ctx.stdout.map((l) => l.split(': ')));
      expect(kv).toMatchObject({
        Ident: 'netflow',
        Flows: '3',
        Flows_tcp: '1',
        Flows_udp: '1',
        Flows_icmp: '1',
        Flows_other: '0',
        Bytes: '4091',
        Packets: '8',
        First: String((H9 + 50_000) / 1000),
        msec_last: '0',
      });
    }
  });

  it('reports a damaged file on stderr with exit code 1', async () => {
    const dir = await dataDirWithHour(true);
    const file = listCaptureFiles(dir, 'netflow', 'UTC')[0]!.path;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('JUNK'), 0, 4, 0);
    closeSync(fd);
    for (const args of [[file], ['netflow', '--stats']]) {
      const ctx = captureCli();
      expect(await runCli(['dump', ...args, ...cfg(dir)], ctx)).toBe(1);
      expect(ctx.stderr.join('\n')).toMatch(
        /damaged capture file: .*nfcapd\.202603250900: not a netsvc capture file \(bad magic\)/,
      );
    }
    const missing = captureCli();
    expect(await runCli(['dump', join(dir, 'nope'), ...cfg(dir)], missing)).toBe(2);
  });

  it('reports a sealed file given by path that was cut off (footer or mid-block) as damaged, exit code 1', async () => {
    for (const cut of ['footer', 'mid-block'] as const) {
      const dir = await dataDirWithHour(true);
      const file = listCaptureFiles(dir, 'netflow', 'UTC')[0]!.path;
      const size = statSync(file).size;
      truncateSync(file, cut === 'footer' ? size - 4 : Math.floor(size / 2));
      for (const extra of [[], ['--stats'], ['--json']]) {
        const ctx = captureCli();
        expect(await runCli(['dump', file, ...extra, ...cfg(dir)], ctx), `${cut} ${extra.join(' ')}`).toBe(1);
        expect(ctx.stderr.join('\n'), `${cut} ${extra.join(' ')}`).toMatch(/damaged capture file: .*nfcapd\.202603250900/);
      }
    }
  });

  it('still reads an open file given by path whose tail was torn, exit code 0', async () => {
    const dir = await dataDirWithHour(false);
    const file = listCaptureFiles(dir, 'netflow', 'UTC')[0]!.path;
    expect(file).toMatch(/nfcapd\.current\./);
    truncateSync(file, statSync(file).size - 4);
    const ctx = captureCli();
    expect(await runCli(['dump', file, ...cfg(dir)], ctx), ctx.stderr.join('\n')).toBe(0);
  });
});
