import { Listeners } from './listeners.js';
import type { FlowListenerOptions } from './listener-options.js';
import { sendSyntheticOverLoopback, WARM_UP_BUDGET_MS, WARM_UP_ROUNDS } from './loopback-warm-up.js';

/**
 * Warm-up through the whole receive path: a throwaway listener of the same
 * classes, on 127.0.0.1 and an ephemeral port, receives the synthetic v5, v9
 * and IPFIX datagrams (synthetic.ts) sent over loopback, into a sink that
 * keeps nothing. Decoding alone (warmUpDecoding) left Node's socket
 * callbacks, the queue and the drain loop cold, and V8 threw away part of
 * the optimised decode code at the first datagrams from a socket (buffers
 * of another shape than the warm-up's): in a profile of the first 200 ms at
 * 90 000 datagrams/s the drain loop alone took 30 ms, against 1 ms later.
 * Best effort: bounded by `budgetMs`; a loopback that drops or refuses only
 * makes it shorter. Returns what the throwaway listener saw.
 */
export async function warmUpOverLoopback(
  opts: FlowListenerOptions,
  now: () => number,
  budgetMs = WARM_UP_BUDGET_MS,
  rounds = WARM_UP_ROUNDS,
): Promise<{ port: number; sent: number; received: number; flows: number }> {
  const warm = new Listeners(
    { 'warm-up': { listen: '127.0.0.1:0' } },
    { sink: { write() {} }, now },
    { ...opts, warmUp: false, templateDir: undefined, faultInjection: undefined },
    warmUpOverLoopback,
  );
  const deadline = performance.now() + budgetMs;
  let sent = 0;
  let port = 0;
  try {
    await warm.start();
    port = warm.addresses()['warm-up']!.port;
    sent = await sendSyntheticOverLoopback(port, () => warm.sources[0]!.received, now(), rounds, deadline);
    await warm.idle();
  } catch {
    // A warm-up that cannot run (no loopback) is skipped.
  } finally {
    await warm.close();
  }
  const st = warm.sourceStats()[0]!;
  return { port, sent, received: st.received, flows: st.total.flows };
}
