/**
 * The same export datagrams in nfcapd's files and in netsvc's: nfcapd
 * receives them over loopback, `netsvc import` reads them from a pcap. The
 * nfdump cross-checks (filters, top-N) compare answers over the pair.
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCapture } from '../../collector/pcap/pcap-write.js';
import { FlowBatch } from '../../common/flow-batch.js';
import { CaptureFile } from '../../storage/capture/capture-file.js';
import { appendRows } from '../../storage/capture/open-hour.js';
import { listCaptureFiles } from '../../storage/capture/reader.js';
import { CaptureWriter } from '../../storage/capture/writer.js';
import { replayDatagrams } from '../../collector/pcap/replay.js';
import { runCli } from '../../src/cli.js';
import { processContext, type CliContext } from '../../src/commands/context.js';
import type { ImportReport } from '../../src/commands/import-run.js';
import { freeUdpPort, type FlowFixture } from './flow-fixtures.js';
import { startNfcapd } from './nfdump.js';
import { xorshift } from './xorshift.js';

/** Temporary directories made here; the caller removes them (afterAll). */
export const sameFlowDirs: string[] = [];
const dirs = sameFlowDirs;

/** nfcapd's file of the datagrams, in a fresh directory. */
export async function nfcapdDir(datagrams: readonly Buffer[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-filter-nfcapd-'));
  dirs.push(dir);
  const port = await freeUdpPort();
  const child = await startNfcapd(dir, port);
  await replayDatagrams(
    datagrams.map((payload) => ({ payload, timeMs: 0 })),
    { host: '127.0.0.1', port, timing: 'fixed', rate: 1000 },
  );
  await new Promise((r) => setTimeout(r, 300));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await exited;
  return dir;
}

/**
 * The flows of sealed capture files written again in live blocks of a few dozen rows and sealed:
 * sealing merges those into blocks ordered by protocol and destination port, which queries read
 * by bisection (`netsvc import` seals each hour's one block in place, in arrival order).
 */
export async function resealOrdered(files: readonly string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-ordered-'));
  dirs.push(dir);
  const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 4096, now: () => Date.now(), timer: false });
  await writer.start();
  const CHUNK = 40;
  for (const path of files) {
    const f = CaptureFile.open(path);
    for (let k = 0; k < f.blocks.length; k++) {
      const b = f.readBlock(k);
      for (let at = 0; at < b.length; at += CHUNK) {
        const n = Math.min(CHUNK, b.length - at);
        const chunk = new FlowBatch(CHUNK);
        appendRows(chunk, b, at, n);
        writer.write('netflow', chunk);
        writer.flush();
      }
    }
    f.close();
  }
  await writer.close({ sealAll: true });
  return listCaptureFiles(dir, 'netflow', 'UTC').map((info) => info.path);
}

/** A pcap through `netsvc import` (a fixture's, or one written of `datagrams`): the capture files it sealed. */
export async function importPcap(from: FlowFixture | readonly Buffer[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-filter-import-'));
  dirs.push(dir);
  let pcap: string;
  if ('pcap' in from) pcap = from.pcap;
  else {
    pcap = join(dir, 'export.pcap');
    const t0 = Date.now();
    const records = from.map((payload, i) => ({
      timeMs: t0 + i,
      src: '127.0.0.1',
      dst: '127.0.0.1',
      srcPort: 40000,
      dstPort: 2055,
      payload,
    }));
    writeFileSync(pcap, writeCapture(records));
  }
  const stdout: string[] = [];
  const stderr: string[] = [];
  const ctx: CliContext = { ...processContext(), out: (t) => stdout.push(t), err: (t) => stderr.push(t) };
  const code = await runCli(['import', '--json', '-d', join(dir, 'data'), pcap], ctx);
  if (code !== 0) throw new Error(`netsvc import failed: ${stderr.join('')}`);
  const report = JSON.parse(stdout.join('')) as ImportReport;
  return report.stored!.files;
}

/**
 * The fixtures' exporters send ToS, interfaces and AS numbers as 0: NetFlow v5 datagrams made
 * here vary them (and flags, ports, protocols), so those primitives are checked on values too.
 */
export function v5Datagrams(): Buffer[] {
  const rnd = xorshift(5);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const out: Buffer[] = [];
  const unixSecs = Math.floor(Date.now() / 1000);
  for (let d = 0; d < 8; d++) {
    const n = 25;
    const b = Buffer.alloc(24 + n * 48);
    b.writeUInt16BE(5, 0);
    b.writeUInt16BE(n, 2);
    b.writeUInt32BE(100_000, 4); // sysUptime, ms
    b.writeUInt32BE(unixSecs, 8);
    b.writeUInt32BE(d * n, 16); // flow sequence
    for (let r = 0; r < n; r++) {
      const o = 24 + r * 48;
      b.writeUInt32BE((0x0a000000 | Math.floor(rnd() * 8)) >>> 0, o);
      b.writeUInt32BE((0xc6336400 | Math.floor(rnd() * 8)) >>> 0, o + 4);
      b.writeUInt16BE(pick([1, 2, 3, 65535]), o + 12);
      b.writeUInt16BE(pick([1, 2, 3, 4]), o + 14);
      b.writeUInt32BE(1 + Math.floor(rnd() * 20), o + 16);
      b.writeUInt32BE(40 + Math.floor(rnd() * 5000), o + 20);
      b.writeUInt32BE(90_000, o + 24);
      b.writeUInt32BE(99_000, o + 28);
      const proto = pick([6, 6, 17, 1]);
      b.writeUInt16BE(proto === 1 ? 0 : pick([22, 53, 80, 443, 40000]), o + 32);
      b.writeUInt16BE(proto === 1 ? 0x0800 : pick([22, 53, 80, 443, 50000]), o + 34);
      b.writeUInt8(proto === 6 ? Math.floor(rnd() * 64) : 0, o + 37);
      b.writeUInt8(proto, o + 38);
      b.writeUInt8(pick([0, 0, 32, 184]), o + 39);
      b.writeUInt16BE(pick([0, 64500, 65001]), o + 40);
      b.writeUInt16BE(pick([0, 13335]), o + 42);
    }
    out.push(b);
  }
  return out;
}
