/** The in-thread flow listeners' tuning (with its defaults) and what they need from outside. */
import type { FlowDecoder } from '../decode/decoder.js';
import type { FlowSink } from '../../common/flow-sink.js';
import type { Log } from '../../common/log.js';
import type { FlowSourceConfig } from './flow-source-config.js';

/** Tuning with defaults; the flow-source settings themselves come from the config. */
export interface FlowListenerOptions {
  /** Datagrams the queue holds at most (per socket). */
  queueDatagrams: number;
  /** Payload bytes the queue holds at most (per socket). */
  queueBytes: number;
  /** Rows per batch handed to the sink. */
  batchRows: number;
  /** Datagrams decoded before the drain yields to socket reads. */
  drainChunk: number;
  /**
   * Longest a drain turn decodes before it yields to socket reads, ms. The
   * event loop takes at most 32 datagrams off a socket per turn: while
   * decoding is slow (code not yet optimised after start, a burst of new
   * templates) a turn that decoded more than that would leave the backlog in
   * the kernel buffer, which drops when full; bounded by time, the backlog
   * moves into the queue (64 Ki datagrams) and is decoded once decoding is fast.
   */
  drainSliceMs: number;
  /**
   * Datagrams waiting in the queue beyond which decoding is behind: a drain
   * turn then lasts about `backlogSliceMs` (until the queue is half full), so that while decoding is slow
   * (the first few hundred ms after a start, before V8 has optimised the
   * code for real traffic) the thread reads the socket first and the backlog
   * waits in the queue, not in the kernel buffer. Above one event-loop turn
   * of reads (32), so at a steady rate turns stay `drainSliceMs` long.
   */
  backlogDatagrams: number;
  /**
   * Drain turn while the queue holds more than `backlogDatagrams`, ms: the
   * turn ends at the first clock check (every 8 datagrams) past it.
   */
  backlogSliceMs: number;
  /**
   * At start, decode synthetic datagrams (warm-up.ts), then receive them over loopback on a
   * throwaway listener (warmUpOverLoopback), so the receive and decode path is optimised
   * before the first real datagram.
   */
  warmUp: boolean;
  /**
   * Read the sockets on a thread of their own (socket-thread.ts) that only
   * copies each datagram into a shared ring (datagram-ring.ts, `queueBytes`
   * and `queueDatagrams` large), and decode here: a decode stall then never
   * keeps a socket from being read. Without it the sockets are read on this
   * thread, between decode turns (`drainSliceMs`, `backlogSliceMs`). With it,
   * received times are that thread's wall clock, not the injected `now`.
   */
  socketThread: boolean;
  /**
   * With `socketThread`: read the sockets in recvmmsg batches through the
   * native addon (batch-receive.ts) where it is built, which costs a
   * fraction of Node dgram's CPU per datagram; false, or no addon, reads
   * them through dgram.
   */
  batchReceive: boolean;
  /** First pause before a dead socket thread is started again, ms; it doubles with each restart in a row, up to 128 times. */
  restartDelayMs: number;
  /** How often template and held-data expiry runs. */
  expireEveryMs: number;
  /** Least time between two log lines about the same problem. */
  logEveryMs: number;
  /** A partial batch waits at most this long for more rows before it goes to the sink. */
  flushDelayMs: number;
  /** Where each source's templates are kept across restarts (`<dir>/<source>.msgpack`); none when absent. */
  templateDir?: string;
  /** How often the templates are saved (and always at close). */
  templateSaveEveryMs: number;
  /**
   * A template added, changed or withdrawn is saved at most this long after
   * the change (one save covers every change within it), so a crash soon
   * after an exporter's announcement does not lose it.
   */
  templateSaveDelayMs: number;
  /**
   * Test hook: `expire:N` or `flush:N` makes the first N template-expiry runs
   * or batch hand-overs to the sink throw, to prove ingest outlives them;
   * `crash` makes the threaded listeners' worker die right after it started;
   * `socket-crash:N` makes the first socket thread die once it has taken N datagrams.
   */
  faultInjection?: string;
}

/** Defaults: 128 Ki datagrams / 128 MiB queued (≈ 1 s of 1.4 KB datagrams at 90 000/s), 8192-row batches (or 100 ms), 256 datagrams or 0.3 ms per drain turn (0.05 ms behind 96 queued). */
export const DEFAULT_LISTENER_OPTIONS: Readonly<FlowListenerOptions> = Object.freeze({
  queueDatagrams: 131_072,
  queueBytes: 128 * 1024 * 1024,
  batchRows: 8192,
  drainChunk: 256,
  drainSliceMs: 0.3,
  backlogDatagrams: 96,
  backlogSliceMs: 0.05,
  warmUp: false,
  socketThread: false,
  batchReceive: true,
  restartDelayMs: 250,
  expireEveryMs: 10_000,
  logEveryMs: 60_000,
  flushDelayMs: 100,
  templateSaveEveryMs: 60_000,
  templateSaveDelayMs: 500,
});

/** What the listeners need from outside. */
export interface FlowListenerDeps {
  /** Where batches go (the capture writer). */
  sink: FlowSink;
  logger?: Log;
  now?: () => number;
  /**
   * Builds a source's decoder; default `createFlowDecoder` with the source's
   * sampling overrides and, with `templateDir`, the templates saved there.
   */
  createDecoder?: (source: string, config: FlowSourceConfig) => FlowDecoder;
}
