/** Errors of the flow and syslog listeners that are the operator's to fix; apart, so the CLI can name them without loading the collector. */

/** A configuration the listeners cannot work with. */
export class ListenerConfigError extends Error {
  override readonly name = 'ListenerConfigError';
  constructor(
    message: string,
    readonly listen: string,
  ) {
    super(message);
  }
}

/** A socket that could not be bound. */
export class ListenerBindError extends Error {
  override readonly name = 'ListenerBindError';
  constructor(
    message: string,
    readonly listen: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What to tell about a socket that could not be bound: the setting that moves it, and who else may hold the port. */
export interface BindSetting {
  /** The config key (or keys) that sets the address, e.g. `flowSources.netflow.listen`. */
  setting: string;
  /** Its environment variable, when it has one. */
  env?: string;
  /** Who usually holds the port already. */
  holders: string;
}

/** The message of a socket that could not be bound, with what to do about the usual causes. */
export function bindMessage(listen: string, what: BindSetting, err: Error & { code?: string }): string {
  const set = `${what.setting}${what.env ? ` (${what.env})` : ''}`;
  if (err.code === 'EADDRINUSE')
    return `cannot listen on ${listen}: the port is in use (${what.holders}, holds it); stop that one, or set ${set} to another port`;
  if (err.code === 'EACCES')
    return `cannot listen on ${listen}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); set ${set} to a port above 1023`;
  if (err.code === 'EADDRNOTAVAIL')
    return `cannot listen on ${listen}: no interface of this machine has that address; set ${set} to one of its addresses, or 0.0.0.0`;
  return `cannot listen on ${listen}: ${err.message}`;
}

/**
 * The message of a flow socket that could not be bound: `sources` are the
 * names of the flow sources on it.
 */
export function bindFailureMessage(listen: string, sources: readonly string[], err: Error & { code?: string }): string {
  const setting = sources.length ? sources.map((s) => `flowSources.${s}.listen`).join(' or ') : "the flow source's listen";
  // The environment names a source by its name in UPPER_SNAKE (src/config.ts); a name with '-' has none.
  const first = sources[0];
  const env =
    first !== undefined && !first.includes('-')
      ? `NETSVC_FLOW_SOURCES__${first.replace(/([A-Z])/g, '_$1').toUpperCase()}__LISTEN`
      : undefined;
  return bindMessage(listen, { setting, ...(env ? { env } : {}), holders: 'another collector, nfcapd or a second netsvc' }, err);
}
