/**
 * How the netflow area writes values (decisions.md, Netflow): query times,
 * volumes, TCP flags as nfdump prints them, ICMP ports, durations. Pure
 * functions, shared by the routes and their tests.
 */
import { DateTime } from 'luxon';
import { protocolName } from '../../storage/kpi/iana-names.js';

/** The forms a netflow query time may take, for messages. */
export const QUERY_TIME_FORMS = 'YYYY/MM/DD HH:mm, YYYY-MM-DD HH:mm or ISO 8601 (e.g. 2026-03-25T09:00Z)';

// The 3.1.0 form, and the same with dashes, as logviewer and hotspot take it: read in the zone.
const LOCAL_TIME = /^(\d{4})[/-](\d{2})[/-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;
// ISO 8601 with an offset: converted to the zone.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/;

/**
 * Milliseconds of the minute a query time names, in `zone`: `YYYY/MM/DD HH:mm` (api.md),
 * `YYYY-MM-DD HH:mm` and ISO 8601 (as logviewer and hotspot take times); seconds are
 * dropped, since windows are whole minutes. Undefined when it is none of these.
 */
export function parseQueryMinute(text: string, zone: string): number | undefined {
  const local = LOCAL_TIME.exec(text);
  let t: DateTime | undefined;
  if (local) {
    t = DateTime.fromObject(
      { year: +local[1]!, month: +local[2]!, day: +local[3]!, hour: +local[4]!, minute: +local[5]!, second: +(local[6] ?? 0) },
      { zone },
    );
  } else if (ISO_TIME.test(text)) t = DateTime.fromISO(text).setZone(zone);
  if (!t?.isValid) return undefined;
  return t.startOf('minute').toMillis();
}

// Zone offsets (minutes) per zone and hour: luxon is asked once per hour, not once per flow.
const offsets = new Map<string, Map<number, number>>();

function zoneOffsetMin(ms: number, zone: string): number {
  let byHour = offsets.get(zone);
  if (!byHour) offsets.set(zone, (byHour = new Map()));
  // Offsets change on the hour or half hour; a 15-minute key is exact for every zone in use.
  const slot = Math.floor(ms / 900_000);
  let off = byHour.get(slot);
  if (off === undefined) {
    off = DateTime.fromMillis(ms, { zone }).offset;
    if (byHour.size >= 50_000) byHour.clear();
    byHour.set(slot, off);
  }
  return off;
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

// Instants a Date holds are within ±8.64e15 ms; a day is kept for the zone offset.
const LAST_DATE_MS = 8.64e15 - 86_400_000;

/** The wall-clock fields of an instant in `zone`, via a Date shifted by the zone offset. */
function wall(ms: number, zone: string): Date {
  // Never an Invalid Date (whose fields print as NaN): an instant no Date holds is shown at the edge of the range.
  const t = Number.isNaN(ms) ? 0 : Math.min(Math.max(ms, -LAST_DATE_MS), LAST_DATE_MS);
  return new Date(t + zoneOffsetMin(t, zone) * 60_000);
}

/** True when a Date can hold instant `ms` (with room for any zone offset). */
export function isRepresentableTime(ms: number): boolean {
  return ms >= -LAST_DATE_MS && ms <= LAST_DATE_MS;
}

/** `YYYY/MM/DD HH:mm` of an instant in `zone`. */
export function formatQueryMinute(ms: number, zone: string): string {
  const d = wall(ms, zone);
  return `${d.getUTCFullYear()}/${two(d.getUTCMonth() + 1)}/${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}

/** `YYYY-MM-DD HH:MM:SS` of an instant in `zone` (a flow's `ts`). */
export function formatFlowTime(ms: number, zone: string): string {
  const d = wall(ms, zone);
  return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** ISO 8601 UTC to the second, ending in `Z` (timeseries points). */
export function formatIsoUtc(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Start of the hour that holds `ms`, in `zone` (where the zone's hours begin, also for +05:30). */
export function hourStart(ms: number, zone: string): number {
  return DateTime.fromMillis(ms, { zone }).startOf('hour').toMillis();
}

// E, Z and Y after decisions.md's B … P: a 64-bit counter reaches 16 E, and a count scaled by
// sampling more (a P with sixteen digits before it is no reading).
const UNITS = ['B', 'K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'] as const;

/** 1024-based volume, one decimal without a trailing `.0`: `169 G`, `2.5 G`, `17 B`, `16 E`. */
export function formatTraffic(bytes: number): string {
  let value = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
  let unit = 0;
  // Move up while the value would print as 1024 or more after rounding to one decimal.
  while (unit < UNITS.length - 1 && Math.round(value * 10) / 10 >= 1024) {
    value /= 1024;
    unit++;
  }
  const text = (Math.round(value * 10) / 10).toFixed(1).replace(/\.0$/, '');
  return `${text} ${UNITS[unit]}`;
}

/** Mbit/s over the window, two decimals. */
export function throughputMbps(bytes: number, windowMs: number): number {
  if (windowMs <= 0) return 0;
  return Math.round(((bytes * 8) / (windowMs / 1000) / 1e6) * 100) / 100;
}

/** Share of a whole in percent with two decimals (0 when the whole is 0). */
export function percent(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0;
}

const FLAG_LETTERS = 'UAPRSF';

/** nfdump's six-position TCP flags `UAPRSF` (`.` for unset); `......` for other protocols. */
export function formatTcpFlags(flags: number, proto: number): string {
  if (proto !== 6) return '......';
  let out = '';
  // Bit 5 (URG) down to bit 0 (FIN), in the order nfdump prints them.
  for (let bit = 5; bit >= 0; bit--) out += flags & (1 << bit) ? FLAG_LETTERS[5 - bit] : '.';
  return out;
}

/** TCP flag bits. */
export const TCP_RST = 0x04;
export const TCP_SYN = 0x02;

/** `Deny` when RST is set and SYN is not (api.md 2.2). */
export function verdict(flags: number): 'Allow' | 'Deny' {
  return flags & TCP_RST && !(flags & TCP_SYN) ? 'Deny' : 'Allow';
}

/** True for ICMP and ICMPv6, whose destination port carries type × 256 + code. */
export function isIcmp(proto: number): boolean {
  return proto === 1 || proto === 58;
}

/** `src_port` and `dst_port` as nfdump prints them: ICMP `0` and `type.code`. */
export function formatPorts(proto: number, srcPort: number, dstPort: number): { src_port: string; dst_port: string } {
  if (isIcmp(proto)) return { src_port: '0', dst_port: `${dstPort >> 8}.${dstPort & 0xff}` };
  return { src_port: String(srcPort), dst_port: String(dstPort) };
}

/** Seconds with three decimals; a negative span (clock skew at the exporter), or one that is not a number, shows as 0. */
export function formatDuration(startMs: number, endMs: number): string {
  const span = endMs - startMs;
  // Decoders clamp implausible times, so a span is below a few years; the bound keeps toFixed out of exponent form.
  return span > 0 && span < 1e20 ? (span / 1000).toFixed(3) : '0.000';
}

/**
 * A count (bytes, packets, flows) as JSON: a number while JSON readers take it exactly
 * (up to 2^53 − 1), above that its exact decimal digits as a string. Counts are integers;
 * a float total above 2^53 (sums are float64, see docs/netflow.md) is one too.
 */
export function countJson(n: number | bigint): number | string {
  if (typeof n === 'bigint') return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
  if (Number.isSafeInteger(n)) return n;
  // Not a count (NaN, ±Infinity, a fraction): never in a sum of integers, but never NaN in an answer either.
  if (!Number.isFinite(n) || n < 0) return 0;
  return n <= Number.MAX_SAFE_INTEGER ? Math.round(n) : BigInt(n).toString();
}

/** The protocol name the API shows. */
export { protocolName };
