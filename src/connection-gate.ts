/**
 * Fair admission of new HTTP connections, per client address.
 *
 * Node serves the connections the kernel hands it in the order they came: in
 * a storm of a thousand new connections (a login storm, issue 16), an honest
 * client's new connection waits behind every one of them, each costing the
 * event loop ≈ 0.5–0.8 ms to read, route, answer and close (0.6–0.9 s in all
 * on the 2-core build machine). The gate holds each new connection unread
 * (accepted with `pauseOnConnect`) and hands at most `perTurn` of them to the
 * HTTP server per turn of the event loop, taking first the addresses with the
 * fewest connections already open, round robin among equals. An address
 * that opens one connection at a time is then served within a few turns
 * whatever the others do, and a flood from a few addresses queues behind
 * itself. Connections already admitted (kept alive) are not gated.
 *
 * At most `maxWaiting` connections wait; more are closed at once and
 * counted, as the kernel would drop them with a full accept queue.
 */

/** What the gate needs of a socket. */
export interface GateSocket {
  once(event: 'close', listener: () => void): unknown;
  destroy(): void;
}

/** How many connections to admit per event-loop turn, and how many may wait. */
export interface ConnectionGateOptions {
  perTurn: number;
  maxWaiting: number;
}

export const DEFAULT_GATE_OPTIONS: ConnectionGateOptions = Object.freeze({ perTurn: 8, maxWaiting: 4096 });

/** Counters of the gate, for /metrics. */
export interface ConnectionGateStats {
  /** Connections waiting now. */
  waiting: number;
  /** Connections handed to the HTTP server. */
  admittedTotal: number;
  /** Connections closed unread because `maxWaiting` were waiting. */
  refusedTotal: number;
}

export class ConnectionGate<S extends GateSocket> {
  /** Admitted connections still open, per address (absent = 0). */
  private readonly open = new Map<string, number>();
  /** Waiting connections per address; iteration order is the round robin. */
  private readonly waiting = new Map<string, S[]>();
  private waitingCount = 0;
  private admittedTotal = 0;
  private refusedTotal = 0;
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly admit: (socket: S) => void,
    private readonly opts: ConnectionGateOptions = DEFAULT_GATE_OPTIONS,
    private readonly schedule: (fn: () => void) => void = setImmediate,
  ) {}

  /** A new connection from `address`: admitted within a few turns, or refused when too many wait. */
  offer(socket: S, address: string): void {
    if (this.closed || this.waitingCount >= this.opts.maxWaiting) {
      this.refusedTotal++;
      socket.destroy();
      return;
    }
    const q = this.waiting.get(address);
    if (q) q.push(socket);
    else this.waiting.set(address, [socket]);
    this.waitingCount++;
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.drain());
    }
  }

  stats(): ConnectionGateStats {
    return { waiting: this.waitingCount, admittedTotal: this.admittedTotal, refusedTotal: this.refusedTotal };
  }

  /** Closes every waiting connection; later offers are refused. */
  close(): void {
    this.closed = true;
    for (const q of this.waiting.values()) for (const s of q) s.destroy();
    this.waiting.clear();
    this.waitingCount = 0;
  }

  private drain(): void {
    this.scheduled = false;
    for (let n = 0; n < this.opts.perTurn && this.waitingCount > 0; n++) {
      let best = '';
      let bestOpen = Infinity;
      for (const address of this.waiting.keys()) {
        const open = this.open.get(address) ?? 0;
        if (open < bestOpen) {
          best = address;
          bestOpen = open;
          if (open === 0) break;
        }
      }
      const q = this.waiting.get(best)!;
      const socket = q.shift()!;
      this.waitingCount--;
      // To the end of the round robin (or out of it, when nothing of it waits).
      this.waiting.delete(best);
      if (q.length) this.waiting.set(best, q);
      this.open.set(best, bestOpen + 1);
      socket.once('close', () => {
        const left = (this.open.get(best) ?? 1) - 1;
        if (left > 0) this.open.set(best, left);
        else this.open.delete(best);
      });
      this.admittedTotal++;
      this.admit(socket);
    }
    // What is left waits for the next turn: the connections admitted now are read first.
    if (this.waitingCount > 0) {
      this.scheduled = true;
      this.schedule(() => this.drain());
    }
  }
}
