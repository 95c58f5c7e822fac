/**
 * One warning per database and interval while it keeps failing, with the
 * count of failures not logged since: during an outage every request fails
 * the same way, and a stack per request would bury the one line that says why.
 */
import { LogThrottle } from '../common/log-throttle.js';
import type { Logger } from './log.js';

/** Rate-limited warnings about failing databases, keyed by what failed (an entity's database). */
export class OutageLog {
  private readonly throttle: LogThrottle;

  /**
   * @param everyMs least time between two lines with the same key
   * @param maxKeys keys remembered at most (entities are few; this only bounds a bug)
   */
  constructor(
    private readonly log: Logger,
    now: () => number,
    everyMs = 10_000,
    maxKeys = 1_000,
  ) {
    this.throttle = new LogThrottle(everyMs, now, maxKeys);
  }

  /** Reports one failure: logged when the key has not been logged for `everyMs`, else only counted. */
  report(key: string, fields: Record<string, unknown>, err: Error, message: string): void {
    const held = this.throttle.pass(key);
    if (held === undefined) return;
    // The reason without a stack: the stack is the same for every request and says nothing of the cause.
    this.log.warn({ ...fields, reason: reasonOf(err), failuresNotLogged: held }, message);
  }
}

/** The error's message followed by those of its causes, which carry the driver's words. */
function reasonOf(err: Error): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 4; depth++) {
    if (!parts.some((p) => p.includes(e instanceof Error ? e.message : ''))) parts.push(`${e.name}: ${e.message}`);
    e = e.cause;
  }
  return parts.join(' <- ');
}
