/**
 * Acceptance: `netsvc import --json` and nfcapd + `nfdump -I` on the same
 * datagrams. Each fixture's export datagrams are replayed (our own sender)
 * into a private nfcapd on a loopback port, nfdump reads nfcapd's file, and
 * the totals, flows per protocol group and their bytes and packets must
 * equal what netsvc's import of the same capture says.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replayDatagrams } from '../../../collector/replay.js';
import { runCli } from '../../../src/cli.js';
import { processContext, type CliContext } from '../../../src/commands/context.js';
import type { ImportReport } from '../../../src/commands/import.js';
import { flowFixtures, freeUdpPort, hasProgram, requireAll } from '../../helpers/flow-fixtures.js';

const haveNfdump = hasProgram('nfcapd') && hasProgram('nfdump');
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Starts nfcapd on 127.0.0.1:port writing into dir; resolves once it is receiving. */
async function startNfcapd(dir: string, port: number): Promise<ChildProcess> {
  const child = spawn('nfcapd', ['-w', dir, '-b', '127.0.0.1', '-p', String(port), '-t', '3600', '-B', '8388608'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nfcapd did not start: ${log}`)), 10_000);
    const onData = (b: Buffer): void => {
      log += b.toString();
      if (log.includes('Startup')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nfcapd exited with ${code}: ${log}`));
    });
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(child.pid!, 'SIGTERM');
  await exited;
}

/** `nfdump -I` output as numbers: flows, flows_tcp, bytes_udp, … */
function nfdumpInfo(dir: string): Record<string, number> {
  const r = spawnSync('nfdump', ['-R', dir, '-I'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nfdump failed: ${r.stderr}`);
  const out: Record<string, number> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Za-z_ ]+):\s*(\d+)\s*$/.exec(line);
    if (m) out[m[1]!.trim().toLowerCase().replace(/ /g, '_')] = Number(m[2]);
  }
  return out;
}

async function importJson(pcap: string): Promise<ImportReport> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const ctx: CliContext = { ...processContext(), out: (t) => stdout.push(t), err: (t) => stderr.push(t) };
  const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-accept-'));
  dirs.push(dataDir);
  expect(await runCli(['import', '--json', '-d', dataDir, pcap], ctx), stderr.join('')).toBe(0);
  return JSON.parse(stdout.join('')) as ImportReport;
}

describe.skipIf(!haveNfdump && !requireAll)('netsvc import equals nfcapd + nfdump -I on the same datagrams', () => {
  it('has nfcapd and nfdump', () => {
    expect(haveNfdump).toBe(true);
  });

  for (const f of flowFixtures()) {
    it(`${f.name}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'netsvc-nfcapd-'));
      dirs.push(dir);
      const port = await freeUdpPort();
      const nfcapd = await startNfcapd(dir, port);
      const datagrams = f.datagrams();
      // 5000/s: far below nfcapd's loss threshold, so any difference is decoding, not loss.
      const sent = await replayDatagrams(datagrams, { host: '127.0.0.1', port, timing: 'fixed', rate: 5000 });
      expect(sent.sent).toBe(datagrams.length);
      await new Promise((r) => setTimeout(r, 200));
      await stop(nfcapd);
      const nf = nfdumpInfo(dir);
      const ours = await importJson(f.pcap);

      expect(nf.flows).toBeGreaterThan(0);
      expect({ flows: ours.flows, bytes: ours.bytes, packets: ours.packets }).toEqual({ flows: nf.flows, bytes: nf.bytes, packets: nf.packets });
      for (const g of ['tcp', 'udp', 'icmp', 'other'] as const) {
        expect(ours.nfdumpGroups[g], g).toEqual({ flows: nf[`flows_${g}`], bytes: nf[`bytes_${g}`], packets: nf[`packets_${g}`] });
      }
    });
  }
});
