/**
 * The sending half of the warm-ups over loopback (listener-warm-up.ts for
 * sockets read on the decoding thread, socket-thread.ts for the socket
 * thread): the synthetic datagrams (synthetic.ts) sent to 127.0.0.1 in
 * bursts the receiver can keep up with.
 */
import { createSocket } from 'node:dgram';
import { syntheticWorkloads } from '../decode/synthetic.js';

/** Longest a warm-up over loopback takes, ms. */
export const WARM_UP_BUDGET_MS = 1000;
/** Passes over the synthetic workloads a warm-up sends at most. */
export const WARM_UP_ROUNDS = 40;

/**
 * Sends `rounds` passes over the synthetic workloads to 127.0.0.1:`port`
 * until `deadline` (performance.now()), in bursts of 32 (one event-loop turn
 * of socket reads) with at most 64 in flight; `received` says how many the
 * receiver has taken. Waits for the last ones within the deadline. Returns
 * how many were sent. Send errors (no loopback) only end it early.
 */
export async function sendSyntheticOverLoopback(
  port: number,
  received: () => number,
  nowMs: number,
  rounds: number,
  deadline: number,
): Promise<number> {
  const sender = createSocket('udp4');
  sender.on('error', () => undefined);
  let sent = 0;
  /** Waits (1 ms at a time, within the deadline) until the receiver has all but `behind` of what was sent. */
  const catchUp = async (behind: number): Promise<void> => {
    while (received() < sent - behind && performance.now() < deadline) await new Promise((ok) => setTimeout(ok, 1));
  };
  try {
    const workloads = syntheticWorkloads(nowMs);
    for (let r = 0; r < rounds && performance.now() < deadline; r++) {
      for (const w of workloads) {
        for (const d of [...w.setup, ...w.datagrams]) {
          sender.send(d, port, '127.0.0.1');
          sent++;
          if (sent % 32 === 0) await catchUp(64);
        }
      }
    }
    await catchUp(0);
  } finally {
    sender.close();
  }
  return sent;
}
