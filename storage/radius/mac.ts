/**
 * MAC addresses in the notations NASes and operators use. FreeRADIUS stores
 * them as sent (`AA-BB-…`, `aa:bb:…`, `aabb.ccdd.eeff`), so filters compare
 * normalised values and match every common notation of the one asked for.
 */

const HEX12 = /^[0-9a-f]{12}$/;

/** `XX-XX-XX-XX-XX-XX` for any common notation of a 48-bit MAC, else undefined. */
export function normaliseMac(input: string): string | undefined {
  const s = input.trim().toLowerCase();
  let hex: string;
  if (/^[0-9a-f]{2}([-:])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/.test(s)) hex = s.replace(/[-:]/g, '');
  else if (/^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$/.test(s)) hex = s.replace(/\./g, '');
  else if (/^[0-9a-f]{6}-[0-9a-f]{6}$/.test(s)) hex = s.replace('-', '');
  else hex = s;
  if (!HEX12.test(hex)) return undefined;
  return hex.toUpperCase().match(/../g)!.join('-');
}

/**
 * The spellings of a normalised MAC a NAS may have stored: `-`, `:`, none,
 * Cisco dots and the 6-6 form, each upper and lower case. Lets a filter use
 * `IN (…)` on an index instead of a function on every row.
 */
export function macSpellings(normalised: string): string[] {
  const hex = normalised.replace(/-/g, '');
  const pairs = hex.match(/../g)!;
  const forms = [
    pairs.join('-'),
    pairs.join(':'),
    hex,
    `${hex.slice(0, 4)}.${hex.slice(4, 8)}.${hex.slice(8)}`,
    `${hex.slice(0, 6)}-${hex.slice(6)}`,
  ];
  const out = new Set<string>();
  for (const f of forms) {
    out.add(f.toUpperCase());
    out.add(f.toLowerCase());
  }
  return [...out];
}

/**
 * The MAC at the start of a station id, normalised: `00-11-22-33-44-55:SSID`
 * (Called-Station-Id carries the SSID after the MAC) gives `00-11-22-33-44-55`.
 * Anything else comes back as it is.
 */
export function displayMac(stationId: string | null | undefined): string {
  if (!stationId) return '';
  const whole = normaliseMac(stationId);
  if (whole) return whole;
  const m = /^([0-9A-Fa-f]{2}([-:])[0-9A-Fa-f]{2}(\2[0-9A-Fa-f]{2}){4})[:]/.exec(stationId);
  if (m) return normaliseMac(m[1]!) ?? stationId;
  return stationId;
}
