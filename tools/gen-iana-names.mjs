#!/usr/bin/env node
/**
 * Regenerates storage/kpi/iana-names.json from netbase's /etc/services and
 * /etc/protocols (IANA's service names and protocol keywords). The data is
 * committed so netsvc never reads /etc at run time; run this only to refresh it:
 *   node tools/gen-iana-names.mjs [/etc/services] [/etc/protocols] > storage/kpi/iana-names.json
 */
import { readFileSync } from 'node:fs';

const servicesFile = process.argv[2] ?? '/etc/services';
const protocolsFile = process.argv[3] ?? '/etc/protocols';

const services = { tcp: {}, udp: {} };
for (const raw of readFileSync(servicesFile, 'utf8').split('\n')) {
  const line = raw.replace(/#.*/, '').trim();
  const m = /^(\S+)\s+(\d+)\/(tcp|udp)\b/.exec(line);
  if (!m) continue;
  const [, name, port, proto] = m;
  // The first line for a port is its primary name; later ones are historic duplicates.
  services[proto][port] ??= name;
}

const protocols = {};
for (const raw of readFileSync(protocolsFile, 'utf8').split('\n')) {
  const line = raw.replace(/#.*/, '').trim();
  const m = /^(\S+)\s+(\d+)\s+(\S+)/.exec(line);
  if (!m) continue;
  // The alias column is IANA's keyword in its own capitalisation (SCTP, IPv6-ICMP, …).
  protocols[m[2]] ??= m[3];
}

process.stdout.write(
  `${JSON.stringify({ source: 'netbase /etc/services and /etc/protocols (IANA registries)', services, protocols }, null, 1)}\n`,
);
