/**
 * Wiring of the logviewer for `startService`: one SyslogStore per entity
 * with a syslog database, the logviewer routes on them, and the embedded
 * syslog receiver (UDP + TCP) feeding the SQLite SystemEvents of the entity
 * named by `syslogReceiver.entity` when that entity's database is `sqlite:`.
 * Entities on MariaDB/PostgreSQL are fed by the operator's rsyslog instead.
 * The receiver writes through a connection of its own that never waits on a
 * lock (openSqliteEventSink), so a locked file fills its queue instead of
 * holding the event loop.
 */
import { isAbsolute, resolve } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { DatabaseCheck } from '../database-health.js';
import type { AppEnv } from '../../api/context.js';
import { createLogviewerRoutes } from '../../api/routes/logviewer.js';
import { SyslogReceiver } from '../../collector/syslog/syslog-receiver.js';
import { parseDatabaseUrl, redactUrl } from '../../storage/sql/sql-client.js';
import { openSyslogStore } from '../../storage/syslog/open-syslog-store.js';
import type { SqlSyslogStore } from '../../storage/syslog/sql-syslog-store.js';
import { openSqliteEventSink, SqliteSyslogStore } from '../../storage/syslog/sqlite-syslog-store.js';
import { sqlTimeouts, type Config } from '../config.js';
import { Lifecycle } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { OutageLog } from '../outage-log.js';

/** The running logviewer area. */
export interface LogviewerService {
  routes: OpenAPIHono<AppEnv>;
  /** Each entity's syslog database, for the health checks. */
  databases: DatabaseCheck[];
  /** The embedded receiver, when it runs. */
  receiver?: SyslogReceiver;
  /** Ports the receiver bound (differ from the config only with port 0). */
  receiverPorts?: { udpPort?: number; tcpPort?: number };
  /** Stops the receiver (writing what it holds), then closes the stores. */
  close(): Promise<void>;
}

/** The receiver's own non-waiting connection to the entity's `sqlite:` file; undefined for `:memory:` (one connection is the database). */
function receiverSink(url: string, dataDir: string): SqliteSyslogStore | undefined {
  const target = parseDatabaseUrl(url);
  if (target.dialect !== 'sqlite' || target.path === ':memory:') return undefined;
  return openSqliteEventSink(isAbsolute(target.path) ? target.path : resolve(dataDir, target.path));
}

/**
 * Opens every entity's syslog store and starts the receiver. `sqlite:` databases are netsvc's
 * own: SystemEvents and the `db index syslog` indexes are created in them on the spot.
 */
export async function startLogviewer(config: Config, runtime: { logger: Logger; now: () => number }): Promise<LogviewerService> {
  const log = runtime.logger.child({ component: 'logviewer' });
  // Every part is recorded as it opens: a failure closes the opened ones in reverse, and so does
  // close(): the receiver first (writing what it holds), then its own connection, then the stores.
  const parts = new Lifecycle({ onCloseError: (part, err) => log.error({ err, part }, 'closing the logviewer failed') });
  const stores = new Map<string, SqlSyslogStore>();
  for (const [entity, e] of Object.entries(config.entities)) {
    if (!e.syslog) continue;
    const url = e.syslog;
    const store = await parts.open(
      `syslog store ${entity}`,
      () => openSyslogStore(url, config.dataDir, { now: runtime.now }, sqlTimeouts(config)),
      (s) => s.close(),
    );
    stores.set(entity, store);
    if (store instanceof SqliteSyslogStore) await parts.run(() => store.ensureSchema());
  }

  let receiver: SyslogReceiver | undefined;
  let receiverPorts: LogviewerService['receiverPorts'];
  const r = config.syslogReceiver;
  const target = stores.get(r.entity);
  if (r.enabled && target && (target instanceof SqliteSyslogStore || r.feedExternal)) {
    // An external database takes the rows through the store that reads it (its pool); an
    // `sqlite:` file through a connection of the receiver's own that never waits for a lock.
    const own =
      target instanceof SqliteSyslogStore
        ? await parts.open(
            'syslog receiver connection',
            () => receiverSink(config.entities[r.entity]!.syslog!, config.dataDir),
            (s) => s?.close(),
          )
        : undefined;
    const sink = own ?? target;
    // Recorded before it starts: a start that fails half-way (UDP bound, TCP not) closes it.
    const created = await parts.open(
      'syslog receiver',
      () =>
        new SyslogReceiver(
          {
            host: r.host,
            port: r.port,
            udp: r.udp,
            tcp: r.tcp,
            batchSize: r.batchSize,
            flushIntervalMs: r.flushIntervalMs,
            maxMessageBytes: r.maxMessageBytes,
            maxQueue: r.maxQueue,
            maxConnections: r.maxConnections,
            maxConnectionsPerAddress: r.maxConnectionsPerAddress,
            tcpIdleTimeoutMs: r.tcpIdleTimeoutSec * 1000,
            receiveBuffer: r.receiveBuffer,
            timezone: config.timezone,
          },
          { sink, now: runtime.now, log },
        ),
      (rc) => rc.close(),
    );
    receiver = created;
    receiverPorts = await parts.run(() => created.start());
  } else if (r.enabled) {
    const url = config.entities[r.entity]?.syslog;
    log.info(
      { entity: r.entity, database: url ? redactUrl(url) : undefined },
      url
        ? `syslog receiver off: entity '${r.entity}' reads ${redactUrl(url)}, which rsyslog (or another writer) must feed; ` +
            `set syslogReceiver.feedExternal (NETSVC_SYSLOG_RECEIVER__FEED_EXTERNAL=true) for netsvc's receiver on port ${r.port} to write into it`
        : `syslog receiver off: entity '${r.entity}' has no syslog database (syslogReceiver.entity names the entity it writes for)`,
    );
  }

  const outages = new OutageLog(log, runtime.now);
  const routes = createLogviewerRoutes({
    storeOf: (entity) => stores.get(entity),
    timezone: config.timezone,
    onStoreError: (entity, err) => outages.report(entity, { entity, code: err.code }, err, 'syslog database unusable'),
  });
  log.info({ entities: [...stores.keys()], receiver: receiverPorts }, 'logviewer stores open');

  return {
    routes,
    databases: [...stores].map(([entity, store]) => ({
      entity,
      area: 'logviewer',
      database: redactUrl(config.entities[entity]!.syslog!),
      check: () => store.health(),
    })),
    receiver,
    receiverPorts,
    close: () => parts.close(),
  };
}
