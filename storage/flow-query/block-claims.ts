/**
 * A scan's blocks shared out among threads as they go (match-scan.ts's
 * `part`): each thread takes the next block from a counter in shared
 * memory and notes itself as the block's taker. A thread that gets less CPU
 * (the one that also answers the API, or one sharing a core with another
 * process) simply takes fewer blocks, and the blocks a lost thread took are
 * known, to be scanned again elsewhere.
 */
import type { BlockPlan, BlockRef } from './match-scan.js';

/** One thread's view of the shared claims: `next` takes the next free block for `taker` (a number > 0). */
export class BlockClaims implements BlockPlan {
  /** [0]: the next block to hand out; [1 + b]: who took block b (0: nobody yet). */
  private readonly cells: Int32Array;
  readonly blocks: number;

  /** The shared memory for claims on `blocks` blocks. */
  static memory(blocks: number): SharedArrayBuffer {
    return new SharedArrayBuffer(4 * (blocks + 1));
  }

  /** `layout`: blockLayout of the blocks the claims were made for, when this thread's scan must check it found them too. */
  constructor(
    memory: SharedArrayBuffer,
    readonly taker: number,
    readonly counts: boolean,
    private readonly layout?: string,
  ) {
    this.cells = new Int32Array(memory);
    this.blocks = this.cells.length - 1;
  }

  next(): number {
    const b = Atomics.add(this.cells, 0, 1);
    if (b >= this.blocks) return -1;
    Atomics.store(this.cells, 1 + b, this.taker);
    return b;
  }

  /** The blocks the claims were made for lead this scan's (more may have been written since). */
  fits(blocks: readonly BlockRef[]): boolean {
    return (
      this.layout === undefined || (blocks.length >= this.blocks && blockLayout(blocks.slice(0, this.blocks)) === this.layout)
    );
  }

  /** The blocks `taker` took, ascending. */
  takenBy(taker: number): number[] {
    const out: number[] = [];
    for (let b = 0; b < this.blocks; b++) if (Atomics.load(this.cells, 1 + b) === taker) out.push(b);
    return out;
  }

  /**
   * What a lost `taker` may have left undone, ascending: the blocks it took, and any block handed
   * out whose taker was never noted (a thread stopped between taking a block and noting itself).
   * Only meaningful once every other taker has finished.
   */
  lostTo(taker: number): number[] {
    const handedOut = Math.min(Atomics.load(this.cells, 0), this.blocks);
    const out: number[] = [];
    for (let b = 0; b < this.blocks; b++) {
      const who = Atomics.load(this.cells, 1 + b);
      if (who === taker || (who === 0 && b < handedOut)) out.push(b);
    }
    return out;
  }
}

/** What identifies a scan's blocks, in order: the runs of consecutive blocks of each file. */
export function blockLayout(blocks: readonly BlockRef[]): string {
  const runs: Array<[string, number, number]> = [];
  for (const b of blocks) {
    const last = runs[runs.length - 1];
    if (last && last[0] === b.file.path && last[2] === b.block - 1) last[2] = b.block;
    else runs.push([b.file.path, b.block, b.block]);
  }
  return JSON.stringify(runs);
}

/**
 * A plan visiting the given blocks, in order. With `madeFor` (how many blocks and their
 * blockLayout, as when the numbers were handed out), the scan takes none unless it finds those
 * blocks again; `fitted` then tells whether it did.
 */
export function listedBlocks(
  blocks: readonly number[],
  counts: boolean,
  madeFor?: { blocks: number; layout: string },
): BlockPlan & { fitted: boolean } {
  let i = 0;
  const plan = {
    counts,
    fitted: true,
    next: () => (i < blocks.length ? blocks[i++]! : -1),
    fits: (refs: readonly BlockRef[]): boolean => {
      if (!madeFor) return true;
      plan.fitted = refs.length >= madeFor.blocks && blockLayout(refs.slice(0, madeFor.blocks)) === madeFor.layout;
      return plan.fitted;
    },
  };
  return plan;
}
