/**
 * Worker-thread side of the threaded flow listeners (see threaded-listener.ts).
 *
 * Runs the ordinary in-thread listeners (sockets, bounded queue, decoders,
 * template persistence) inside a worker, with a sink that posts each batch's
 * columns to the main thread, where the real sink (the capture writer)
 * runs. Main acknowledges every batch once its sink took it; while more than
 * `maxInFlightRows` rows are unacknowledged the sink holds the drain, so a
 * stalled main thread fills this thread's bounded queue (drops counted)
 * instead of the kernel's receive buffer (drops invisible).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ADDRESS_COLUMNS, NUMERIC_COLUMNS, type FlowBatch } from './flow-batch.js';
import type { FlowSink } from './flow-sink.js';
import { createFlowListeners, type FlowListenerOptions, type FlowSourceConfig, type ListenerLogger } from './udp-listener.js';
import type { MainToWorker, WorkerToMain } from './threaded-listener.js';

interface WorkerInput {
  sources: Record<string, FlowSourceConfig>;
  options: Partial<FlowListenerOptions>;
  maxInFlightRows: number;
  statsEveryMs: number;
}

const port = parentPort!;
const input = workerData as WorkerInput;
const post = (m: WorkerToMain, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer);

function plain(obj: object): object {
  // Errors and other class instances are flattened so they survive postMessage.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  }
  return out;
}

const logger: ListenerLogger = {
  info: (obj, msg) => post({ t: 'log', level: 'info', obj: plain(obj), msg: msg ?? '' }),
  warn: (obj, msg) => post({ t: 'log', level: 'warn', obj: plain(obj), msg: msg ?? '' }),
  error: (obj, msg) => post({ t: 'log', level: 'error', obj: plain(obj), msg: msg ?? '' }),
};

let inFlightRows = 0;
let release: (() => void) | undefined;

const forward: FlowSink = {
  write(source: string, batch: FlowBatch) {
    const n = batch.length;
    const numeric = NUMERIC_COLUMNS.map((c) => batch.cols[c].slice(0, n).buffer as ArrayBuffer);
    const addrs = ADDRESS_COLUMNS.map((c) => batch[c].slice(0, n * 16).buffer as ArrayBuffer);
    inFlightRows += n;
    post({ t: 'batch', source, length: n, numeric, addrs }, [...numeric, ...addrs]);
    if (inFlightRows <= input.maxInFlightRows) return;
    return new Promise<void>((resolve) => (release = resolve));
  },
};

function fail(err: Error & { listen?: string }): void {
  post({ t: 'failed', name: err.name, message: err.message, listen: err.listen ?? '' });
  port.close();
}

let built: ReturnType<typeof createFlowListeners> | undefined;
try {
  built = createFlowListeners(input.sources, { sink: forward, logger }, input.options);
} catch (err) {
  fail(err as Error);
}
const listeners = built!;
const stats = (): { sourceStats: ReturnType<typeof listeners.sourceStats>; socketStats: ReturnType<typeof listeners.socketStats> } => ({
  sourceStats: listeners.sourceStats(),
  socketStats: listeners.socketStats(),
});

let timer: NodeJS.Timeout | undefined;

port.on('message', (m: MainToWorker) => {
  if (!built) return;
  if (m.t === 'ack') {
    inFlightRows -= m.rows;
    if (release && inFlightRows <= input.maxInFlightRows) {
      const r = release;
      release = undefined;
      r();
    }
  } else if (m.t === 'idle') {
    void listeners.idle().then(() => post({ t: 'idle', id: m.id, ...stats() }));
  } else if (m.t === 'close') {
    if (timer) clearInterval(timer);
    void listeners.close().then(() => {
      post({ t: 'closed', ...stats() });
      port.close();
    });
  }
});

if (built) {
  listeners.start().then(() => {
    post({ t: 'started', addresses: listeners.addresses(), ...stats() });
    timer = setInterval(() => post({ t: 'stats', ...stats() }), input.statsEveryMs);
    timer.unref();
  }, fail);
}
