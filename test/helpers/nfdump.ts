/**
 * nfdump 1.7 as a peer: datagrams replayed into a private nfcapd on a
 * loopback port, its file read back with `nfdump`, one record per flow.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayDatagrams } from '../../collector/pcap/replay.js';
import { freeUdpPort, hasProgram } from './flow-fixtures.js';

/** nfcapd and nfdump both run here. */
export const haveNfdump = hasProgram('nfcapd') && hasProgram('nfdump');

/** One flow as nfdump prints it. */
export interface NfRecord {
  start: number;
  end: number;
  proto: number;
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  nextHop: string;
  bytes: number;
  packets: number;
}

/** Starts nfcapd on 127.0.0.1:port writing into dir (with `extra` arguments); resolves once it is receiving, else kills it. */
export async function startNfcapd(dir: string, port: number, extra: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn('nfcapd', ['-w', dir, '-b', '127.0.0.1', '-p', String(port), '-t', '3600', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`nfcapd did not start: ${log}`));
    }, 10_000);
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

/** nfdump's JSON output of one flow (the keys used here; absent ones were not in the record). */
export type NfJson = Record<string, string | number | undefined>;

function toRecord(j: NfJson): NfRecord {
  const nh = Object.keys(j).find((k) => k.includes('next_hop') && !k.includes('bgp'));
  return {
    // nfdump prints times in the TZ of its environment: UTC is forced below.
    start: Date.parse(`${String(j.first)}Z`),
    end: Date.parse(`${String(j.last)}Z`),
    proto: Number(j.proto ?? 0),
    src: String(j.src4_addr ?? j.src6_addr ?? ''),
    dst: String(j.dst4_addr ?? j.dst6_addr ?? ''),
    srcPort: Number(j.src_port ?? 0),
    dstPort: Number(j.dst_port ?? 0),
    nextHop: nh === undefined ? '' : String(j[nh]),
    bytes: Number(j.in_bytes ?? 0),
    packets: Number(j.in_packets ?? 0),
  };
}

/** `nfdump -I` of the files in `dir` as numbers: flows, flows_tcp, bytes_udp, … */
export function nfdumpInfo(dir: string): Record<string, number> {
  const r = spawnSync('nfdump', ['-R', dir, '-I'], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
  if (r.status !== 0) throw new Error(`nfdump failed: ${r.stderr}`);
  const out: Record<string, number> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Za-z_ ]+):\s*(\d+)\s*$/.exec(line);
    if (m) out[m[1]!.trim().toLowerCase().replace(/ /g, '_')] = Number(m[2]);
  }
  return out;
}

/** Replays `datagrams` (in order, from 127.0.0.1) into nfcapd; returns nfdump's records (also as its JSON) and its `-I` totals. */
export async function nfdumpDecode(
  datagrams: readonly Buffer[],
): Promise<{ records: NfRecord[]; json: NfJson[]; info: Record<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-nfcapd-'));
  try {
    const port = await freeUdpPort();
    const child = await startNfcapd(dir, port);
    await replayDatagrams(
      datagrams.map((payload) => ({ payload, timeMs: 0 })),
      { host: '127.0.0.1', port, timing: 'fixed', rate: 1000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await exited;
    if (process.env.NFDUMP_KEEP) spawnSync('cp', ['-r', dir, process.env.NFDUMP_KEEP]);
    const env = { ...process.env, TZ: 'UTC' };
    const r = spawnSync('nfdump', ['-R', dir, '-o', 'json'], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`nfdump failed: ${r.stderr}`);
    const json = r.stdout.includes('"type"') ? (JSON.parse(r.stdout) as NfJson[]) : [];
    const records = json.map(toRecord);
    return { records, json, info: nfdumpInfo(dir) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
