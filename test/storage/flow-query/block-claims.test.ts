/**
 * A scan's blocks shared out among scans of the same files (storage/flow-query/block-claims.ts,
 * match-scan.ts's `part`): every block visited once, by whichever scan took it.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { listCaptureFiles, newReadStats } from '../../../storage/capture/reader.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { BlockClaims, blockLayout, listedBlocks } from '../../../storage/flow-query/block-claims.js';
import { scanMatches, type BlockPlan, type MatchScanOptions } from '../../../storage/flow-query/match-scan.js';
import { randomFlows, tempDataDir } from '../capture/flows.js';

const H9 = Date.UTC(2026, 2, 25, 9);

describe('blocks shared out among scans', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('hands out every block once, and knows who took which', () => {
    const memory = BlockClaims.memory(10);
    const a = new BlockClaims(memory, 1, true);
    const b = new BlockClaims(memory, 2, false);
    const got: number[] = [a.next(), b.next(), b.next(), a.next()];
    for (let n = a.next(); n >= 0; n = a.next()) got.push(n);
    expect(got).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(b.next()).toBe(-1);
    expect(b.takenBy(2)).toEqual([1, 2]);
    expect(a.takenBy(1)).toEqual([0, 3, 4, 5, 6, 7, 8, 9]);
    const listed = listedBlocks([4, 7], false);
    expect([listed.next(), listed.next(), listed.next()]).toEqual([4, 7, -1]);
  });

  it('counts as lost a block handed out to a thread stopped before it noted itself', () => {
    const memory = BlockClaims.memory(6);
    const caller = new BlockClaims(memory, 1, true);
    const worker = new BlockClaims(memory, 2, false);
    expect([caller.next(), worker.next()]).toEqual([0, 1]);
    // The worker is terminated between taking block 2 and writing its name beside it.
    Atomics.add(new Int32Array(memory), 0, 1);
    for (let n = caller.next(); n >= 0; n = caller.next());
    expect(caller.takenBy(2)).toEqual([1]);
    expect(caller.lostTo(2)).toEqual([1, 2]);
  });

  it('a listed plan made for other blocks than the scan finds takes none, and says so', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 256, now: () => H9 + 3_000_000, timer: false });
    await w.start();
    w.write('netflow', randomFlows(2000, { received: H9, stepMs: 600, seed: 4 }));
    await w.close();
    const files = listCaptureFiles(dir, 'netflow', 'UTC');
    const scan = (part: BlockPlan): MatchScanOptions => ({
      files,
      from: H9,
      to: H9 + 3_600_000,
      columns: ['bytes'],
      stats: newReadStats(),
      part,
    });
    let layout = '';
    let blocks = 0;
    await scanMatches(
      { ...scan(listedBlocks([], true)), part: (refs) => ((layout = blockLayout(refs)), (blocks = refs.length), undefined) },
      () => undefined,
    );
    const same = listedBlocks([0, 1], false, { blocks, layout });
    const a = scan(same);
    await scanMatches(a, () => undefined);
    expect(same.fitted).toBe(true);
    expect(a.stats.blocksRead).toBe(2);
    const other = listedBlocks([0, 1], false, { blocks, layout: blockLayout([]) });
    const b = scan(other);
    await scanMatches(b, () => undefined);
    expect(other.fitted).toBe(false);
    expect(b.stats.blocksRead).toBe(0);
  });

  it('scans of the same files taking turns visit each matching row once, and count what they share once', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 256, now: () => H9 + 3_000_000, timer: false });
    await w.start();
    const flows = randomFlows(5000, { received: H9, stepMs: 600, seed: 3 });
    w.write('netflow', flows);
    w.flush();
    await w.close();
    // A window that leaves out the first and last blocks.
    const from = H9 + 5 * 60_000;
    const to = H9 + 45 * 60_000;
    const opts = (part?: MatchScanOptions['part']): MatchScanOptions => ({
      files: listCaptureFiles(dir, 'netflow', 'UTC'),
      from,
      to,
      columns: ['received'],
      stats: newReadStats(),
      part,
    });
    const rows = (into: number[]) => (m: { batch: { cols: { received: Float64Array } }; idx: Uint32Array; n: number }) => {
      for (let r = 0; r < m.n; r++) into.push(m.batch.cols.received[m.idx[r]!]!);
    };
    const whole: number[] = [];
    const alone = opts();
    await scanMatches(alone, rows(whole));

    let memory: SharedArrayBuffer | undefined;
    const first: number[] = [];
    const second: number[] = [];
    const one = opts((blocks): BlockPlan => {
      memory = BlockClaims.memory(blocks.length);
      return new BlockClaims(memory, 1, true);
    });
    // The second scan starts once the first knows its blocks; both then take turns between blocks.
    const firstDone = scanMatches(one, rows(first));
    await new Promise((r) => setImmediate(r));
    const two = opts(new BlockClaims(memory!, 2, false));
    await Promise.all([firstDone, scanMatches(two, rows(second))]);

    expect(first.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(0);
    expect([...first, ...second].sort((x, y) => x - y)).toEqual(whole);
    expect(one.stats.blocksRead + two.stats.blocksRead).toBe(alone.stats.blocksRead);
    // Blocks outside the window are counted by the scan that counts (the first) only.
    expect(one.stats.blocksSkipped + two.stats.blocksSkipped).toBe(alone.stats.blocksSkipped);
    expect(alone.stats.blocksSkipped).toBeGreaterThan(0);

    // A scan that finds other blocks than the claims were made for takes none of them; one that
    // finds more after them (written since) takes its share of those the claims cover.
    let layout = '';
    let made = 0;
    await scanMatches(
      opts((blocks) => {
        layout = blockLayout(blocks);
        made = blocks.length;
        return undefined;
      }),
      () => undefined,
    );
    const fewer = BlockClaims.memory(made);
    const shifted = opts(new BlockClaims(fewer, 2, false, layout));
    await scanMatches({ ...shifted, from: from + 600_000, to: to + 600_000 }, () => undefined);
    expect(shifted.stats.blocksRead).toBe(0);
    expect(new BlockClaims(fewer, 1, true).takenBy(2)).toEqual([]);
    const more = opts(new BlockClaims(BlockClaims.memory(made - 2), 2, false, blockLayout([])));
    await scanMatches(more, () => undefined);
    expect(more.stats.blocksRead).toBe(0);
    const prefix: string[] = [];
    await scanMatches(
      opts((blocks) => {
        prefix.push(blockLayout(blocks.slice(0, made - 2)));
        return undefined;
      }),
      () => undefined,
    );
    const longer = opts(new BlockClaims(BlockClaims.memory(made - 2), 2, false, prefix[0]));
    await scanMatches(longer, () => undefined);
    expect(longer.stats.blocksRead).toBe(made - 2);
  });
});
