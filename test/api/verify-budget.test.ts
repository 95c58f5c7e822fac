import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../api/errors.js';
import { VerifyBudget, VerifyBusyError } from '../../api/verify-budget.js';

/** Work the test finishes by hand, recording the order it started in. */
function gate(started: string[]) {
  const open = new Map<string, () => void>();
  const work = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      open.set(name, () => resolve(name));
    });
  const finish = async (name: string) => {
    const f = open.get(name);
    if (!f) throw new Error(`${name} has not started`);
    f();
    // Let the budget's continuation start the next one.
    await new Promise((r) => setImmediate(r));
  };
  return { work, finish };
}

/** Settles a promise into 'ok' or the error's class name, so refusals can be asserted without unhandled rejections. */
function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (err: unknown) => (err instanceof VerifyBusyError ? 'busy' : String(err)),
  );
}

describe('VerifyBudget', () => {
  it('runs at most `concurrency` at once and starts the waiting ones as slots free', async () => {
    const started: string[] = [];
    const { work, finish } = gate(started);
    const budget = new VerifyBudget({ concurrency: 2, queue: 4, queuePerAddress: 4 });
    const results = ['a', 'b', 'c', 'd'].map((n) => budget.run(n, () => 0, work(n)));
    expect(started).toEqual(['a', 'b']);
    expect(budget.active).toBe(2);
    expect(budget.queued).toBe(2);
    await finish('a');
    expect(started).toEqual(['a', 'b', 'c']);
    await finish('b');
    await finish('c');
    await finish('d');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(budget.counters).toEqual({ started: 4, refused: 0, evicted: 0 });
    expect(budget.active).toBe(0);
  });

  it('refuses at once, without running the work, what the queue cannot hold', async () => {
    const started: string[] = [];
    const { work, finish } = gate(started);
    const budget = new VerifyBudget({ concurrency: 1, queue: 2, queuePerAddress: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((n) => outcome(budget.run(`10.0.0.${n.charCodeAt(0)}`, () => 0, work(n))));
    // Answered while a is still running: a refusal waits for nothing.
    expect(await Promise.all(all.slice(3))).toEqual(['busy', 'busy']);
    expect(budget.counters.refused).toBe(2);
    for (const n of ['a', 'b', 'c']) await finish(n);
    expect(await Promise.all(all)).toEqual(['ok', 'ok', 'ok', 'busy', 'busy']);
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('answers a refusal as a 429 that asks to retry in a second', async () => {
    const budget = new VerifyBudget({ concurrency: 1, queue: 0, queuePerAddress: 1 });
    const { work, finish } = gate([]);
    const first = budget.run('x', () => 0, work('a'));
    const err = await budget.run('y', () => 0, work('b')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VerifyBusyError);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).status).toBe(429);
    expect((err as RateLimitedError).retryAfterSec).toBe(1);
    await finish('a');
    await first;
  });

  it('holds at most `queuePerAddress` waiting entries of one address', async () => {
    const started: string[] = [];
    const { work, finish } = gate(started);
    const budget = new VerifyBudget({ concurrency: 1, queue: 8, queuePerAddress: 2 });
    const same = ['a1', 'a2', 'a3', 'a4'].map((n) => outcome(budget.run('10.0.0.1', () => 0, work(n))));
    const other = outcome(budget.run('10.0.0.2', () => 0, work('b1')));
    expect(await same[3]).toBe('busy');
    expect(budget.queued).toBe(3);
    for (const n of ['a1', 'a2', 'a3', 'b1']) await finish(n);
    expect(await Promise.all([...same, other])).toEqual(['ok', 'ok', 'ok', 'busy', 'ok']);
  });

  it('starts the lowest rank first, the oldest among equals, reading ranks when a slot frees', async () => {
    const started: string[] = [];
    const { work, finish } = gate(started);
    const budget = new VerifyBudget({ concurrency: 1, queue: 8, queuePerAddress: 8 });
    const rank: Record<string, number> = { busy: 0, x1: 3, x2: 3, y: 1, fresh: 0 };
    const all = Object.keys(rank).map((n) => budget.run(n, () => rank[n]!, work(n)));
    // y fails meanwhile, and now ranks behind x1 and x2.
    rank.y = 5;
    for (const n of ['busy', 'fresh', 'x1', 'x2', 'y']) await finish(n);
    await Promise.all(all);
    expect(started).toEqual(['busy', 'fresh', 'x1', 'x2', 'y']);
  });

  it('lets a better-ranked newcomer push out the newest of the worst waiting entries when full', async () => {
    const started: string[] = [];
    const { work, finish } = gate(started);
    const budget = new VerifyBudget({ concurrency: 1, queue: 3, queuePerAddress: 3 });
    const rank: Record<string, number> = { running: 0, a: 2, b: 4, c: 4, tie: 2, fresh: 0 };
    const runs = Object.fromEntries(Object.keys(rank).map((n) => [n, outcome(budget.run(n, () => rank[n]!, work(n)))]));
    // With a, b, c waiting, 'tie' (2) ranks better than the worst (4): c, the newest of b and c, goes.
    expect(await runs.c).toBe('busy');
    // Then 'fresh' (0) pushes out b, the worst left.
    expect(await runs.b).toBe('busy');
    expect(budget.counters.evicted).toBe(2);
    for (const n of ['running', 'fresh', 'a', 'tie']) await finish(n);
    expect(started).toEqual(['running', 'fresh', 'a', 'tie']);
    expect(await Promise.all(Object.values(runs))).toEqual(['ok', 'ok', 'busy', 'busy', 'ok', 'ok']);
  });

  it('refuses a newcomer that ranks no better than every waiting entry', async () => {
    const { work, finish } = gate([]);
    const budget = new VerifyBudget({ concurrency: 1, queue: 1, queuePerAddress: 1 });
    const running = budget.run('r', () => 0, work('r'));
    const waiting = outcome(budget.run('w', () => 1, work('w')));
    expect(await outcome(budget.run('n', () => 1, work('n')))).toBe('busy');
    expect(budget.counters).toEqual({ started: 1, refused: 1, evicted: 0 });
    await finish('r');
    await finish('w');
    await running;
    expect(await waiting).toBe('ok');
  });

  it('tells, without changing anything, whether an attempt would be let in', async () => {
    const { work, finish } = gate([]);
    const budget = new VerifyBudget({ concurrency: 1, queue: 1, queuePerAddress: 1 });
    expect(budget.wouldAdmit('a', 5)).toBe(true); // a free slot
    const running = budget.run('a', () => 0, work('a'));
    expect(budget.wouldAdmit('b', 5)).toBe(true); // room to wait
    const waiting = budget.run('b', () => 2, work('b'));
    expect(budget.wouldAdmit('b', 0)).toBe(false); // b already waits its one
    expect(budget.wouldAdmit('c', 2)).toBe(false); // full, and no better than b
    expect(budget.wouldAdmit('c', 1)).toBe(true); // would push b out
    expect(budget.queued).toBe(1);
    expect(budget.counters).toEqual({ started: 1, refused: 0, evicted: 0 });
    await finish('a');
    await finish('b');
    await Promise.all([running, waiting]);
  });

  it('frees the slot when the work fails', async () => {
    const budget = new VerifyBudget({ concurrency: 1, queue: 1, queuePerAddress: 1 });
    const failing = budget.run(
      'a',
      () => 0,
      () => Promise.reject(new Error('boom')),
    );
    const next = budget.run(
      'b',
      () => 0,
      () => Promise.resolve('next'),
    );
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
    expect(budget.active).toBe(0);
  });

  it('refuses bounds that would make no sense', () => {
    expect(() => new VerifyBudget({ concurrency: 0, queue: 1, queuePerAddress: 1 })).toThrow(/concurrency/);
    expect(() => new VerifyBudget({ concurrency: 1, queue: -1, queuePerAddress: 1 })).toThrow(/queue/);
    expect(() => new VerifyBudget({ concurrency: 1, queue: 1, queuePerAddress: 0.5 })).toThrow(/queuePerAddress/);
  });
});
