/**
 * Wiring: builds every component from the configuration by hand and serves
 * them. `startService` is what `netsvc serve` runs and what tests start.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { FailureSignal } from '../collector/failure-signal.js';
import { createAdaptorServer, type ServerType } from '@hono/node-server';
import { createApp, type AppDeps } from '../api/app.js';
import { AuthService } from '../api/auth.js';
import type { AdminStore } from '../storage/admin/admin-store.js';
import { SqliteAdminStore } from '../storage/admin/sqlite-admin-store.js';
import { resolveSqlitePath, type Config } from './config.js';
import { startFlowPath } from './flow-path.js';
import { createMetrics } from './metrics.js';
import type { Logger } from './log.js';
import { startHotspot } from './radius-stores.js';
import { startLogviewer } from './syslog-path.js';

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

/** Opens the admin store named by the configuration. */
export function openAdminStore(config: Config): AdminStore {
  return new SqliteAdminStore(resolveSqlitePath(config.admin.database, config.dataDir));
}

/** The token signing key: from the config, else generated once and kept in the data dir. */
export function loadTokenKey(config: Config): Uint8Array {
  if (config.auth.jwtSecret) return new TextEncoder().encode(config.auth.jwtSecret);
  const file = join(config.dataDir, 'jwt.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  }
  return new TextEncoder().encode(readFileSync(file, 'utf8').trim());
}

/** A listening socket that could not be opened (port in use, no permission); the user's to fix. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/**
 * Connections the kernel holds for HTTP until accepted. Node's default, 511,
 * overflows when a thousand clients connect at once (a login storm): the
 * handshakes dropped come back after 1 s, 3 s, … and delay honest requests as
 * long. The kernel caps it at net.core.somaxconn (4096 on current Linux).
 */
const HTTP_BACKLOG = 4096;

function listenHttp(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const s = createAdaptorServer({ fetch, hostname });
    s.listen({ port, host: hostname, backlog: HTTP_BACKLOG }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : (err.code ?? err.message);
      reject(new ListenError(`cannot listen for HTTP on ${hostname}:${port}: ${why} (set http.port or --port)`, { cause: err }));
    });
  });
}

/** Starts HTTP (and, as they are wired, the collectors and receivers); resolves once listening. */
export async function startService(config: Config, runtime: Runtime): Promise<ServiceHandle> {
  const { logger } = runtime;
  mkdirSync(config.dataDir, { recursive: true });
  const admin = openAdminStore(config);
  const auth = new AuthService(admin, {
    key: loadTokenKey(config),
    tokenTtlSec: config.auth.tokenTtlSec,
    maxFailures: config.auth.maxFailures,
    failureWindowSec: config.auth.failureWindowSec,
    now: runtime.now,
    verify: { concurrency: config.auth.verifyConcurrency, queue: config.auth.verifyQueue, queuePerAddress: config.auth.verifyQueuePerAddress },
    knownSecrets: config.auth.knownSecrets,
  });
  // Each area's routes: a router from api/routes/<area>.ts, built from the stores of its entities.
  // Add one entry per area, e.g. `netflow: createNetflowRoutes({...})`; closers go into `toClose`.
  const toClose: Array<() => Promise<void> | void> = [];
  const closeStarted = async () => {
    for (const close of toClose.splice(0).reverse()) await close();
    admin.close();
  };
  const toFlush: Array<() => Promise<void>> = [];
  let server: ServerType;
  // A failure before serve subscribes (during the rest of the start) is kept for it.
  const fatal = new FailureSignal();
  try {
    const areas: AppDeps['areas'] = {};
    const flows = await startFlowPath(config, runtime);
    toClose.push(() => flows.close());
    toFlush.push(() => flows.flush());
    flows.onFatal((err) => fatal.fail(err));
    areas.netflow = flows.routes;
    const hotspot = await startHotspot(config, runtime);
    toClose.push(() => hotspot.close());
    areas.hotspot = hotspot.routes;
    const logviewer = await startLogviewer(config, runtime);
    toClose.push(() => logviewer.close());
    const receiver = logviewer.receiver;
    if (receiver) toFlush.push(() => receiver.flush());
    areas.logviewer = logviewer.routes;
    const metrics = createMetrics();
    metrics.addFlowStats(flows.listeners);
    metrics.addStorageStats({ writer: flows.writer, query: flows.query, retention: flows.retention, kpiBuilder: flows.builder });
    if (logviewer.receiver) metrics.addSyslogReceiver(logviewer.receiver);
    metrics.addAuthStats(auth);
    const app = createApp({ auth, logger, bodyLimitBytes: config.http.bodyLimit, areas, metrics: () => metrics.text() });
    server = await listenHttp(app.fetch, config.http.host, config.http.port);
  } catch (err) {
    // Nothing may keep running when the service does not start (listeners may already be bound).
    await closeStarted();
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, dataDir: config.dataDir }, 'netsvc listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    onFatal: (fn) => fatal.subscribe(fn),
    async flush() {
      await Promise.all(toFlush.map((f) => f()));
    },
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Keep-alive connections would hold close() open; end them.
          (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        await closeStarted();
        logger.info('netsvc stopped');
      })();
      return closing;
    },
  };
}
