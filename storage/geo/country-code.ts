/**
 * Countries as u16 (first letter << 8 | second letter, ASCII upper case; 0 = unknown), the
 * form GeoLookup answers in, so a query groups by a number and names the country only in the
 * rows it returns.
 */

/** `'DE'` for 0x4445; `''` for 0 (unknown). Throws RangeError for a number that is no two letters A–Z. */
export function countryCode(n: number): string {
  if (n === 0) return '';
  const a = n >>> 8;
  const b = n & 0xff;
  if (!Number.isInteger(n) || n < 0 || n > 0xffff || !isUpper(a) || !isUpper(b)) {
    throw new RangeError(`${n} is not a country number (two letters A-Z)`);
  }
  return String.fromCharCode(a, b);
}

/** 0x4445 for `'de'` or `'DE'`. Throws RangeError unless the text is two letters A–Z. */
export function countryNumber(code: string): number {
  if (!/^[A-Za-z]{2}$/.test(code)) throw new RangeError(`'${code}' is not a country code (two letters A-Z)`);
  const up = code.toUpperCase();
  return (up.charCodeAt(0) << 8) | up.charCodeAt(1);
}

/** The country number of two ASCII bytes (either case), or 0 when they are not two letters A–Z. */
export function countryFromBytes(a: number, b: number): number {
  const ua = a & 0xdf;
  const ub = b & 0xdf;
  return isUpper(ua) && isUpper(ub) ? (ua << 8) | ub : 0;
}

function isUpper(c: number): boolean {
  return c >= 0x41 && c <= 0x5a;
}
