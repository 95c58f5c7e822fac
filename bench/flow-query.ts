/**
 * `npm run bench -- flow-query --dir DIR [--rounds 3]`
 *
 * Flow analytics (issue 20) on one hour of flows, nfdump side by side: DIR is
 * what `npm run bench -- storage --flows 10000000 --keep DIR` leaves, the
 * same flows in netsvc's capture file (`DIR/flows/netflow/nfcapd.202603250900`)
 * and in nfcapd's (`DIR/nfcapd/nfcapd.*`). Each row runs netsvc's query in
 * process (a fresh FlowAnalytics per round, no KPI cache: these are the
 * raw-file answers) and then nfdump's nearest command, round after round, and
 * prints every round. Targets of the issue: top-N with a filter over a 10 M
 * hour ≤ 300 ms and nfdump ≥ 10× slower; first page of filtered flows ≤ 50 ms.
 * Before the first round the process does what serve does once it listens (the scan worker
 * started, the query warm-up run); `--cold` measures a process that has done neither.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDimensions } from '../storage/flow-query/dimensions.js';
import { PeerRunner } from './peer-runner.js';
import { FlowAnalytics } from '../storage/flow-query/flow-analytics.js';

const HOUR = Date.UTC(2026, 2, 25, 9);

interface Case {
  label: string;
  netsvc: (a: FlowAnalytics) => Promise<unknown> | unknown;
  nfdump?: string[];
}

const window = { source: 'netflow', from: HOUR, to: HOUR + 3_600_000 };
const top = (by: string, filter: string | undefined) => (a: FlowAnalytics) =>
  a.top({ ...window, filter, by: parseDimensions(by), metric: 'bytes', limit: 10 });

const CASES: Case[] = [
  { label: 'top 10 proto by bytes, no filter', netsvc: top('proto', undefined), nfdump: ['-s', 'proto/bytes', '-n', '10'] },
  {
    label: "top 10 dst_port, filter 'proto tcp'",
    netsvc: top('dst_port', 'proto tcp'),
    nfdump: ['-s', 'dstport/bytes', '-n', '10', 'proto tcp'],
  },
  {
    label: "top 10 src_ip, filter 'dst port 443'",
    netsvc: top('src_ip', 'dst port 443'),
    nfdump: ['-s', 'srcip/bytes', '-n', '10', 'dst port 443'],
  },
  {
    label: "top 10 src_ip, filter 'proto udp and dst port 53'",
    netsvc: top('src_ip', 'proto udp and dst port 53'),
    nfdump: ['-s', 'srcip/bytes', '-n', '10', 'proto udp and dst port 53'],
  },
  { label: 'top 10 src_ip, no filter', netsvc: top('src_ip', undefined), nfdump: ['-s', 'srcip/bytes', '-n', '10'] },
  {
    label: "first page (100) of flows, filter 'dst port 443', with the count",
    netsvc: (a) => a.flows({ ...window, filter: 'dst port 443', order: 'time', limit: 100 }),
    // nfdump's nearest: the first 100 matching records in file order (no count, no time order).
    nfdump: ['-c', '100', '-o', 'csv', 'dst port 443'],
  },
  {
    label: "first page (100) of flows, filter 'dst port 443', count=false",
    netsvc: (a) => a.flows({ ...window, filter: 'dst port 443', order: 'time', limit: 100, count: false }),
    nfdump: ['-c', '100', '-o', 'csv', 'dst port 443'],
  },
];

function ms(t0: number): number {
  return performance.now() - t0;
}

export async function run(args: string[]): Promise<void> {
  const dirAt = args.indexOf('--dir');
  const dir = dirAt >= 0 ? args[dirAt + 1] : undefined;
  const roundsAt = args.indexOf('--rounds');
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 3;
  // As serve starts: the scan worker ready and the query code warmed up (analytics.warmUp), unless --cold.
  const cold = args.includes('--cold');
  if (!dir || !existsSync(join(dir, 'flows', 'netflow', 'nfcapd.202603250900'))) {
    console.error('usage: npm run bench -- flow-query --dir DIR, DIR from: npm run bench -- storage --flows 10000000 --keep DIR');
    process.exitCode = 2;
    return;
  }
  // One hour alone (the storage bench links the hour under 24 names).
  const work = mkdtempSync(join(tmpdir(), 'netsvc-flow-query-'));
  mkdirSync(join(work, 'flows', 'netflow'), { recursive: true });
  linkSync(join(dir, 'flows', 'netflow', 'nfcapd.202603250900'), join(work, 'flows', 'netflow', 'nfcapd.202603250900'));
  const nfFile = existsSync(join(dir, 'nfcapd'))
    ? readdirSync(join(dir, 'nfcapd'))
        .filter((n) => /^nfcapd\.\d{12}$/.test(n))
        .map((n) => join(dir, 'nfcapd', n))[0]
    : undefined;
  const haveNfdump = nfFile !== undefined && !spawnSync('nfdump', ['-V']).error;
  // nfdump runs from a small process of its own: forking this one between rounds would cost the
  // next round a page fault per page it writes (peer-runner.ts).
  const peer = new PeerRunner();
  console.log(
    `# flow-query, ${new Date().toISOString()}, load ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`# netsvc file ${join(dir, 'flows/netflow/nfcapd.202603250900')}; nfdump file ${nfFile ?? '(none)'}`);
  if (cold) console.log('# --cold: no scan worker started and no warm-up before the first round');
  else {
    const { scanWorkers } = await import('../storage/flow-query/scan-pool.js');
    const { warmUpQueries } = await import('../storage/flow-query/warm-up.js');
    scanWorkers.keepWarm();
    const w = await warmUpQueries({ workers: scanWorkers });
    console.log(
      `# as serve starts: scan worker started, warm-up of ${w.queries} queries in ${w.ms.toFixed(0)} ms before the first round`,
    );
  }
  console.log('| query | netsvc ms, every round | nfdump ms, every round | nfdump / netsvc (medians) |');
  console.log('|---|---|---|---|');
  try {
    for (const c of CASES) {
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const a = new FlowAnalytics({ dataDir: work, timezone: 'UTC', now: Date.now });
        const t0 = performance.now();
        await c.netsvc(a);
        ours.push(ms(t0));
        if (haveNfdump && c.nfdump) {
          const res = await peer.run('nfdump', ['-r', nfFile!, '-q', ...c.nfdump]);
          theirs.push(res.ms);
          if (res.status !== 0) throw new Error(`nfdump ${c.nfdump.join(' ')}: ${res.stderr}`);
        }
      }
      const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)] ?? NaN;
      const ratio = theirs.length ? (median(theirs) / median(ours)).toFixed(2) : '';
      console.log(
        `| ${c.label} | ${ours.map((v) => v.toFixed(0)).join(' / ')} | ${theirs.map((v) => v.toFixed(0)).join(' / ')} | ${ratio} |`,
      );
    }
  } finally {
    peer.close();
    await (await import('../storage/flow-query/scan-pool.js')).scanWorkers.close();
    rmSync(work, { recursive: true, force: true });
  }
}
