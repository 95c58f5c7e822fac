/** The socket plan of a listener setup: which flow sources share a socket, and who claims which exporter. Pure: binds nothing. */
import ipaddr from 'ipaddr.js';
import { ListenerConfigError } from './listener-errors.js';
import type { FlowSourceConfig } from './flow-source-config.js';

/** Parses `HOST:PORT` / `[V6]:PORT` into host, port and socket type. */
export function parseListen(listen: string): { host: string; port: number; type: 'udp4' | 'udp6' } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(listen) ?? /^([^:]+):(\d+)$/.exec(listen);
  if (!m) throw new ListenerConfigError(`listen address must be HOST:PORT or [V6]:PORT, got '${listen}'`, listen);
  const port = Number(m[2]);
  if (port > 65535) throw new ListenerConfigError(`port out of range in '${listen}'`, listen);
  const host = m[1]!;
  return { host, port, type: host.includes(':') ? 'udp6' : 'udp4' };
}

function normaliseAddress(text: string, listen: string): string {
  if (!ipaddr.isValid(text)) throw new ListenerConfigError(`exporter '${text}' is not an IP address`, listen);
  return ipaddr.process(text).toString();
}

/** One socket of a listener setup: which sources share it and who claims which exporter. */
export interface SocketPlan {
  listen: string;
  /** Indexes into the source list. */
  sourceIdx: number[];
  requestedBuffer: number;
  /** Exporter address (normalised; IPv4 also as IPv4-mapped) → source index. */
  claims: Map<string, number>;
  /** Source taking unclaimed exporters, or -1. */
  defaultSource: number;
}

/**
 * Groups flow sources by listen address (port 0 is never shared) and checks
 * the exporter claims; throws ListenerConfigError for a setup that cannot
 * be served. Pure: binds nothing.
 */
export function planSockets(configs: Readonly<Record<string, FlowSourceConfig>>): { names: string[]; sockets: SocketPlan[] } {
  const names = Object.keys(configs);
  if (names.length > 0xffff) throw new ListenerConfigError('too many flow sources', '');
  const byListen = new Map<string, number[]>();
  names.forEach((name, idx) => {
    const cfg = configs[name]!;
    const { host, port } = parseListen(cfg.listen);
    // Port 0 asks for an ephemeral port of its own: never shared.
    const key = port === 0 ? `${name}\u0000${cfg.listen}` : `${host.toLowerCase()}:${port}`;
    const list = byListen.get(key) ?? [];
    list.push(idx);
    byListen.set(key, list);
  });
  const sockets: SocketPlan[] = [];
  for (const idx of byListen.values()) {
    const first = configs[names[idx[0]!]!]!;
    const plan: SocketPlan = {
      listen: first.listen,
      sourceIdx: idx,
      requestedBuffer: Math.max(...idx.map((i) => configs[names[i]!]!.receiveBuffer)),
      claims: new Map(),
      defaultSource: -1,
    };
    for (const i of idx) {
      const name = names[i]!;
      const cfg = configs[name]!;
      const exporters = cfg.exporters;
      if (exporters.length === 0) {
        if (plan.defaultSource >= 0) {
          throw new ListenerConfigError(
            `flow sources '${names[plan.defaultSource]}' and '${name}' share ${cfg.listen} and neither claims exporters: give one of them an exporters list`,
            cfg.listen,
          );
        }
        plan.defaultSource = i;
      }
      for (const e of exporters) {
        const addr = normaliseAddress(e, cfg.listen);
        const owner = plan.claims.get(addr);
        if (owner !== undefined && owner !== i) {
          throw new ListenerConfigError(`exporter ${addr} is claimed by both '${names[owner]}' and '${name}'`, cfg.listen);
        }
        plan.claims.set(addr, i);
        // A dual-stack socket reports IPv4 senders as IPv4-mapped IPv6.
        if (!addr.includes(':')) plan.claims.set(`::ffff:${addr}`, i);
      }
    }
    sockets.push(plan);
  }
  return { names, sockets };
}
