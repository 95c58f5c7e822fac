/**
 * At most one log line per key and period, for problems that can repeat
 * with every datagram, query or request (a full queue, an unclaimed
 * exporter, a damaged file, a database down, a login storm). Every
 * component that rate-limits its log lines uses this one, on its own
 * injected clock.
 */
export class LogThrottle {
  private readonly keys = new Map<string, { lastMs: number; held: number }>();

  /**
   * @param everyMs least time between two lines with the same key
   * @param now the component's clock (ms)
   * @param maxKeys keys remembered at most; beyond it the memory starts over (a flood of spoofed addresses)
   */
  constructor(
    private readonly everyMs: number,
    private readonly now: () => number,
    private readonly maxKeys = 10_000,
  ) {}

  /**
   * Asks to log a line with this key now: the number of lines held back
   * since the last one logged (the line may then be logged), or undefined
   * when the period has not passed (the line is counted as held back).
   */
  pass(key: string): number | undefined {
    const t = this.now();
    const state = this.keys.get(key);
    if (state && t - state.lastMs < this.everyMs) {
      state.held++;
      return undefined;
    }
    if (!state && this.keys.size >= this.maxKeys) this.keys.clear();
    this.keys.set(key, { lastMs: t, held: 0 });
    return state?.held ?? 0;
  }

  /** True when a line with this key may be logged now (see `pass`). */
  allow(key: string): boolean {
    return this.pass(key) !== undefined;
  }
}
