/**
 * The filter language against nfdump 1.7: the same export datagrams go into
 * nfcapd (replayed over loopback) and into netsvc capture files (`netsvc
 * import` of the pcap); for each expression, the flows and bytes netsvc's
 * compiled filter selects equal what `nfdump -R <dir> '<filter>'` prints.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { scanFlows } from '../../../storage/capture/reader.js';
import { compileFilter, directoryStats } from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import { flowFixture, requireAll } from '../../helpers/flow-fixtures.js';
import { haveNfdump } from '../../helpers/nfdump.js';
import { importPcap, nfcapdDir, sameFlowDirs, v5Datagrams } from '../../helpers/same-flows.js';

if (!haveNfdump && requireAll) throw new Error('nfdump and nfcapd are required (NETSVC_REQUIRE_ALL=1)');

/**
 * Each construct of the language at least once, with values the fixture holds (IPv4 and IPv6,
 * TCP/UDP/ICMP/ICMPv6/ESP/GRE/VRRP, flags, ports, sizes). A pair is [netsvc, nfdump] where
 * netsvc spells a primitive nfdump lacks (`exporter`, for nfdump's `router ip`).
 */
const FILTERS: readonly (string | readonly [string, string])[] = [
  'any',
  'proto tcp',
  'proto udp or proto icmp',
  'proto icmp6',
  'proto esp or proto gre or proto 112',
  'inet',
  'ipv6',
  'src ip 10.2.14.244',
  'dst host 192.168.16.213',
  'ip 2001:db8:3:f5::f4e0',
  'src net 10.2.0.0/16',
  'dst net 198.51.100.0 255.255.255.0',
  'net 2001:db8::/32',
  'src or dst net 203.0.113.0/24',
  'src and dst net 10.0.0.0/8',
  'ip in [ 10.2.14.181 192.168.16.0/24 ]',
  'dst port 53',
  'src port in [ 80 443, 8080 ]',
  // ICMPv6 left out: softflowd's v9 type.code in the destination port is kept by netsvc and read as 0.0
  // by nfdump (docs/netflow.md, the decoder's table of differences), so a port range would differ there.
  'port > 1024 and not proto icmp6',
  'proto icmp and dst port 2048',
  'net 10.2/16',
  'proto udp # DNS\n  and port 53',
  'bytes > 1m or packets > 1k',
  'dst port <= 25 and dst port gt 0',
  'src or dst port 123',
  'flags S',
  'flags SA and not flags F',
  'flags X',
  'flags R',
  'flags 0',
  // Under not, nfdump's flags means "none of them" (see flagsTest in filter-compile.ts).
  'not flags AP',
  'proto tcp and not flags AP',
  'not (flags AP or proto udp)',
  'not (flags SA and port 443)',
  'not not flags AP',
  'flags S and not flags AFRPU',
  'bytes > 1k',
  'packets >= 10',
  'bytes < 100 or packets eq 1',
  'tos 0',
  'tos > 0',
  'in if 0',
  'out if 1',
  'if 0',
  ['exporter 127.0.0.1', 'router ip 127.0.0.1'],
  'router ip 127.0.0.2',
  'not proto tcp',
  '! (proto tcp || proto udp)',
  'proto tcp && dst port 443',
  'PROTO TCP AND NOT (SRC PORT EQ 443 OR DST PORT == 443)',
  'src ip 10.2.14.244 or dst ip 10.2.14.244 and proto udp',
  'not not any',
];

/** Seed 1 (the addresses above are its hosts) from both exporters. */
const FIXTURES = ['1/softflowd-v9', '1/pmacct-v10'];

interface Totals {
  flows: number;
  bytes: number;
}

afterAll(() => {
  for (const d of sameFlowDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function nfdumpTotals(dir: string, filter: string): Totals {
  const r = spawnSync('nfdump', ['-R', dir, '-q', '-N', '-o', 'fmt:%byt', filter], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'UTC' },
  });
  if (r.status !== 0) throw new Error(`nfdump '${filter}' failed: ${r.stderr}${r.stdout}`);
  // One byte count per flow; nfdump says 'No matching flows' instead of printing nothing.
  const lines = r.stdout.split('\n').filter((l) => /^\s*\d+\s*$/.test(l));
  return { flows: lines.length, bytes: lines.reduce((s, l) => s + Number(l.trim()), 0) };
}

function netsvcTotals(files: readonly string[], filter: string): Totals {
  const f = compileFilter(parseFilter(filter));
  let flows = 0;
  let bytes = 0;
  let out = new Uint32Array(0);
  for (const batch of scanFlows(files, { columns: [...f.columns, 'bytes'] })) {
    if (out.length < batch.length) out = new Uint32Array(batch.length);
    const n = f.select(batch, 0, batch.length, out);
    flows += n;
    for (let k = 0; k < n; k++) bytes += batch.cols.bytes[out[k]!]!;
  }
  return { flows, bytes };
}

describe.skipIf(!haveNfdump && !requireAll)('filters: netsvc selects the flows nfdump 1.7 selects', () => {
  for (const name of FIXTURES) {
    describe(name, () => {
      let nfDir = '';
      let files: string[] = [];
      beforeAll(async () => {
        const fixture = flowFixture(name);
        [nfDir, files] = await Promise.all([nfcapdDir(fixture.datagrams().map((d) => d.payload)), importPcap(fixture)]);
      });

      it('holds the same flows to begin with', () => {
        const all = nfdumpTotals(nfDir, 'any');
        expect(all.flows).toBeGreaterThan(100);
        expect(netsvcTotals(files, 'any')).toEqual(all);
      });

      it("block verdicts from the files' column directories agree with select on every block", () => {
        let blocks = 0;
        for (const path of files) {
          const file = CaptureFile.open(path);
          try {
            for (let b = 0; b < file.blocks.length; b++) {
              const loaded = file.loadBlock(b);
              const batch = file.readBlock(b, undefined, undefined, 0, loaded);
              const out = new Uint32Array(batch.length);
              blocks++;
              for (const entry of FILTERS) {
                const text = typeof entry === 'string' ? entry : entry[0];
                const f = compileFilter(parseFilter(text));
                const n = f.select(batch, 0, batch.length, out);
                const v = f.block(directoryStats(loaded.columns));
                if (v === 'none') expect(n, text).toBe(0);
                if (v === 'all') expect(n, text).toBe(batch.length);
              }
            }
          } finally {
            file.close();
          }
        }
        expect(blocks).toBeGreaterThan(0);
      });

      for (const entry of FILTERS) {
        const [ours, theirs] = typeof entry === 'string' ? [entry, entry] : entry;
        it(`${ours}${theirs === ours ? '' : ` (nfdump: ${theirs})`}`, () => {
          const expected = nfdumpTotals(nfDir, theirs);
          expect(netsvcTotals(files, ours)).toEqual(expected);
          if (process.env.FILTER_NFDUMP_PRINT) console.log(`${name}\t${ours}\t${expected.flows}\t${expected.bytes}`);
        });
      }
    });
  }
});

const V5_FILTERS: readonly string[] = [
  'any',
  'tos 32',
  'tos > 0',
  'tos >= 184',
  'tos lt 100',
  'in if 2',
  'out if 3',
  'if 1',
  'in if 65535 or out if 4',
  'flags UAP',
  'flags F and not flags S',
  'flags 18',
  'flags > 31',
  'flags S and not flags AFRPU',
  'proto tcp and src port 443',
  'dst port in [ 53 80 ] and inet',
  'src net 10.0.0.0/30 and dst ip 198.51.100.5',
  'bytes > 2k and packets < 10',
];

describe.skipIf(!haveNfdump && !requireAll)('filters on made-up NetFlow v5: ToS, interfaces, flags', () => {
  let nfDir = '';
  let files: string[] = [];
  beforeAll(async () => {
    const datagrams = v5Datagrams();
    [nfDir, files] = await Promise.all([nfcapdDir(datagrams), importPcap(datagrams)]);
  });

  for (const text of V5_FILTERS) {
    it(text, () => {
      const expected = nfdumpTotals(nfDir, text);
      expect(netsvcTotals(files, text)).toEqual(expected);
      if (process.env.FILTER_NFDUMP_PRINT) console.log(`v5\t${text}\t${expected.flows}\t${expected.bytes}`);
    });
  }

  it('AS filters: nfdump 1.7.1 refuses them without a geo database, so they are checked against the AS columns', () => {
    const r = spawnSync('nfdump', ['-R', nfDir, '-q', 'src as 64500'], { encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`).toMatch(/geo location DB/);
    const fields = spawnSync('nfdump', ['-R', nfDir, '-q', '-N', '-o', 'fmt:%sas %das %byt'], { encoding: 'utf8' });
    const rows = fields.stdout
      .split('\n')
      .map((l) => l.trim().split(/\s+/).map(Number))
      .filter((x) => x.length === 3 && x.every((v) => Number.isFinite(v)));
    expect(rows.length).toBe(200);
    const count = (p: (src: number, dst: number) => boolean): { flows: number; bytes: number } => {
      const hit = rows.filter(([s, d]) => p(s!, d!));
      return { flows: hit.length, bytes: hit.reduce((n, x) => n + x[2]!, 0) };
    };
    expect(netsvcTotals(files, 'src as 64500')).toEqual(count((s) => s === 64500));
    expect(netsvcTotals(files, 'dst as 13335')).toEqual(count((_, d) => d === 13335));
    expect(netsvcTotals(files, 'as 65001')).toEqual(count((s, d) => s === 65001 || d === 65001));
    expect(netsvcTotals(files, 'as > 0')).toEqual(count((s, d) => s > 0 || d > 0));
    expect(netsvcTotals(files, 'src as in [ 64500 65001 ]')).toEqual(count((s) => s === 64500 || s === 65001));
    expect(netsvcTotals(files, 'src and dst as 0')).toEqual(count((s, d) => s === 0 && d === 0));
  });
});
