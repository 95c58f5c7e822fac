import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FlowBatch } from '../../../common/flow-batch.js';
import { runCli } from '../../../src/cli.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { FakeClock, tempDataDir } from '../../storage/capture/flows.js';
import { captureCli } from '../../helpers/cli.js';

const H9 = Date.UTC(2026, 2, 25, 9);

/** Flows from three sources to two ports: 10.0.0.1 sends the most bytes, 10.0.0.3 the most flows. */
async function dataDir(): Promise<string> {
  const dir = tempDataDir();
  const clock = new FakeClock(H9);
  const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
  await w.start();
  const b = new FlowBatch(16);
  const rows: Array<[number, number, number, number]> = [
    // [last octet of the source, dst port, proto, bytes]
    [1, 443, 6, 9000],
    [1, 443, 6, 1000],
    [2, 53, 17, 300],
    [3, 53, 17, 100],
    [3, 53, 17, 100],
    [3, 443, 6, 100],
  ];
  rows.forEach(([src, port, proto, bytes], k) => {
    const i = b.addRow();
    b.cols.received[i] = H9 + 60_000 + k * 1000;
    b.cols.start[i] = H9 + 50_000 + k * 1000;
    b.cols.end[i] = H9 + 51_000 + k * 1000;
    b.cols.ipVersion[i] = 4;
    b.setV4('srcAddr', i, (0x0a000000 | src) >>> 0);
    b.setV4('dstAddr', i, 0xcb007194);
    b.cols.dstPort[i] = port;
    b.cols.proto[i] = proto;
    b.cols.bytes[i] = bytes;
    b.cols.packets[i] = 1;
  });
  w.write('netflow', b);
  clock.t = H9 + 3_700_000;
  await w.close();
  writeFileSync(join(dir, 'netsvc.config.json'), JSON.stringify({ timezone: 'UTC', dataDir: dir }));
  return dir;
}

describe('netsvc top', () => {
  it('--json prints the rows in metric order, other and total, in the shape scripts rely on', async () => {
    const dir = await dataDir();
    const ctx = captureCli();
    const code = await runCli(['top', '--by', 'src_ip', '-n', '2', '--json', '--config', join(dir, 'netsvc.config.json')], ctx);
    expect(code).toBe(0);
    expect(JSON.parse(ctx.stdout.join(''))).toEqual({
      rows: [
        { src_ip: '10.0.0.1', flows: 2, packets: 2, bytes: 10000 },
        { src_ip: '10.0.0.2', flows: 1, packets: 1, bytes: 300 },
      ],
      other: { flows: 3, packets: 3, bytes: 300 },
      total: { flows: 6, packets: 6, bytes: 10600 },
      groups: 3,
    });
  });

  it('groups by two dimensions with a filter and another metric; proto is a number; CSV has a header', async () => {
    const dir = await dataDir();
    const ctx = captureCli();
    const args = ['top', '--by', 'proto,dst_port', '--metric', 'flows', '--filter', 'not src ip 10.0.0.1', '--csv'];
    expect(await runCli([...args, '--config', join(dir, 'netsvc.config.json')], ctx)).toBe(0);
    expect(ctx.stdout).toEqual(['proto,dst_port,flows,packets,bytes', '17,53,3,3,500', '6,443,1,1,100']);
  });

  it('prints a table like nfdump -s: first seen, duration, shares of the total, and a summary', async () => {
    const dir = await dataDir();
    const ctx = captureCli();
    expect(await runCli(['top', '--by', 'dst_port', '--config', join(dir, 'netsvc.config.json')], ctx)).toBe(0);
    expect(ctx.stdout[0]).toBe('Top 10 dst_port ordered by bytes:');
    expect(ctx.stdout[1]).toMatch(/^Date first seen +Duration +dst_port +Flows\(%\) +Packets\(%\) +Bytes\(%\) +pps +bps +bpp$/);
    expect(ctx.stdout[2]).toMatch(/^2026-03-25 09:00:50\.000 +6\.000 +443 +3\(50\.0\) +3\(50\.0\) +10100\(95\.3\) /);
    expect(ctx.stdout.at(-1)).toBe('Summary: total flows: 6, total bytes: 10600, total packets: 6, avg bpp: 1767');
  });

  it('answers without a damaged file, and says so with exit code 1', async () => {
    const dir = await dataDir();
    writeFileSync(join(dir, 'flows', 'netflow', 'nfcapd.202603251000'), Buffer.alloc(200, 7));
    const ctx = captureCli();
    const code = await runCli(['top', '--by', 'proto', '--json', '--config', join(dir, 'netsvc.config.json')], ctx);
    expect(code).toBe(1);
    expect(JSON.parse(ctx.stdout.join('')).total.flows).toBe(6);
    expect(ctx.stderr.join('\n')).toMatch(/1 damaged capture file\(s\) or block\(s\) skipped/);
  });

  it('names the mistake: unknown dimension, bad metric, filter error with its column', async () => {
    const dir = await dataDir();
    const cfg = ['--config', join(dir, 'netsvc.config.json')];
    for (const [args, message] of [
      [['--by', 'colour'], /--by: unknown dimension 'colour'/],
      [['--by', 'src_ip', '--metric', 'octets'], /--metric must be one of bytes, packets, flows/],
      [['--by', 'src_ip', '--filter', 'proto tcp and'], /--filter: column 14: expected/],
      [['--by', 'src_ip', '-n', '0'], /-n must be an integer from 1 to 1000/],
      [['--by', 'src_ip', '-n', '1e2'], /-n must be an integer from 1 to 1000/],
      [['--by', 'src_ip', '--from', '2026-03-25 10:00', '--to', '2026-03-25 09:00'], /--to must be after --from/],
    ] as const) {
      const ctx = captureCli();
      expect(await runCli(['top', ...args, ...cfg], ctx)).toBe(2);
      expect(ctx.stderr.join('\n')).toMatch(message);
    }
  });
});
