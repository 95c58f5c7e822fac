/**
 * A one-time failure that listeners hear of whenever they subscribe: the
 * first `fail()` is kept, each subscriber is called once with it (at once
 * if it came first). For "receiving stopped for good" signals that cross
 * threads and layers (listeners → flow path → serve).
 */
export class FailureSignal {
  private failure: Error | undefined;
  private readonly listeners: Array<(err: Error) => void> = [];

  /** Records the failure (only the first counts) and tells every subscriber. */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const fn of this.listeners) fn(err);
  }

  /** Calls `fn` once with the failure: now if it happened, else when it does. */
  subscribe(fn: (err: Error) => void): void {
    this.listeners.push(fn);
    if (this.failure) fn(this.failure);
  }
}
