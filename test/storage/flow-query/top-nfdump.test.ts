/**
 * Top-N against nfdump 1.7: for every dimension nfdump aggregates with `-s`
 * and a set of filters, netsvc's top-N over its capture files of the same
 * datagrams equals `nfdump -s <dim>/bytes -n N '<filter>'` over nfcapd's,
 * group for group (ties at the cut are settled differently, so the full
 * lists are compared as sets and the top N by their byte counts).
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newReadStats, type CaptureFileInfo } from '../../../storage/capture/reader.js';
import { parseDimensions } from '../../../storage/flow-query/dimensions.js';
import { compileFilter } from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import { topN } from '../../../storage/flow-query/top-n.js';
import { flowFixture, requireAll } from '../../helpers/flow-fixtures.js';
import { haveNfdump } from '../../helpers/nfdump.js';
import { importPcap, nfcapdDir, resealOrdered, sameFlowDirs, v5Datagrams } from '../../helpers/same-flows.js';

if (!haveNfdump && requireAll) throw new Error('nfdump and nfcapd are required (NETSVC_REQUIRE_ALL=1)');

afterAll(() => {
  for (const d of sameFlowDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** nfdump's `-s` names and netsvc's dimension of the same thing. */
const DIMENSIONS: ReadonlyArray<readonly [string, string]> = [
  ['srcip', 'src_ip'],
  ['dstip', 'dst_ip'],
  ['srcport', 'src_port'],
  ['dstport', 'dst_port'],
  ['proto', 'proto'],
  ['srcas', 'src_as'],
  ['dstas', 'dst_as'],
  ['inif', 'input_if'],
  ['outif', 'output_if'],
  ['tos', 'tos'],
  ['router', 'exporter'],
];

/**
 * Ten and more filters. ICMP is left out of the port dimensions' filters: softflowd's v9 puts
 * type.code in the destination port, which netsvc keeps and nfdump reads as 0 (docs/netflow.md).
 */
const FILTERS = [
  'any',
  'proto tcp',
  'proto udp',
  'inet',
  'ipv6',
  'src net 10.0.0.0/8',
  'not dst net 10.0.0.0/8',
  'port 443 or port 53',
  'flags S',
  'bytes > 1000',
  'packets < 5 and not proto tcp',
  'proto tcp and not (src port 443 or dst port 443)',
  'dst port 53',
  'proto udp and dst port > 1023',
];

/** Protocol names nfdump prints in `-s proto` (`TCP`, `UDP`, `ICMP6`, …) as numbers. */
const PROTO_NUMBERS: Record<string, number> = { ICMP: 1, TCP: 6, UDP: 17, GRE: 47, ESP: 50, ICMP6: 58, VRRP: 112 };

interface Group {
  flows: number;
  packets: number;
  bytes: number;
}

function nfdumpTop(dir: string, dim: string, filter: string, n: number): Array<[string, Group]> {
  const r = spawnSync('nfdump', ['-R', dir, '-q', '-s', `${dim}/bytes`, '-n', String(n), '-o', 'csv', filter], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'UTC' },
  });
  if (r.status !== 0) throw new Error(`nfdump -s ${dim} '${filter}' failed: ${r.stderr}${r.stdout}`);
  const rows: Array<[string, Group]> = [];
  for (const line of r.stdout.split('\n')) {
    const f = line.split(',');
    // ts,te,td,pr,val,fl,flP,pkt,pktP,byt,bytP,pps,bps,bpp
    if (f.length < 14 || f[0] === 'ts') continue;
    let key = f[4]!.trim();
    if (dim === 'proto') key = String(PROTO_NUMBERS[key] ?? Number(key));
    rows.push([key, { flows: Number(f[5]), packets: Number(f[7]), bytes: Number(f[9]) }]);
  }
  return rows;
}

async function netsvcTop(files: readonly string[], dim: string, filter: string, n: number): Promise<Array<[string, Group]>> {
  const infos: CaptureFileInfo[] = files.map((path) => ({
    path,
    name: path,
    source: 'netflow',
    hourStart: -Infinity,
    hourEnd: Infinity,
    kind: 'sealed',
    size: 0,
  }));
  const t = await topN(
    { files: infos, from: -Infinity, to: Infinity, filter: compileFilter(parseFilter(filter)), stats: newReadStats() },
    parseDimensions(dim),
    'bytes',
    n,
  );
  return t.rows.map((r) => [String(r.key[0]), { flows: r.flows, packets: r.packets, bytes: r.bytes }]);
}

async function compare(nfDir: string, files: readonly string[], nfDim: string, dim: string, filter: string): Promise<void> {
  // Every group: the same keys with the same counts.
  const all = nfdumpTop(nfDir, nfDim, filter, 100_000);
  const ours = await netsvcTop(files, dim, filter, 1000);
  expect(new Map(ours), `${dim} '${filter}'`).toEqual(new Map(all));
  // The top 5: the same byte counts in the same order (which key of a tie comes first may differ).
  const five = nfdumpTop(nfDir, nfDim, filter, 5).map(([, g]) => g.bytes);
  expect(
    (await netsvcTop(files, dim, filter, 5)).map(([, g]) => g.bytes),
    `${dim} '${filter}' -n 5`,
  ).toEqual(five);
}

describe.skipIf(!haveNfdump && !requireAll)('top-N: netsvc lists the groups nfdump -s lists', () => {
  for (const name of ['1/softflowd-v9', '1/pmacct-v10']) {
    describe(name, () => {
      let nfDir = '';
      let files: string[] = [];
      let ordered: string[] = [];
      beforeAll(async () => {
        const fixture = flowFixture(name);
        [nfDir, files] = await Promise.all([nfcapdDir(fixture.datagrams().map((d) => d.payload)), importPcap(fixture)]);
        ordered = await resealOrdered(files);
      });
      for (const [nfDim, dim] of DIMENSIONS) {
        it(`-s ${nfDim} (${dim}) under ${FILTERS.length} filters, from blocks in arrival order and ordered by protocol and port`, async () => {
          for (const filter of FILTERS) {
            const f = dim.endsWith('_port') ? `(${filter}) and not proto icmp and not proto icmp6` : filter;
            await compare(nfDir, files, nfDim, dim, f);
            await compare(nfDir, ordered, nfDim, dim, f);
          }
        });
      }
    });
  }

  describe('made-up NetFlow v5 (ToS, interfaces and AS vary)', () => {
    let nfDir = '';
    let files: string[] = [];
    beforeAll(async () => {
      const datagrams = v5Datagrams();
      [nfDir, files] = await Promise.all([nfcapdDir(datagrams), importPcap(datagrams)]);
    });
    for (const [nfDim, dim] of DIMENSIONS) {
      it(`-s ${nfDim} (${dim})`, async () => {
        for (const filter of ['any', 'proto tcp', 'tos > 0', 'in if 2 or out if 3', 'not proto icmp and bytes > 2000']) {
          await compare(nfDir, files, nfDim, dim, filter);
        }
      });
    }
  });
});
