/**
 * The flow-oracle fixtures (fixtures/flow-oracle/<seed>/<exporter>-v<ver>/):
 * real softflowd/pmacct export datagrams with nfdump 1.7.1's answers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { readCapture } from '../../collector/pcap/pcap.js';
import { type UdpDatagram } from '../../collector/pcap/packet.js';

/** Root of the flow-oracle fixtures. */
export const FLOW_ORACLE_DIR = resolve('fixtures/flow-oracle');

/** nfdump's reference answers for one export capture (the fields the tests use). */
export interface FlowReference {
  totals: { flows: number; bytes: number; packets: number };
  protocols_by_bytes: { name: string; number: number; flows: number; packets: number; bytes: number }[];
  /** `nfdump -I` of nfcapd's file (keys lower-cased: flows_tcp, bytes_icmp, …). */
  nfcapd_file_stats: Record<string, number | string>;
  datagrams_replayed: number;
  datagram_bytes_replayed: number;
}

/** One exporter × version capture of one seed. */
export interface FlowFixture {
  seed: string;
  exporter: 'softflowd' | 'pmacct';
  version: 5 | 9 | 10;
  /** e.g. "1/softflowd-v9". */
  name: string;
  dir: string;
  pcap: string;
  reference(): FlowReference;
  datagrams(): UdpDatagram[];
}

/** Every fixture, seeds in order, then exporter, then version. */
export function flowFixtures(): FlowFixture[] {
  const out: FlowFixture[] = [];
  const seeds = readdirSync(FLOW_ORACLE_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const seed of seeds) {
    for (const exporter of ['softflowd', 'pmacct'] as const) {
      for (const version of [5, 9, 10] as const) {
        const dir = join(FLOW_ORACLE_DIR, seed, `${exporter}-v${version}`);
        const pcap = join(dir, 'export.pcap');
        out.push({
          seed,
          exporter,
          version,
          name: `${seed}/${exporter}-v${version}`,
          dir,
          pcap,
          reference: () => JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as FlowReference,
          datagrams: () => readCapture(readFileSync(pcap)).datagrams,
        });
      }
    }
  }
  return out;
}

/** The fixture named `name` (e.g. "1/softflowd-v9"); throws when there is none. */
export function flowFixture(name: string): FlowFixture {
  const f = flowFixtures().find((x) => x.name === name);
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
}

/** A UDP port that was free a moment ago on 127.0.0.1 (for tests that need a fixed port). */
export async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** True when a program runs (`prog --version` or `-V` exits). */
export function hasProgram(prog: string, arg = '-V'): boolean {
  const r = spawnSync(prog, [arg], { stdio: 'ignore' });
  return r.error === undefined;
}

/** Skip a peer-dependent test unless CI demands every peer. */
export const requireAll = process.env.NETSVC_REQUIRE_ALL === '1';
