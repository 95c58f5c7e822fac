/**
 * Acceptance: `netsvc import --json` and nfcapd + `nfdump -I` on the same
 * datagrams. Each fixture's export datagrams are replayed (our own sender)
 * into a private nfcapd on a loopback port, nfdump reads nfcapd's file, and
 * the totals, flows per protocol group and their bytes and packets must
 * equal what netsvc's import of the same capture says.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { readCapture } from '../../../collector/pcap/pcap.js';
import { writeCapture } from '../../../collector/pcap/pcap-write.js';
import { replayDatagrams } from '../../../collector/pcap/replay.js';
import { runCli } from '../../../src/cli.js';
import { processContext, type CliContext } from '../../../src/commands/context.js';
import type { ImportReport } from '../../../src/commands/import-run.js';
import { rows, type Row } from '../../collector/decode/rows.js';
import { asaNselPackets, yafBiflowMessages } from '../../collector/decode/two-way-fixtures.js';
import { flowFixtures, freeUdpPort, requireAll } from '../../helpers/flow-fixtures.js';
import { haveNfdump, nfdumpInfo, startNfcapd as startPeer } from '../../helpers/nfdump.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** nfcapd with an 8 MiB receive buffer, killed after the run if a test leaves it. */
async function startNfcapd(dir: string, port: number): Promise<ChildProcess> {
  const child = await startPeer(dir, port, ['-B', '8388608']);
  children.push(child);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(child.pid!, 'SIGTERM');
  await exited;
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
      expect({ flows: ours.flows, bytes: ours.bytes, packets: ours.packets }).toEqual({
        flows: nf.flows,
        bytes: nf.bytes,
        packets: nf.packets,
      });
      for (const g of ['tcp', 'udp', 'icmp', 'other'] as const) {
        expect(ours.nfdumpGroups[g], g).toEqual({
          flows: nf[`flows_${g}`],
          bytes: nf[`bytes_${g}`],
          packets: nf[`packets_${g}`],
        });
      }
    });
  }
});

/** One nfdump record: the fields of the flow key, in and out counters, interfaces. */
interface NfdumpRecord {
  key: string;
  inBytes: number;
  inPackets: number;
  outBytes: number;
  outPackets: number;
}

/** `nfdump -o fmt` records of nfcapd's file, one per exported record. */
function nfdumpRecords(dir: string): NfdumpRecord[] {
  const r = spawnSync('nfdump', ['-R', dir, '-q', '-N', '-o', 'fmt:%pr|%sa|%sp|%da|%dp|%in|%out|%ibyt|%ipkt|%obyt|%opkt'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`nfdump failed: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.includes('|'))
    .map((l) => {
      const f = l.split('|').map((x) => x.trim());
      return {
        key: f.slice(0, 7).join(' '),
        inBytes: Number(f[7]),
        inPackets: Number(f[8]),
        outBytes: Number(f[9]),
        outPackets: Number(f[10]),
      };
    });
}

/** A netsvc row's flow key in nfdump's words (ICMP type.code in the destination port). */
function keyOf(r: Row): string {
  const icmp = r.proto === 1 || r.proto === 58;
  const dp = icmp ? `${r.dstPort >> 8}.${r.dstPort & 255}` : String(r.dstPort);
  return [r.proto, r.src, r.srcPort, r.dst, dp, r.inputIf, r.outputIf].join(' ');
}

/** The key of the reverse row nfdump's record stands for: addresses, ports and interfaces swapped (ICMP ports 0). */
function reverseKeyOf(n: NfdumpRecord): string {
  const [pr, sa, sp, da, dp, inIf, outIf] = n.key.split(' ');
  const icmp = pr === '1' || pr === '58';
  return [pr, da, icmp ? '0' : dp, sa, icmp ? '0.0' : sp, outIf, inIf].join(' ');
}

describe.skipIf(!haveNfdump && !requireAll)(
  'two-way records: netsvc forward rows equal nfdump records; the reverse rows are their out counters',
  () => {
    for (const [name, build] of [
      ['YAF RFC 5103 biflows (IPFIX)', yafBiflowMessages],
      ['Cisco ASA NSEL (v9)', asaNselPackets],
    ] as const) {
      it(name, async () => {
        const datagrams = build();
        const dir = mkdtempSync(join(tmpdir(), 'netsvc-nfcapd-'));
        dirs.push(dir);
        const pcap = join(dir, 'two-way.pcap');
        writeFileSync(
          pcap,
          writeCapture(
            datagrams.map((payload, i) => ({
              timeMs: 1_700_000_600_000 + i,
              src: '192.0.2.10',
              dst: '192.0.2.1',
              srcPort: 40_000,
              dstPort: 2055,
              payload,
            })),
          ),
        );
        const port = await freeUdpPort();
        const nfcapd = await startNfcapd(dir, port);
        const sent = await replayDatagrams(readCapture(readFileSync(pcap)).datagrams, {
          host: '127.0.0.1',
          port,
          timing: 'fixed',
          rate: 5000,
        });
        expect(sent.sent).toBe(datagrams.length);
        await new Promise((r) => setTimeout(r, 200));
        await stop(nfcapd);
        const nf = nfdumpRecords(dir);
        const info = nfdumpInfo(dir);

        const d = createFlowDecoder();
        const b = new FlowBatch(4);
        for (const g of datagrams) d.decode(g, exporterRef('192.0.2.10'), 1_700_000_600_000, b);
        const ours = rows(b);

        // Row by row: each nfdump record is a forward row of netsvc (in counters), followed by a
        // reverse row carrying exactly its out counters when it has any.
        const expected: { key: string; bytes: number; packets: number }[] = [];
        for (const n of nf) {
          expected.push({ key: n.key, bytes: n.inBytes, packets: n.inPackets });
          if (n.outBytes > 0 || n.outPackets > 0)
            expected.push({ key: reverseKeyOf(n), bytes: n.outBytes, packets: n.outPackets });
        }
        expect(ours.map((r) => ({ key: keyOf(r), bytes: r.bytes, packets: r.packets }))).toEqual(expected);
        expect(nf.some((n) => n.outBytes > 0)).toBe(true);

        // Totals: nfdump -I adds out counters to its byte and packet totals but not to its flow
        // count nor to its per-protocol lines; netsvc counts the reverse rows everywhere.
        const report = await importJson(pcap);
        const out = (f: (n: NfdumpRecord) => boolean) => ({
          rows: nf.filter((n) => f(n) && (n.outBytes > 0 || n.outPackets > 0)).length,
          bytes: nf.filter(f).reduce((s, n) => s + n.outBytes, 0),
          packets: nf.filter(f).reduce((s, n) => s + n.outPackets, 0),
        });
        const all = out(() => true);
        expect({ flows: report.flows, bytes: report.bytes, packets: report.packets }).toEqual({
          flows: info.flows! + all.rows,
          bytes: info.bytes,
          packets: info.packets,
        });
        const proto: Record<string, (n: NfdumpRecord) => boolean> = {
          tcp: (n) => n.key.startsWith('6 '),
          udp: (n) => n.key.startsWith('17 '),
          icmp: (n) => n.key.startsWith('1 ') || n.key.startsWith('58 '),
        };
        for (const [g, f] of Object.entries(proto)) {
          const o = out(f);
          expect(report.nfdumpGroups[g as 'tcp' | 'udp' | 'icmp'], g).toEqual({
            flows: info[`flows_${g}`]! + o.rows,
            bytes: info[`bytes_${g}`]! + o.bytes,
            packets: info[`packets_${g}`]! + o.packets,
          });
        }
        expect(report.counters.reverseFlows).toBe(all.rows);
      });
    }
  },
);
