/**
 * UDP listeners for the flow sources of the configuration.
 *
 * One socket per distinct `listen` address: sources on the same address and
 * port share it, and each datagram goes to the source that claims its
 * exporter address (`exporters`), else to the one source on that port that
 * claims none. Between socket and decoder sits a bounded queue: the socket
 * handler only timestamps and enqueues, and a drain loop decodes in chunks
 * and hands batches to the sink. When the sink is slow (a pending write) or
 * decoding falls behind, the queue fills and further datagrams are dropped
 * and counted; the socket itself is never blocked.
 *
 * Two ways to read the sockets: on this thread, between decode turns (the
 * queue is an array ring); or, with `socketThread` (how `serve` runs, via
 * threaded-listener.ts), on a thread of their own that copies each datagram
 * into a ring in shared memory (socket-thread.ts, datagram-ring.ts), so that
 * no decode stall keeps a socket from being read.
 *
 * Factories build; `start()` binds, `close()` stops receiving, drains what
 * was queued and flushes the last batches.
 *
 * The parts, one module each in this directory:
 *   flow-source-config.ts   a flow source's settings (schema and types; flow-source-defaults.ts: defaults)
 *   listener-options.ts     tuning (FlowListenerOptions) and its defaults, dependencies
 *   flow-listeners.ts       the FlowListeners interface and its counters
 *   socket-plan.ts          which sources share a socket, who claims which exporter
 *   source-decoder.ts       a source's decoder, with its templates kept on disk
 *   source-state.ts         what the listeners keep per source
 *   datagram-queue.ts       the queue a socket on the decoding thread fills
 *   drain-loop.ts           per socket: queue (or ring) → decode → batches → sink
 *   socket-thread-supervisor.ts  starts the socket thread, and again when it dies
 *   fault-hook.ts           the `faultInjection` test hook
 *   listener-warm-up.ts     the warm-up over loopback
 *   listeners.ts            the Listeners class that holds them together
 */
import type { FlowListeners } from './flow-listeners.js';
import type { FlowSourceSettings } from './flow-source-config.js';
import { DEFAULT_LISTENER_OPTIONS, type FlowListenerDeps, type FlowListenerOptions } from './listener-options.js';
import { warmUpOverLoopback } from './listener-warm-up.js';
import { Listeners } from './listeners.js';

/** Builds (without binding) the listeners of every flow source; throws ListenerConfigError on a conflicting setup. */
export function createFlowListeners(
  sources: Readonly<Record<string, FlowSourceSettings>>,
  deps: FlowListenerDeps,
  options: Partial<FlowListenerOptions> = {},
): FlowListeners {
  return new Listeners(sources, deps, { ...DEFAULT_LISTENER_OPTIONS, ...options }, warmUpOverLoopback);
}
