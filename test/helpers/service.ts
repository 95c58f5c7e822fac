/** Settings that keep a `netsvc serve` started by a test on loopback only. */
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';

/**
 * Environment for a spawned `netsvc serve`: every network listener on an
 * ephemeral 127.0.0.1 port, so a test never binds a public address or
 * collides with another run. Add a key here when a new listener appears.
 */
export const LOOPBACK_LISTENERS: Record<string, string> = {
  NETSVC_FLOW_SOURCES: JSON.stringify({ netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } }),
  NETSVC_SYSLOG_RECEIVER: JSON.stringify({ host: '127.0.0.1', port: 0 }),
};

/**
 * Configuration for a service a test starts in-process: HTTP on an ephemeral
 * port, UTC, every listener on 127.0.0.1 with an ephemeral port; `overrides`
 * (as `loadConfig` takes them) replace any of these.
 */
export function loopbackConfig(dir: string, overrides: Record<string, unknown> = {}): Config {
  return loadConfig({
    cwd: dir,
    env: {},
    dataDir: join(dir, 'data'),
    overrides: {
      'http.port': 0,
      timezone: 'UTC',
      flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
      syslogReceiver: { host: '127.0.0.1', port: 0 },
      // No burst of warm-up queries in the middle of a test (test/src/areas/netflow-warm-up.test.ts has its own).
      analytics: { warmUp: false },
      ...overrides,
    },
  });
}
