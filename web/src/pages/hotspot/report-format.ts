/** Readable forms of the hotspot reports' figures, next to the API's own (pure). */

const UNITS: Array<[number, string]> = [
  [86_400, 'd'],
  [3_600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** Seconds in the two largest units that are not zero: `1 d 2 h`, `2 h 5 min`, `42 s`. */
export function readableDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  let rest = Math.floor(seconds);
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(n > 0 ? `${n} ${unit}` : '');
    if (parts.length === 2) break;
  }
  return parts.filter(Boolean).join(' ') || '0 s';
}

/** The API's `totaltime` (`HH:MM:SS`, from a day `Nd HH:MM:SS`) in seconds; undefined for any other text. */
export function totaltimeSeconds(text: string): number | undefined {
  const m = /^(?:(\d+)d )?(\d+):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2]) * 3_600 + Number(m[3]) * 60 + Number(m[4]);
}

/**
 * The sum of decimal amounts (`'20.50'`) per currency, exact (in cents, as BigInt: amounts have up
 * to twelve digits before the point): `23.50 EUR · 3.00 USD`. Amounts of another form are left out.
 */
export function amountTotals(rows: ReadonlyArray<{ amount: string; currency: string }>): string {
  const cents = new Map<string, bigint>();
  for (const { amount, currency } of rows) {
    const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(amount);
    if (!m) continue;
    const value = BigInt(m[1]!) * 100n + BigInt((m[2] ?? '0').padEnd(2, '0'));
    cents.set(currency, (cents.get(currency) ?? 0n) + value);
  }
  return [...cents]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, c]) => `${c / 100n}.${String(c % 100n).padStart(2, '0')} ${currency}`)
    .join(' · ');
}
