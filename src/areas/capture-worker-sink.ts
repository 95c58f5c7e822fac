/**
 * The capture writer as the ingest worker's own sink (collector/listen/worker-sink.ts):
 * under serve, decoded batches are encoded, compressed and written on the
 * decode thread, and the main thread only answers HTTP. Loaded by the
 * worker from its compiled path; what the main thread needs of the writer
 * (sealed hours, counters, open files) travels as plain messages.
 */
import type { WorkerSink, WorkerSinkContext, WorkerSinkFactory } from '../../collector/listen/worker-sink.js';
import { CaptureWriter, type CaptureWriterOptions, type HourSealedEvent } from '../../storage/capture/writer.js';
import { type WriterCounters } from '../../storage/capture/writer-context.js';

/** The writer options that can cross to the worker (no clock, no file system, no logger: the worker brings its own). */
export type CaptureWorkerSinkOptions = Pick<
  CaptureWriterOptions,
  'dataDir' | 'timezone' | 'flushIntervalMs' | 'blockRows' | 'codec' | 'level' | 'fsyncOnFlush' | 'warmUp'
>;

/** What the writer in the worker reports with every stats message. */
export interface CaptureSinkStats {
  counters: WriterCounters;
  openHours: ReturnType<CaptureWriter['openHours']>;
}

/** Messages of the writer in the worker. */
export type CaptureSinkMessage = { t: 'sealed'; event: HourSealedEvent };

/** Builds the writer in the worker; the open hours' KPI aggregates are not its job (open-hour-aggregator.ts). */
export const createWorkerSink: WorkerSinkFactory = (options: unknown, ctx: WorkerSinkContext): WorkerSink => {
  const writer = new CaptureWriter({ ...(options as CaptureWorkerSinkOptions), log: ctx.logger, aggregates: false });
  writer.onHourSealed((event) => ctx.post({ t: 'sealed', event } satisfies CaptureSinkMessage));
  return {
    sink: writer,
    start: () => writer.start(),
    flush: () => writer.flush(),
    close: () => writer.close(),
    stats: (): CaptureSinkStats => ({ counters: { ...writer.counters }, openHours: writer.openHours() }),
  };
};
