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
import type { FlowListeners } from '../../collector/listen/flow-listeners.js';
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
import { Lifecycle } from '../lifecycle.js';
import { lowerOtherThreads } from '../thread-priority.js';

/** How often the open hours' files are named to the KPI worker, which keeps their aggregates. */
const TRACK_EVERY_MS = 2000;
/** How long after serve listens the flow queries' code is warmed up (after the start's own work). */
const QUERY_WARM_UP_DELAY_MS = 3000;

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
  /** Once serve listens: a scan worker is kept ready for queries (not before, so as not to slow the start). */
  listening(): void;
}

/** Builds and starts the flow path; rejects (with everything it opened closed) when a listener cannot bind. */
export async function startFlowPath(config: Config, runtime: { logger: Logger; now: () => number }): Promise<FlowPath> {
  const { logger, now } = runtime;
  const log = logger.child({ component: 'flows' });
  const sources = Object.keys(config.flowSources);
  const c = config.capture;

  // Every part is recorded as it opens: a failure closes the opened ones in reverse, and so does close().
  const parts = new Lifecycle({ onCloseError: (part, err) => log.error({ err, part }, 'closing the flow path failed') });
  // First: no other serve or import may be writing (and "recovering") these capture files.
  await parts.open(
    'data dir lock',
    () => acquireDataDirLock(config.dataDir, 'serve', 'stop it or start serve with another --data-dir'),
    (l) => l.release(),
  );
  const cache = await parts.open(
    'KPI cache',
    () => new SqliteKpiCache(kpiCachePath(config), now),
    (c) => c.close(),
  );
  const dns = await parts.open(
    'reverse DNS',
    () => new CachedReverseDns({ ...config.dns, now }),
    (d) => d.close(),
  );
  // Sealed hours are built in a worker thread when running compiled, so the listeners never wait on a build.
  const worker = await parts.open(
    'KPI worker',
    () => startWorkerHourBuilder(kpiCachePath(config)),
    (w) => w?.close(),
  );
  const builder = await parts.open(
    'KPI builder',
    () =>
      new KpiBuilder({
        cache,
        dataDir: config.dataDir,
        timezone: config.timezone,
        log,
        buildElsewhere: worker ? (file) => worker.build(file) : undefined,
      }),
    (b) => b.idle(),
  );
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
  // Recorded before they start: a start that fails half-way (one source bound) closes them.
  // Closing the listeners closes the writer in their thread (due hours are sealed first).
  const listeners = await parts.open(
    'flow listeners',
    () =>
      createThreadedFlowListeners(
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
      ),
    (l) => l.close(),
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

  // The routes' modules (their OpenAPI schemas) load on this thread while the decode thread
  // warms up and binds, instead of before it: a restart listens for flows sooner.
  const starting = listeners.start();
  const routesLoading = import('../../api/routes/netflow.js');
  // Awaited after the start: a failed start must not leave its rejection unhandled.
  routesLoading.catch(() => undefined);
  await parts.run(starting);
  const { createNetflowRoutes } = await parts.run(routesLoading);
  // The socket thread keeps the normal priority; everything else of the process yields to it
  // under CPU pressure (thread-priority.ts says why). It has the kernel buffer's few tens of
  // milliseconds to read a datagram in; the decode thread (which also writes the files) has the
  // ring's second, so it yields too. Measured both ways on 2026-11-25 (bench/README.md's git history).
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
  await parts.open(
    'retention',
    () => retention.start(),
    () => retention.close(),
  );
  // The open files the worker keeps up to date while nobody asks (and forgets once sealed).
  const trackOpenFiles = (): void => openHours.track(writer.openHours().map((h) => h.path));
  await parts.open(
    'open-hour tracking',
    () => {
      trackOpenFiles();
      return setInterval(trackOpenFiles, TRACK_EVERY_MS).unref();
    },
    (t) => clearInterval(t),
  );
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
  const { FlowAnalytics } = await import('../../storage/flow-query/flow-analytics.js');
  const { openGeoLookup } = await import('../../storage/geo/open-geo-lookup.js');
  const geo = openGeoLookup(config.geo, config.dataDir);
  // The tables' cache files built away from the HTTP thread (storage/geo/geo-warm.ts); not awaited.
  const { warmGeoCache } = await import('../../storage/geo/geo-warm.js');
  void warmGeoCache(config.geo, config.dataDir)?.then((r) =>
    r.ok ? log.info({ ms: Math.round(r.ms) }, 'geo tables ready') : log.warn({ err: r.error }, 'geo tables not built at start'),
  );
  const analytics = new FlowAnalytics({
    dataDir: config.dataDir,
    timezone: config.timezone,
    cache,
    geo: () => geo,
    geoSource: { config: config.geo, dataDir: config.dataDir },
    now,
    log,
    settledMs: config.capture.flushIntervalMs + 2000,
  });
  // Its scan worker thread (kept ready once serve listens, see listening()) stops with the flow path.
  const { scanWorkers } = await import('../../storage/flow-query/scan-pool.js');
  await parts.open(
    'analytics scan worker',
    () => scanWorkers,
    (w) => w.close(),
  );
  // The queries' code compiled before the first query (storage/flow-query/warm-up.ts), a little
  // after serve listens, unless a query came first (it warms the code itself). Stopped on close.
  const warmUp = await parts.open(
    'query warm-up',
    () => ({ timer: undefined as NodeJS.Timeout | undefined, stop: new AbortController(), running: Promise.resolve() }),
    async (w) => {
      clearTimeout(w.timer);
      w.stop.abort();
      await w.running;
    },
  );
  const startWarmUp = (): void => {
    if (!config.analytics.warmUp) return;
    warmUp.timer = setTimeout(() => {
      if (analytics.counters.filesOpened > 0 || warmUp.stop.signal.aborted) return;
      warmUp.running = import('../../storage/flow-query/warm-up.js')
        .then(({ warmUpQueries }) => warmUpQueries({ workers: scanWorkers, signal: warmUp.stop.signal }))
        .then(
          (r) =>
            r.aborted
              ? log.debug({ ms: Math.round(r.ms), queries: r.queries }, 'flow query warm-up stopped: netsvc is stopping')
              : log.info({ ms: Math.round(r.ms), queries: r.queries }, 'flow query code warmed up'),
          (err: unknown) => log.warn({ err }, 'flow query warm-up failed (queries are answered all the same)'),
        );
    }, QUERY_WARM_UP_DELAY_MS);
    warmUp.timer.unref();
  };
  const routes = createNetflowRoutes({
    query,
    analytics,
    dns,
    timezone: config.timezone,
    sourcesOf: (entity) => config.entities[entity]?.flowSources ?? [],
    // The decoder's per-exporter counters (the decode thread's last report) and the configured sampling overrides.
    exporters: {
      sources: () => listeners.sourceStats().map((s) => ({ ...s, sampling: config.flowSources[s.source]?.sampling ?? {} })),
    },
  });

  return {
    routes,
    writer,
    listeners,
    query,
    builder,
    retention,
    onFatal: (fn) => listeners.onFailure(fn),
    listening: () => {
      scanWorkers.keepWarm();
      startWarmUp();
    },
    async flush() {
      // The decoders' held-back batches, then the writer's pending rows, in the decode thread.
      await listeners.flush();
    },
    close() {
      // Tracking and retention stop, the listeners close (due hours are sealed and the writer
      // closed in their thread), cache builds finish, then the worker, DNS, cache and lock.
      return parts.close();
    },
  };
}
