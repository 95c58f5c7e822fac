/**
 * A flow sink that lives in the ingest worker itself (the decode thread), so
 * decoded batches never cross to the main thread. The worker builds it from
 * a module the wiring names (`WorkerSinkSpec.module`), so the collector never
 * imports what the sink writes to: serve names src/areas/capture-worker-sink.ts,
 * whose sink is the capture writer.
 */
import type { FlowSink } from '../../common/flow-sink.js';
import type { Log } from '../../common/log.js';

/** A sink in the ingest worker, with the life of the listeners it serves. */
export interface WorkerSink {
  sink: FlowSink;
  /** Runs before the sockets are bound (a writer recovers its files here). */
  start(): Promise<void>;
  /** Writes what it holds, and goes on (SIGHUP). */
  flush(): void;
  /** Runs after the listeners stopped: writes and closes everything. */
  close(): Promise<void>;
  /** Plain data sent to the main thread with every stats report. */
  stats(): unknown;
}

/** What the worker tells the sink module: how to reach the main thread, and where to log. */
export interface WorkerSinkContext {
  /** Sends a plain message to the main thread (ThreadedFlowListeners.onSinkMessage). */
  post(message: unknown): void;
  logger: Log;
}

/** The function a sink module exports as `createWorkerSink`. */
export type WorkerSinkFactory = (options: unknown, ctx: WorkerSinkContext) => WorkerSink;

/** Which module builds the worker's sink, and its (structured-clone) options. */
export interface WorkerSinkSpec {
  /** File URL of a compiled ES module exporting `createWorkerSink`. */
  module: string;
  options: unknown;
}
