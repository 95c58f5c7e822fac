/** Reverse DNS as the netflow API sees it: names for addresses, with a bounded wait. */

/** PTR lookups behind a cache. */
export interface ReverseDns {
  /**
   * Names of `ips` (already valid, de-duplicated addresses), waiting at most
   * `budgetMs` in total; an address without an answer by then maps to "".
   * Lookups still running at the deadline finish in the background and fill
   * the cache.
   */
  resolve(ips: readonly string[], budgetMs: number): Promise<Map<string, string>>;
  /**
   * The cached name of `ip` ("" when known to have none or not known yet),
   * never waiting; a miss starts a background lookup so a later call finds it.
   */
  peek(ip: string): string;
  /** Stops lookups in flight. */
  close(): void;
}
