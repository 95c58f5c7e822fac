/**
 * Wiring: builds every component from the configuration by hand and serves
 * them. `startService` is what `netsvc serve` runs and what tests start.
 *
 * Only types are imported statically: the flow path is loaded and started
 * first, and the API, hotspot and logviewer modules load while its threads
 * warm up and bind, so that a restart listens for flows as early as it can.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { ServerType } from '@hono/node-server';
import type { AppDeps } from '../api/app.js';
import type { LoginRefusal } from '../api/auth.js';
import { LogThrottle } from '../common/log-throttle.js';
import { FailureSignal } from '../collector/listen/failure-signal.js';
import { packageRoot } from '../collector/listen/thread-id.js';
import { loadTokenKey, openAdminStore } from './admin-store.js';
import { DatabaseHealth } from './database-health.js';
import type { Config } from './config.js';
import { listenHttp } from './http-listen.js';
import { Lifecycle } from './lifecycle.js';
import type { Logger } from './log.js';

/**
 * The log line of a refused login, with its reason (the client only ever sees
 * the same 401 or 429): at most one per address and reason every 10 s, so a
 * storm writes a line per attacker, not per attempt; `suppressed` says how many
 * were left out since the last.
 */
function refusalLog(logger: Logger, now: () => number): (r: LoginRefusal) => void {
  const throttle = new LogThrottle(10_000, now);
  return (r) => {
    const left = throttle.pass(`${r.client} ${r.reason}`);
    if (left === undefined) return;
    logger.warn(
      {
        area: r.area,
        client: r.client,
        reason: r.reason,
        api_id: r.apiId,
        retryAfterSec: r.retryAfterSec,
        ...(left ? { suppressed: left } : {}),
      },
      'login refused',
    );
  };
}

/** Injected process-wide dependencies. */
export interface Runtime {
  logger: Logger;
  now: () => number;
}

/** A running service. */
export interface ServiceHandle {
  /** Base URL of the HTTP listener, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Writes what the receivers hold (flows to capture files, syslog to its database) and goes on running. */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Calls `fn` (once) when a part of the service dies while running (flow ingest): the service should then stop. */
  onFatal(fn: (err: Error) => void): void;
}

/** Starts HTTP (and, as they are wired, the collectors and receivers); resolves once listening. */
export async function startService(config: Config, runtime: Runtime): Promise<ServiceHandle> {
  const { logger } = runtime;
  mkdirSync(config.dataDir, { recursive: true });
  // Every part is recorded as it starts: a failure closes the started ones in reverse (nothing may
  // keep running when the service does not start: listeners may already be bound), and so does close().
  const parts = new Lifecycle({
    onCloseError: (component, err) => logger.error({ err, component }, 'error while shutting down'),
  });
  const admin = await parts.open(
    'admin store',
    () => openAdminStore(config),
    (a) => a.close(),
  );
  const toFlush: Array<() => Promise<void>> = [];
  // A failure before serve subscribes (during the rest of the start) is kept for it.
  const fatal = new FailureSignal();
  // The flow path starts first; the other modules load while its threads warm up and bind.
  const flowsStarting = import('./areas/netflow.js').then((m) => m.startFlowPath(config, runtime));
  const modulesLoading = Promise.all([
    import('../api/app.js'),
    import('../api/auth.js'),
    import('../api/router.js'),
    import('./metrics.js'),
    import('./areas/hotspot.js'),
    import('./areas/logviewer.js'),
  ]);
  // Awaited after the flow path: a failed flow start must not leave its rejection unhandled.
  modulesLoading.catch(() => undefined);
  const flows = await parts.open('flows', flowsStarting, (f) => f.close());
  toFlush.push(() => flows.flush());
  flows.onFatal((err) => fatal.fail(err));
  const [
    { createApp },
    { AuthService, refuseAuthEarly },
    { useRequiredMessages },
    { createMetrics },
    { startHotspot },
    { startLogviewer },
  ] = await parts.run(modulesLoading);
  // Before any route is built: request validation says "Missing required parameter" (api/router.ts).
  useRequiredMessages();
  // Steps that open nothing go through `parts.run` too: one that throws (an unreadable jwt.key)
  // closes what is already started.
  const auth = await parts.run(
    () =>
      new AuthService(admin, {
        key: loadTokenKey(config),
        tokenTtlSec: config.auth.tokenTtlSec,
        maxFailures: config.auth.maxFailures,
        failureWindowSec: config.auth.failureWindowSec,
        now: runtime.now,
        verify: {
          concurrency: config.auth.verifyConcurrency,
          queue: config.auth.verifyQueue,
          queuePerAddress: config.auth.verifyQueuePerAddress,
        },
        knownSecrets: config.auth.knownSecrets,
        onRefused: refusalLog(logger, runtime.now),
      }),
  );
  // Each area's routes: a router from api/routes/<area>.ts, built from the stores of its entities.
  // Add one entry per area, e.g. `netflow: createNetflowRoutes({...})`, its start in `parts`.
  const areas: AppDeps['areas'] = {};
  areas.netflow = flows.routes;
  const hotspot = await parts.open(
    'hotspot',
    () => startHotspot(config, runtime),
    (h) => h.close(),
  );
  areas.hotspot = hotspot.routes;
  const logviewer = await parts.open(
    'logviewer',
    () => startLogviewer(config, runtime),
    (l) => l.close(),
  );
  const receiver = logviewer.receiver;
  if (receiver) toFlush.push(() => receiver.flush());
  areas.logviewer = logviewer.routes;
  const app = await parts.run(() => {
    const health = new DatabaseHealth([...hotspot.databases, ...logviewer.databases], {
      now: runtime.now,
      timeoutMs: config.database.operationTimeoutMs,
    });
    // Not awaited: a database that does not answer must not hold the start (it may come back).
    void health.logAtStart(logger);
    const metrics = createMetrics();
    metrics.addFlowStats(flows.listeners);
    metrics.addStorageStats({ writer: flows.writer, query: flows.query, retention: flows.retention, kpiBuilder: flows.builder });
    if (logviewer.receiver) metrics.addSyslogReceiver(logviewer.receiver);
    metrics.addAuthStats(auth);
    return createApp({
      auth,
      logger,
      bodyLimitBytes: config.http.bodyLimit,
      areas,
      metrics: () => metrics.text(),
      health: () => health.states(),
      // Built by `npm run build` (vite, web/); from source and from dist/ alike.
      consoleDir: join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'dist', 'console'),
    });
  });
  const server = await parts.open(
    'http',
    () => listenHttp(app.fetch, config.http.host, config.http.port, (req, res) => refuseAuthEarly(auth, req, res)),
    closeServer,
  );
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, dataDir: config.dataDir }, 'netsvc listening');
  flows.listening();

  let closing: Promise<void> | undefined;
  return {
    url,
    onFatal: (fn) => fatal.subscribe(fn),
    async flush() {
      await Promise.all(toFlush.map((f) => f()));
    },
    close() {
      // HTTP first, then the areas in reverse of their start, the admin store last.
      closing ??= parts.close().then(() => logger.info('netsvc stopped'));
      return closing;
    },
  };
}

function closeServer(server: ServerType): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Keep-alive connections would hold close() open; end them.
    (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
}
