/**
 * Decode thread of the threaded flow listeners (see threaded-listener.ts).
 *
 *   socket thread            this thread                        main thread
 *   recv → claim → ring ───▶ decode → batch ──postMessage──▶ sink (capture writer)
 *                                         ◀── ack ───────
 *
 * The listeners here are those of udp-listener.ts with `socketThread`: the
 * sockets are read by a thread of their own that only copies each datagram
 * into a shared ring (datagram-ring.ts), and this thread decodes from the
 * ring. Neither a decode stall here nor anything the main thread does
 * (encoding a capture block, answering a query, a GC pause) keeps the
 * sockets from being read.
 *
 * With a worker sink (worker-sink.ts; serve's is the capture writer) the
 * batches stay here: the main thread then only answers HTTP. Without one,
 * batches go to the main thread as transferred column buffers; each is
 * acknowledged once the sink took it. While more than `maxInFlightRows`
 * rows are unacknowledged the sink write here stays pending, decoding
 * pauses, the ring fills and further datagrams are counted as
 * queue drops: memory stays bounded and every loss is counted.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ADDRESS_COLUMNS, NUMERIC_COLUMNS, type ColumnBuffers, type FlowBatch } from '../../common/flow-batch.js';
import type { FlowSink } from '../../common/flow-sink.js';
import type { MainToWorker, WorkerToMain } from './threaded-listener.js';
import { currentThreadId } from './thread-id.js';
import type { WorkerSink, WorkerSinkFactory, WorkerSinkSpec } from './worker-sink.js';
import { createFlowListeners } from './udp-listener.js';
import type { FlowListeners, SocketStats, SourceStats } from './flow-listeners.js';
import type { FlowSourceSettings } from './flow-source-config.js';
import type { FlowListenerOptions } from './listener-options.js';
import type { Log } from '../../common/log.js';

interface WorkerInput {
  sources: Record<string, FlowSourceSettings>;
  options: Partial<FlowListenerOptions>;
  maxInFlightRows: number;
  statsEveryMs: number;
  sink?: WorkerSinkSpec;
}

const port = parentPort!;
const input = workerData as WorkerInput;
const post = (m: WorkerToMain, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer);

function plain(obj: object): object {
  // Errors are flattened so they survive postMessage.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  return out;
}

const logger: Log = {
  info: (obj, msg) => post({ t: 'log', level: 'info', obj: plain(obj), msg: msg ?? '' }),
  warn: (obj, msg) => post({ t: 'log', level: 'warn', obj: plain(obj), msg: msg ?? '' }),
  error: (obj, msg) => post({ t: 'log', level: 'error', obj: plain(obj), msg: msg ?? '' }),
};

// ------------------------------------------------------- batches to main

let inFlightRows = 0;
/** Writes waiting for the in-flight rows to fall under the bound: one per socket group at most, each its own. */
const waiting: Array<() => void> = [];
/** Column buffers of whole batches the main thread gave back, reused by the next hand-offs. */
const spares: ColumnBuffers[] = [];
const MAX_SPARES = 4;
const forward: FlowSink = {
  write(source: string, batch: FlowBatch) {
    const n = batch.length;
    // A batch at least half full goes over as it is (its buffers transferred, the ingest
    // refills arrays the main thread gave back, or fresh ones): at high rates these are whole
    // capture blocks that the writer adopts without a copy. A few rows of a timed flush are
    // copied out instead.
    const whole = n * 2 >= batch.capacity;
    const { numeric, addrs } = whole
      ? batch.handOff(spares.pop())
      : {
          numeric: NUMERIC_COLUMNS.map((c) => batch.cols[c].slice(0, n).buffer as ArrayBuffer),
          addrs: ADDRESS_COLUMNS.map((c) => batch[c].slice(0, n * 16).buffer as ArrayBuffer),
        };
    inFlightRows += n;
    post({ t: 'batch', source, length: n, numeric, addrs, whole }, [...numeric, ...addrs]);
    if (inFlightRows <= input.maxInFlightRows) return;
    return new Promise<void>((resolve) => waiting.push(resolve));
  },
};

// ------------------------------------------------------------------ run

let local: WorkerSink | undefined;
if (input.sink) {
  try {
    const mod = (await import(input.sink.module)) as { createWorkerSink: WorkerSinkFactory };
    local = mod.createWorkerSink(input.sink.options, { post: (message) => post({ t: 'sink', message }), logger });
    await local.start();
  } catch (err) {
    const e = err as Error;
    const failed = new Error(`flow sink did not start: ${e.message}`, { cause: err });
    post({ t: 'failed', name: e.name, message: failed.message, listen: '' });
    port.close();
    // Ends the thread. Its 'error' event can reach the main thread before the message above, so it
    // carries the same words.
    throw failed;
  }
}

let listeners: FlowListeners;
try {
  listeners = createFlowListeners(input.sources, { sink: local?.sink ?? forward, logger }, input.options);
} catch (err) {
  // The main thread checks the setup before starting this thread; this is the backstop.
  const e = err as Error & { listen?: string };
  post({ t: 'failed', name: e.name, message: e.message, listen: e.listen ?? '' });
  port.close();
  throw err;
}
listeners.onFailure((err) => post({ t: 'fatal', message: err.message }));
const stats = (): { sourceStats: SourceStats[]; socketStats: SocketStats[]; tid: number | undefined; sink: unknown } => ({
  sourceStats: listeners.sourceStats(),
  socketStats: listeners.socketStats(),
  // The socket thread's id changes when it is restarted.
  tid: listeners.threadId(),
  sink: local?.stats(),
});

let timer: NodeJS.Timeout | undefined;
let closing = false;

port.on('message', (m: MainToWorker) => {
  if (m.t === 'ack') {
    inFlightRows -= m.rows;
    // Every waiting write goes on (each socket group flushes on its own; one left waiting
    // would stop its socket for good): the bound is checked again at their next batches.
    if (inFlightRows <= input.maxInFlightRows) for (const go of waiting.splice(0)) go();
  } else if (m.t === 'recycle') {
    if (spares.length < MAX_SPARES) spares.push({ numeric: m.numeric, addrs: m.addrs });
  } else if (m.t === 'idle') {
    void listeners.idle().then(() => post({ t: 'idle', id: m.id, ...stats() }));
  } else if (m.t === 'flush') {
    void listeners.idle().then(() => {
      local?.flush();
      post({ t: 'idle', id: m.id, ...stats() });
    });
  } else if (m.t === 'close' && !closing) {
    closing = true;
    if (timer) clearInterval(timer);
    void (async () => {
      // The sink is closed (its rows written) even when the listeners fail to close.
      try {
        await listeners.close();
      } finally {
        await local?.close();
      }
    })().then(
      () => {
        post({ t: 'closed', ...stats() });
        port.close();
      },
      (err: unknown) => {
        logger.error({ err }, 'flow listeners failed to close');
        port.close();
      },
    );
  }
});

listeners.start().then(
  () => {
    post({ t: 'started', addresses: listeners.addresses(), decodeTid: currentThreadId(), ...stats() });
    // Test hook: the thread dies of an uncaught error right after it started.
    if (input.options.faultInjection === 'crash')
      setTimeout(() => {
        throw new Error('injected crash of the flow ingest thread');
      }, 10);
    timer = setInterval(() => post({ t: 'stats', ...stats() }), input.statsEveryMs);
    timer.unref();
  },
  async (err: Error & { listen?: string }) => {
    // The sink started first (a writer recovered its files): it is closed before this thread ends.
    await local?.close().catch((closeErr: unknown) => logger.error({ err: closeErr }, 'flow sink failed to close'));
    post({ t: 'failed', name: err.name, message: err.message, listen: err.listen ?? '' });
    port.close();
  },
);
