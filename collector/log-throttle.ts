/**
 * At most one log line per key and period, for problems that can repeat
 * with every datagram (a full queue, an unclaimed exporter).
 */
export class LogThrottle {
  private readonly last = new Map<string, number>();

  /**
   * @param everyMs least time between two lines with the same key
   * @param maxKeys keys remembered at most; beyond it the memory starts over (a flood of spoofed addresses)
   */
  constructor(
    private readonly everyMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** True when a line with this key may be logged at `nowMs` (and it is then counted as logged). */
  allow(key: string, nowMs: number): boolean {
    const last = this.last.get(key);
    if (last !== undefined && nowMs - last < this.everyMs) return false;
    if (this.last.size > this.maxKeys) this.last.clear();
    this.last.set(key, nowMs);
    return true;
  }
}
