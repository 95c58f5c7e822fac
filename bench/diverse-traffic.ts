/**
 * Export traffic with realistic key diversity for the ingest benchmark. The
 * 459-flow fixture looped has so few keys that the open hour's per-key
 * aggregates stay tiny; real edges see hundreds of thousands of flows and
 * sources an hour. This builds:
 *   1. a raw-traffic pcap of `flows` flows, every 5-tuple distinct, from
 *      `sources` distinct 10.x.y.z sources to 172.16.0.0/12 destinations,
 *      TCP and UDP, one packet each with a wire length of 60-1500 bytes
 *      (captured as headers only, as `tcpdump -s 128` would);
 *   2. softflowd's NetFlow v9 export of it (the exporter of the flow-oracle
 *      fixtures, same options), received on a loopback socket and written to
 *      an export pcap the benchmark replays.
 * Deterministic for the same numbers (a seeded generator, no clock); the
 * export pcap is kept in `dir` and reused.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeCapture, type CaptureRecord } from '../collector/pcap/pcap-write.js';
import { prng } from './capture-flows.js';

/** What `diverseExport` made. */
export interface DiverseExport {
  pcap: string;
  flows: number;
  sources: number;
  datagrams: number;
}

const SNAP = 14 + 20 + 20; // Ethernet + IPv4 + the larger transport header

/** The raw-traffic pcap (libpcap, Ethernet), one packet per flow, in time order. */
export function diverseTrafficPcap(flows: number, sources: number, seed = 1): Buffer {
  const rnd = prng(seed);
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(SNAP, 16);
  head.writeUInt32LE(1, 20);
  const parts: Buffer[] = [head];
  const epoch = 1_700_000_000;
  const spanUs = 600 * 1e6;
  for (let i = 0; i < flows; i++) {
    // Source i mod `sources` with a source port that grows per round: every 5-tuple is distinct.
    const s = i % sources;
    const sport = 1024 + Math.floor(i / sources);
    const dst = 0xac100000 + Math.floor(rnd() * 0x100000); // 172.16.0.0/12
    const tcp = rnd() < 0.7;
    const dport = rnd() < 0.6 ? [443, 80, 53, 123, 22, 8080, 25, 3389][Math.floor(rnd() * 8)]! : 1024 + Math.floor(rnd() * 64000);
    const wire = 60 + Math.floor(rnd() * 1441);
    const ipLen = wire - 14;
    const l4 = tcp ? 20 : 8;
    const frame = Buffer.alloc(14 + 20 + l4);
    frame.writeUInt16BE(0x0800, 12);
    frame[14] = 0x45;
    frame.writeUInt16BE(ipLen, 16);
    frame[22] = 64;
    frame[23] = tcp ? 6 : 17;
    frame.writeUInt32BE(0x0a000000 + s, 26); // 10.0.0.0/8
    frame.writeUInt32BE(dst, 30);
    frame.writeUInt16BE(sport, 34);
    frame.writeUInt16BE(dport, 36);
    if (tcp) {
      frame[46] = 0x50; // data offset 5
      frame[47] = 0x18; // PSH ACK: mid-stream, so softflowd keeps the flow until it expires it
    } else {
      frame.writeUInt16BE(ipLen - 20, 38);
    }
    const us = Math.floor((i / flows) * spanUs);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(epoch + Math.floor(us / 1e6), 0);
    rec.writeUInt32LE(us % 1e6, 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(wire, 12);
    parts.push(rec, frame);
  }
  return Buffer.concat(parts);
}

/** Runs softflowd over the raw pcap and captures its v9 datagrams on a loopback socket. */
async function exportWithSoftflowd(raw: string, pidFile: string): Promise<CaptureRecord[]> {
  const sock = createSocket({ type: 'udp4', recvBufferSize: 32 * 1024 * 1024 });
  const records: CaptureRecord[] = [];
  sock.on('message', (msg, rinfo) => {
    records.push({
      timeMs: Date.now(),
      src: rinfo.address,
      dst: '127.0.0.1',
      srcPort: rinfo.port,
      dstPort: port,
      payload: Buffer.from(msg),
    });
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const port = sock.address().port;
  // The fixtures' options (shared/tools/flow-oracle/export.sh): pcap times, absolute milliseconds, a 65 536-flow table.
  const child = spawn(
    'softflowd',
    ['-r', raw, '-n', `127.0.0.1:${port}`, '-v', '9', '-a', '-d', '-p', pidFile, '-m', '65536', '-6', '-A', 'milli'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`softflowd exited ${code}: ${out}`);
  // The last datagrams may still be in flight on loopback.
  await new Promise((r) => setTimeout(r, 500));
  sock.close();
  const reported = /Flows exported: .* in (\d+) packets/.exec(out);
  if (reported && Number(reported[1]) !== records.length) {
    throw new Error(`softflowd sent ${reported[1]} datagrams, ${records.length} arrived: raise net.core.rmem_max and run again`);
  }
  return records;
}

/** The export pcap of `flows` distinct flows from `sources` sources (made once, then reused from `dir`). */
export async function diverseExport(opts: { flows: number; sources: number; dir: string }): Promise<DiverseExport> {
  mkdirSync(opts.dir, { recursive: true });
  const pcap = join(opts.dir, `softflowd-v9-${opts.flows}-flows-${opts.sources}-sources.pcap`);
  const meta = `${pcap}.json`;
  if (existsSync(pcap) && existsSync(meta)) {
    const { datagrams } = JSON.parse(readFileSync(meta, 'utf8')) as { datagrams: number };
    return { pcap, flows: opts.flows, sources: opts.sources, datagrams };
  }
  const raw = join(opts.dir, `traffic-${opts.flows}-${opts.sources}.pcap`);
  writeFileSync(raw, diverseTrafficPcap(opts.flows, opts.sources));
  const records = await exportWithSoftflowd(raw, join(opts.dir, 'softflowd.pid'));
  writeFileSync(`${pcap}.tmp`, writeCapture(records));
  renameSync(`${pcap}.tmp`, pcap);
  writeFileSync(meta, JSON.stringify({ flows: opts.flows, sources: opts.sources, datagrams: records.length }));
  return { pcap, flows: opts.flows, sources: opts.sources, datagrams: records.length };
}
