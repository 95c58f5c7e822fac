/**
 * What `netsvc profile` and the hotspot API both tell an operator about a
 * profile: rows that break the operator rule (docs/hotspot.md section 2), and
 * attributes FreeRADIUS can read only once netsvc's dictionary and counters
 * are installed (section 3).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProfileDescription } from './radius-store.js';

/** Warnings about rows that stop a user's own value from winning, or stop later profiles from applying. */
export function profileWarnings(d: ProfileDescription): string[] {
  const out: string[] = [];
  const fallThrough = d.attributes.some(
    (a) => a.table === 'reply' && a.attribute.toLowerCase() === 'fall-through' && /^yes$/i.test(a.value),
  );
  if (!fallThrough) {
    out.push(
      "no 'Fall-Through = Yes' in radgroupreply: FreeRADIUS applies no profile after this one (netsvc adds it when it saves the profile or sets an attribute on it)",
    );
  }
  for (const a of d.attributes) {
    if (a.attribute.toLowerCase() === 'fall-through') continue;
    if (a.table === 'reply' && a.op === ':=') out.push(`reply ${a.attribute} uses ':=': it replaces a user's own value; use '='`);
    if (a.table === 'check' && a.op === ':=')
      out.push(`check ${a.attribute} uses ':=': it replaces a user's own value; use '+='`);
    if (a.table === 'check' && (a.op === '=' || a.op === '=='))
      out.push(`check ${a.attribute} uses '${a.op}': that is a comparison, not a setting`);
  }
  return out;
}

let dictionary: ReadonlySet<string> | undefined;

/** Attributes radius/dictionary.netsvc defines, lower-cased (FreeRADIUS knows them only once it is installed). */
function netsvcDictionaryAttributes(): ReadonlySet<string> {
  if (dictionary) return dictionary;
  dictionary = new Set();
  // From storage/radius/ (sources) or dist/storage/radius/ (compiled): the package root holds radius/.
  for (const up of ['../../radius/dictionary.netsvc', '../../../radius/dictionary.netsvc']) {
    const path = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(path)) {
      const names = [...readFileSync(path, 'utf8').matchAll(/^ATTRIBUTE\s+(\S+)/gm)].map((m) => m[1]!.toLowerCase());
      dictionary = new Set(names);
      break;
    }
  }
  return dictionary;
}

/**
 * The note for an attribute that only netsvc's dictionary defines, else undefined: FreeRADIUS cannot
 * parse a row naming an attribute it does not know, so such a row breaks the users who carry it.
 */
export function netsvcDictionaryNote(attribute: string): string | undefined {
  if (!netsvcDictionaryAttributes().has(attribute.toLowerCase())) return undefined;
  return (
    `${attribute} is defined by netsvc's dictionary (radius/dictionary.netsvc), not by FreeRADIUS's own: the FreeRADIUS ` +
    'that reads this database needs it and the netsvc_sqlcounter module (netsvc radius install on that host, once; ' +
    'docs/hotspot.md, section 3), or it cannot read this row'
  );
}
