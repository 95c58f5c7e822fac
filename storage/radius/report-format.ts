/** How the hotspot reports print numbers, durations and secrets (decisions.md, Hotspot). */

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** Bytes, 1024-based, two decimals, unit `B KB MB GB TB`: 1536 → `1.50 KB`. */
export function formatTraffic(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)} ${UNITS[unit]}`;
}

/** Seconds as `HH:MM:SS`, with `Nd ` in front from one day on: 90061 → `1d 01:01:01`. */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const days = Math.floor(s / 86400);
  const rest = s % 86400;
  const hh = String(Math.floor(rest / 3600)).padStart(2, '0');
  const mm = String(Math.floor((rest % 3600) / 60)).padStart(2, '0');
  const ss = String(rest % 60).padStart(2, '0');
  return `${days > 0 ? `${days}d ` : ''}${hh}:${mm}:${ss}`;
}

/** First character then seven asterisks whatever the length, so the length leaks nothing. */
export function maskPassword(password: string | null | undefined): string | null {
  if (!password) return null;
  return `${Array.from(password)[0]}*******`;
}

/** What login attempts show instead of radpostauth.pass, which FreeRADIUS stores in clear. */
export const MASKED_PASS = '********';
