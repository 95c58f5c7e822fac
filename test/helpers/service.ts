/** Settings that keep a `netsvc serve` started by a test on loopback only. */

/**
 * Environment for a spawned `netsvc serve`: every network listener on an
 * ephemeral 127.0.0.1 port, so a test never binds a public address or
 * collides with another run. Add a key here when a new listener appears.
 */
export const LOOPBACK_LISTENERS: Record<string, string> = {
  NETSVC_FLOW_SOURCES: JSON.stringify({ netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } }),
  NETSVC_SYSLOG_RECEIVER: JSON.stringify({ host: '127.0.0.1', port: 0 }),
};
