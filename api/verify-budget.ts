/**
 * The auth CPU budget: a global bound on scrypt verifications running and
 * waiting. One verification holds a core for ~60 ms (N=16384, r=8), so a few
 * hundred wrong secrets sent at once, each under its address's failure limit,
 * would otherwise keep every core busy for a minute and starve the event loop,
 * the flow threads and every other route.
 *
 * At most `concurrency` verifications run at once (default 1: on the 2-core
 * machines netsvc runs on, the other core stays with the event loop and the
 * flow decode thread); at most `queue` wait, `queuePerAddress` of them from one
 * address. The queue is ordered by the rank the caller gives each entry, read
 * again whenever it is used (lower first, then oldest first): the auth service
 * ranks an address by its recent failures, refusals and other attempts under
 * way, so an address with no recent failures goes before the ones that keep
 * failing and waits at most for the verification in progress. Anything beyond
 * the bounds is refused at once with `VerifyBusyError`, without hashing: when
 * the queue is full, a newcomer ranked strictly better than the worst waiting
 * entry takes its place and that entry is refused instead.
 */
import { RateLimitedError } from './errors.js';

/** Bounds of the verification budget (`auth.verify*` in the configuration). */
export interface VerifyBudgetOptions {
  /** Verifications running at once. */
  concurrency: number;
  /** Verifications waiting for a slot, from all addresses together. */
  queue: number;
  /** Verifications waiting from one address. */
  queuePerAddress: number;
}

/** What the budget did, for `/metrics`. */
export interface VerifyBudgetCounters {
  /** Verifications started. */
  started: number;
  /** Attempts refused on arrival because the budget was full (never hashed). */
  refused: number;
  /** Waiting attempts pushed out by a better-ranked newcomer (never hashed). */
  evicted: number;
}

/**
 * The 429 of an attempt the budget refused. The wait is a second: a full queue
 * drains in (queue + concurrency) × ~60 ms, well within it. It keeps its
 * parent's `name` (typed as that literal) and is answered like any 429, with
 * Retry-After; code tells it apart by class.
 */
export class VerifyBusyError extends RateLimitedError {
  constructor() {
    super('Too many authentication attempts are being checked right now. Try again in 1 s.', 1);
  }
}

interface Waiting {
  address: string;
  rank: () => number;
  start: () => void;
  refuse: () => void;
}

/** Runs verifications within the bounds; see the module comment. */
export class VerifyBudget {
  readonly counters: VerifyBudgetCounters = { started: 0, refused: 0, evicted: 0 };
  private running = 0;
  // Small by design (tens of entries), so a linear scan beats keeping a heap ordered under ranks that change.
  private readonly waiting: Waiting[] = [];
  private readonly waitingPerAddress = new Map<string, number>();

  constructor(private readonly opts: VerifyBudgetOptions) {
    const atLeast = (name: keyof VerifyBudgetOptions, min: number) => {
      if (!Number.isInteger(opts[name]) || opts[name] < min)
        throw new Error(`verify budget: ${name} must be an integer of at least ${min}`);
    };
    atLeast('concurrency', 1);
    atLeast('queue', 0);
    atLeast('queuePerAddress', 1);
  }

  /** Verifications running now. */
  get active(): number {
    return this.running;
  }

  /** Verifications waiting now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `work` when a slot is free, or rejects with VerifyBusyError (without
   * calling it) when the budget has no room for an attempt of this rank.
   */
  run<T>(address: string, rank: () => number, work: () => Promise<T>): Promise<T> {
    if (this.running < this.opts.concurrency && this.waiting.length === 0) return this.execute(work);
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        address,
        rank,
        start: () => void this.execute(work).then(resolve, reject),
        refuse: () => reject(new VerifyBusyError()),
      };
      if (!this.admit(entry)) {
        this.counters.refused++;
        entry.refuse();
        return;
      }
      this.waiting.push(entry);
      this.waitingPerAddress.set(address, (this.waitingPerAddress.get(address) ?? 0) + 1);
    });
  }

  /**
   * Whether an attempt of this rank from `address` would be let in now (run
   * or wait), changing nothing: lets a caller refuse before doing any work
   * for it. `run` decides again.
   */
  wouldAdmit(address: string, rank: number): boolean {
    if (this.running < this.opts.concurrency && this.waiting.length === 0) return true;
    if ((this.waitingPerAddress.get(address) ?? 0) >= this.opts.queuePerAddress) return false;
    if (this.waiting.length < this.opts.queue) return true;
    return this.waiting.some((w) => w.rank() > rank);
  }

  /** Counts an attempt refused on `wouldAdmit`'s word, as `run` counts its own refusals. */
  countRefused(): void {
    this.counters.refused++;
  }

  /** Makes room for `entry` if it may wait; false when it must be refused. */
  private admit(entry: Waiting): boolean {
    if ((this.waitingPerAddress.get(entry.address) ?? 0) >= this.opts.queuePerAddress) return false;
    if (this.waiting.length < this.opts.queue) return true;
    let worst: { index: number; rank: number } | undefined;
    this.waiting.forEach((w, index) => {
      const rank = w.rank();
      // The newest of the worst goes: those that waited longer keep their place.
      if (!worst || rank >= worst.rank) worst = { index, rank };
    });
    if (!worst || worst.rank <= entry.rank()) return false;
    const [out] = this.remove(worst.index);
    this.counters.evicted++;
    out!.refuse();
    return true;
  }

  private remove(index: number): Waiting[] {
    const out = this.waiting.splice(index, 1);
    for (const w of out) {
      const n = (this.waitingPerAddress.get(w.address) ?? 1) - 1;
      if (n > 0) this.waitingPerAddress.set(w.address, n);
      else this.waitingPerAddress.delete(w.address);
    }
    return out;
  }

  private async execute<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    this.counters.started++;
    try {
      return await work();
    } finally {
      this.running--;
      this.next();
    }
  }

  /** Starts the best-ranked waiting entry (lowest rank, then oldest) when a slot is free. */
  private next(): void {
    while (this.running < this.opts.concurrency && this.waiting.length > 0) {
      let best = 0;
      let bestRank = Infinity;
      // `waiting` is in arrival order, so the first of the lowest rank is the oldest.
      this.waiting.forEach((w, index) => {
        const rank = w.rank();
        if (rank < bestRank) {
          best = index;
          bestRank = rank;
        }
      });
      this.remove(best)[0]!.start();
    }
  }
}
