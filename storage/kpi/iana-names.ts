/**
 * IANA service names (by port) and protocol keywords (by number), from the
 * committed `iana-names.json` (generated from netbase by
 * `tools/gen-iana-names.mjs`), so nothing reads /etc at run time.
 */
import names from './iana-names.json' with { type: 'json' };

const tcp = names.services.tcp as Record<string, string>;
const udp = names.services.udp as Record<string, string>;
const keywords = names.protocols as Record<string, string>;

/** The names api.md uses for the protocols it lists. */
const API_NAMES: Readonly<Record<number, string>> = {
  1: 'ICMP',
  6: 'TCP',
  17: 'UDP',
  47: 'GRE',
  50: 'ESP',
  58: 'ICMPv6',
  112: 'VRRP',
};

/** IANA service name of a port (TCP's, else UDP's), or "" when it has none. */
export function serviceName(port: number): string {
  const key = String(port);
  return tcp[key] ?? udp[key] ?? '';
}

/** Name of an IP protocol: api.md's seven, else the IANA keyword, else the number. */
export function protocolName(proto: number): string {
  return API_NAMES[proto] ?? keywords[String(proto)] ?? String(proto);
}
