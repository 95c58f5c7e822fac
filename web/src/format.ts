/** Numbers and sizes as operators read them (pure; also used by tests). */

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** 1024-based, like the API's traffic figures: `1.50 MB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  let i = 0;
  let v = Math.abs(n);
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${n < 0 ? '-' : ''}${i === 0 ? v.toFixed(0) : v.toFixed(2)} ${UNITS[i]}`;
}

/** Thousands separated: `12 345 678`. */
export function formatCount(n: number | string): string {
  const s = typeof n === 'string' ? n : Math.round(n).toString();
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
}

/** Bits per second from bytes over seconds: `12.3 Mbit/s` (1000-based, as link speeds are). */
export function formatRate(bytes: number, seconds: number): string {
  if (seconds <= 0) return '—';
  let v = (bytes * 8) / seconds;
  const units = ['bit/s', 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s'];
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(v < 10 && i > 0 ? 2 : 1)} ${units[i]}`;
}

/** A JSON number, or a decimal string above 2^53 (decisions.md), as a number for charts. */
export function toNumber(v: number | string | null | undefined): number {
  return typeof v === 'number' ? v : v ? Number(v) : 0;
}
