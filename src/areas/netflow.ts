/**
 * Wiring of the flow path for `startService`: UDP listeners → capture
 * writer → KPI cache on every sealed hour, retention, and the netflow API
 * (query service over files + cache + open-hour aggregates, reverse DNS).
 *
 *   socket thread ─ring─▶ decode thread: decode → capture writer (files)
 *                                          │ sealed hours, counters
 *   main thread: HTTP, KPI builder ◀───────┘
 *   KPI worker: sealed-hour builds, open-hour aggregates (from the files)
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { compiledModulePath } from '../../collector/listen/thread-id.js';
import { batchRowsFor, createThreadedFlowListeners } from '../../collector/listen/threaded-listener.js';
import type { FlowListeners } from '../../collector/listen/udp-listener.js';
import type { AppEnv } from '../../api/context.js';
import { CaptureRetention } from '../../storage/capture/retention.js';
import { newWriterCounters, type WriterCounters } from '../../storage/capture/writer-context.js';
import type { CaptureSinkMessage, CaptureSinkStats, CaptureWorkerSinkOptions } from './capture-worker-sink.js';
import { CachedReverseDns } from '../../storage/dns/cached-reverse-dns.js';
import { CaptureNetflowQuery } from '../../storage/kpi/capture-netflow-query.js';
import { KpiBuilder } from '../../storage/kpi/kpi-builder.js';
import { localOpenHours, OpenHourAggregator } from '../../storage/kpi/open-hour-aggregator.js';
import { SqliteKpiCache } from '../../storage/kpi/sqlite-kpi-cache.js';
import { startWorkerHourBuilder } from '../../storage/kpi/worker-hour-builder.js';
import type { Config } from '../config.js';
import { acquireDataDirLock } from '../data-dir-lock.js';
import { captureWriterOptions, kpiCachePath } from './netflow-storage-config.js';
import type { Logger } from '../log.js';
import { lowerOtherThreads } from '../thread-priority.js';

/** How often the open hours' files are named to the KPI worker, which keeps their aggregates. */
const TRACK_EVERY_MS = 2000;

const EMPTY_WRITER_COUNTERS: Readonly<WriterCounters> = Object.freeze(newWriterCounters());

/** What the main thread sees of the capture writer, which runs on the decode thread. */
export interface CaptureWriterStatus {
  readonly counters: Readonly<WriterCounters>;
  openHours(): CaptureSinkStats['openHours'];
}

/** The running flow path. */
export interface FlowPath {
  routes: OpenAPIHono<AppEnv>;
  writer: CaptureWriterStatus;
  listeners: FlowListeners;
  query: CaptureNetflowQuery;
  builder: KpiBuilder;
  retention: CaptureRetention;
  /** Writes every flow received so far to its capture file, and goes on receiving (SIGHUP). */
  flush(): Promise<void>;
  /** Stops receiving, writes and seals what is due, finishes cache builds, closes files. */
  close(): Promise<void>;
  /** Calls `fn` (once) if flow ingest dies while running (its worker thread failed): flows are no longer received. */
  onFatal(fn: (err: Error) => void): void;
}

/** Builds and starts the flow path; rejects (with everything it opened closed) when a listener cannot bind. */
export async function startFlowPath(config: Config, runtime: { logger: Logger; now: () => number }): Promise<FlowPath> {
  const { logger, now } = runtime;
  const log = logger.child({ component: 'flows' });
  const sources = Object.keys(config.flowSources);
  const c = config.capture;

  // First: no other serve or import may be writing (and "recovering") these capture files.
  const lock = acquireDataDirLock(config.dataDir, 'serve', 'stop it or start serve with another --data-dir');
  const cache = new SqliteKpiCache(kpiCachePath(config), now);
  // Sealed hours are built in a worker thread when running compiled, so the listeners never wait on a build.
  const worker = startWorkerHourBuilder(kpiCachePath(config));
  const builder = new KpiBuilder({
    cache,
    dataDir: config.dataDir,
    timezone: config.timezone,
    log,
    buildElsewhere: worker ? (file) => worker.build(file) : undefined,
  });
  // The writer does no per-key work: the open hours' KPI aggregates are read from their files
  // by the KPI worker (open-hour-aggregator.ts), off this thread, which answers HTTP.
  const openHours = worker?.openHours ?? localOpenHours(new OpenHourAggregator({ now, log }));
  const retention = new CaptureRetention({
    dataDir: config.dataDir,
    timezone: config.timezone,
    maxAgeHours: c.retention.maxAgeHours,
    maxBytes: c.retention.maxBytes,
    checkIntervalSec: c.retention.checkIntervalSec,
    sources,
    now,
    log,
  });
  retention.onExpired((e) => builder.expire(e.source, e.hourStart));
  // Sockets, decoders and the capture writer run off this thread: the socket thread only reads,
  // the decode thread decodes and writes the files (block encoding and compression), so neither
  // a request here nor a block being compressed there keeps datagrams from being read.
  // Templates survive restarts in <dataDir>/templates.
  const sinkOptions: CaptureWorkerSinkOptions = { ...captureWriterOptions(config), warmUp: true };
  const listeners = createThreadedFlowListeners(
    config.flowSources,
    {
      workerSink: {
        module: pathToFileURL(compiledModulePath(import.meta.url, 'capture-worker-sink')).href,
        options: sinkOptions,
      },
      logger: log,
    },
    {
      templateDir: join(config.dataDir, 'templates'),
      // Batches of a capture block: the writer then adopts each as it is (CaptureWriter.take).
      batchRows: batchRowsFor(c.blockRows),
      batchReceive: config.flowIngest.batchReceive,
    },
  );
  listeners.onSinkMessage((m) => {
    const msg = m as CaptureSinkMessage;
    if (msg.t !== 'sealed') return;
    const e = msg.event;
    void builder.onSealed(e).then(
      (ok) => ok || log.warn({ path: e.path }, 'sealed hour could not be read back; not cached'),
      (err: unknown) => log.error({ err, path: e.path }, 'KPI build of a sealed hour failed'),
    );
  });
  const writer: CaptureWriterStatus = {
    get counters() {
      return (listeners.sinkStats() as CaptureSinkStats | undefined)?.counters ?? EMPTY_WRITER_COUNTERS;
    },
    openHours: () => (listeners.sinkStats() as CaptureSinkStats | undefined)?.openHours ?? [],
  };
  const dns = new CachedReverseDns({ ...config.dns, now });

  // The routes' modules (their OpenAPI schemas) load on this thread while the decode thread
  // warms up and binds, instead of before it: a restart listens for flows sooner.
  const [started, loaded] = await Promise.allSettled([listeners.start(), import('../../api/routes/netflow.js')]);
  if (started.status === 'rejected' || loaded.status === 'rejected') {
    const err: unknown =
      started.status === 'rejected' ? started.reason : loaded.status === 'rejected' ? loaded.reason : undefined;
    await listeners.close().catch(() => undefined);
    await worker?.close();
    dns.close();
    cache.close();
    lock.release();
    throw err;
  }
  // The socket thread keeps the normal priority; everything else of the process yields to it
  // under CPU pressure (thread-priority.ts says why). It has the kernel buffer's few tens of
  // milliseconds to read a datagram in; the decode thread (which also writes the files) has the
  // ring's second, so it yields too. Measured both ways in bench/README.md (seventh session).
  const ingestThread = listeners.threadId();
  const decodeThread = listeners.decodeThreadId();
  const nice = config.flowIngest.otherThreadsNice;
  if (nice > 0 && ingestThread !== undefined) {
    const r = lowerOtherThreads([ingestThread], nice);
    if (r.failed > 0)
      log.warn(
        { ingestThread, decodeThread, nice, ...r },
        'some threads refused a lower priority; the flow socket thread may get less CPU first',
      );
    else
      log.info(
        { ingestThread, decodeThread, nice, ...r },
        'flow socket thread keeps its priority; the other threads yield to it',
      );
  } else if (nice > 0 && process.platform === 'linux') {
    log.warn({ nice }, 'the flow socket thread id is unknown (no /proc/thread-self); thread priorities left as they are');
  }
  retention.start();
  // The open files the worker keeps up to date while nobody asks (and forgets once sealed).
  const trackOpenFiles = (): void => openHours.track(writer.openHours().map((h) => h.path));
  trackOpenFiles();
  const track = setInterval(trackOpenFiles, TRACK_EVERY_MS);
  track.unref();
  // The cache is derived data: hours missing from it (a lost kpi.sqlite, a crash mid-build) are rebuilt in the background.
  void (async () => {
    for (const source of sources) {
      const r = await builder.sync(source);
      if (r.built || r.dropped || r.failed) log.info({ source, ...r }, 'KPI cache brought up to date with the capture files');
    }
  })().catch((err: unknown) => log.warn({ err }, 'KPI cache sync failed'));

  const query = new CaptureNetflowQuery({
    dataDir: config.dataDir,
    timezone: config.timezone,
    sources,
    cache,
    openHours,
    now,
    log,
  });
  const routes = loaded.value.createNetflowRoutes({
    query,
    dns,
    timezone: config.timezone,
    sourcesOf: (entity) => config.entities[entity]?.flowSources ?? [],
  });

  let closing: Promise<void> | undefined;
  return {
    routes,
    writer,
    listeners,
    query,
    builder,
    retention,
    onFatal: (fn) => listeners.onFailure(fn),
    async flush() {
      // The decoders' held-back batches, then the writer's pending rows, in the decode thread.
      await listeners.flush();
    },
    close() {
      closing ??= (async () => {
        clearInterval(track);
        retention.close();
        // Closing the listeners closes the writer in their thread (due hours are sealed first).
        await listeners.close();
        await builder.idle();
        await worker?.close();
        dns.close();
        cache.close();
        lock.release();
      })();
      return closing;
    },
  };
}
