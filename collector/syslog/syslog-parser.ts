/**
 * Syslog message decoding for the embedded receiver: RFC 5424, RFC 3164 (the
 * BSD format most devices send) and TCP framing (RFC 6587 octet counting and
 * LF-delimited). Pure: no sockets, no clock; the caller passes the receive
 * time and the sender's address.
 *
 * Columns are filled the way rsyslog's stock SQL templates fill them, so a
 * table written by the receiver reads like one written by rsyslog:
 *  - SysLogTag: RFC 3164 keeps the colon (`sshd[812]:`); RFC 5424 is
 *    APP-NAME plus `[PROCID]` when there is one, no colon (`sshd[812]`).
 *  - Priority: the severity 0–7; Facility: the facility number.
 *  - DeviceReportedTime: the sender's wall clock as written, offset and
 *    fraction dropped; the receive time when the message has none.
 *  - Message: RFC 3164 keeps the space after the tag; RFC 5424 drops MSGID
 *    and STRUCTURED-DATA. Control characters become `#ooo` (octal), as
 *    rsyslog's EscapeControlCharactersOnReceive does.
 * Where rsyslog would guess, the receiver follows the RFCs instead: a
 * message without a timestamp has no HOSTNAME (RFC 3164 4.3.2), and a
 * missing host (`-` or none) is the sender's address, not `-`.
 */
import type { SyslogEvent } from '../../common/syslog-event.js';

/** Width of FromHost and SysLogTag in rsyslog's schema (varchar(60)); longer values make its INSERT fail. */
export const COLUMN_CHARS = 60;

/** What was wrong with a message; it is stored anyway. */
export type SyslogProblem =
  | 'no-pri'
  | 'bad-pri'
  | 'bad-timestamp'
  | 'bad-structured-data'
  | 'no-header'
  | 'host-truncated'
  | 'tag-truncated'
  | 'message-truncated';

/** A decoded message and what had to be repaired to store it. */
export interface ParsedSyslog extends SyslogEvent {
  format: 'rfc5424' | 'rfc3164';
  problems: SyslogProblem[];
}

/** Where and when a message arrived. */
export interface ReceiveContext {
  /** `YYYY-MM-DD HH:MM:SS`, the receiver's wall clock in the configured zone. */
  receivedAt: string;
  /** Sender's IP address, used when the message names no host. */
  sender: string;
  /** Set when the framing already cut the message. */
  truncated?: boolean;
}

const DEFAULT_PRI = 13; // user.notice, what rsyslog and RFC 3164 4.3.3 assume without a PRI
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const RFC3164_TIME = /^([A-Z][a-z]{2}) ([ 0-9]\d) (\d\d):(\d\d):(\d\d)(?:\.\d{1,6})? /;
const RFC3339_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)/;
const HOSTNAME = /^[A-Za-z0-9._:%-]+$/;

/** Cuts to `max` characters (code points, as varchar counts them). */
export function truncateChars(value: string, max: number): string {
  if (value.length <= max) return value;
  const cps = Array.from(value);
  return cps.length <= max ? value : cps.slice(0, max).join('');
}

function escapeControl(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, (c) => `#${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function validClock(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

/** RFC 3164 dates carry no year: take the receiver's, or last year's when that would put the date over a month ahead. */
function inferYear(month: number, day: number, receivedAt: string): number {
  const year = Number(receivedAt.slice(0, 4));
  const rMonth = Number(receivedAt.slice(5, 7));
  const rDay = Number(receivedAt.slice(8, 10));
  const ahead = (month - rMonth) * 31 + (day - rDay);
  return ahead > 31 ? year - 1 : year;
}

interface Cursor {
  text: string;
  pos: number;
}

function parsePri(c: Cursor, problems: SyslogProblem[]): number {
  const m = /^<(\d{1,3})>/.exec(c.text);
  if (!m) {
    problems.push(c.text.startsWith('<') ? 'bad-pri' : 'no-pri');
    // Skip a broken `<…>` so it does not end up as the hostname.
    const broken = /^<[^>\s]{0,5}>/.exec(c.text);
    if (broken) c.pos = broken[0].length;
    return DEFAULT_PRI;
  }
  c.pos = m[0].length;
  const pri = Number(m[1]);
  if (pri > 191 || (m[1]!.length > 1 && m[1]!.startsWith('0'))) {
    problems.push('bad-pri');
    return DEFAULT_PRI;
  }
  return pri;
}

/** Next space-delimited field of an RFC 5424 header, or undefined at the end. */
function field(c: Cursor): string | undefined {
  if (c.pos >= c.text.length) return undefined;
  const end = c.text.indexOf(' ', c.pos);
  const value = end < 0 ? c.text.slice(c.pos) : c.text.slice(c.pos, end);
  c.pos = end < 0 ? c.text.length : end + 1;
  return value;
}

/** Skips STRUCTURED-DATA (`-` or `[id k="v"]…`, with `\"`, `\\`, `\]` escapes); false when it is broken. */
function skipStructuredData(c: Cursor): boolean {
  const t = c.text;
  if (t[c.pos] === '-') {
    c.pos += 1;
    return true;
  }
  if (t[c.pos] !== '[') return false;
  while (t[c.pos] === '[') {
    let i = c.pos + 1;
    let quoted = false;
    for (; i < t.length; i++) {
      const ch = t[i];
      if (quoted && ch === '\\') {
        i += 1;
        continue;
      }
      if (ch === '"') quoted = !quoted;
      else if (ch === ']' && !quoted) break;
    }
    if (i >= t.length) {
      c.pos = t.length;
      return false;
    }
    c.pos = i + 1;
  }
  return true;
}

function parse5424(
  c: Cursor,
  ctx: ReceiveContext,
  problems: SyslogProblem[],
): { time: string; host: string; tag: string; message: string } {
  const stamp = field(c) ?? '-';
  let time = ctx.receivedAt;
  if (stamp !== '-') {
    const m = RFC3339_TIME.exec(stamp);
    const [y, mo, d, h, mi, s] = m ? m.slice(1, 7).map(Number) : [];
    if (m && m[0].length === stamp.length && validClock(y!, mo!, d!, h!, mi!, s!)) {
      time = `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${pad2(Math.min(s!, 59))}`;
    } else {
      problems.push('bad-timestamp');
    }
  }
  const host = field(c) ?? '-';
  const app = field(c) ?? '-';
  const procid = field(c) ?? '-';
  field(c); // MSGID: rsyslog's templates do not store it
  let message = '';
  if (c.pos < c.text.length) {
    if (!skipStructuredData(c)) problems.push('bad-structured-data');
    if (c.text[c.pos] === ' ') c.pos += 1;
    message = c.text.slice(c.pos);
  }
  if (message.startsWith('\uFEFF')) message = message.slice(1);
  const tag = (app === '-' ? '' : app) + (procid === '-' ? '' : `[${procid}]`);
  return { time, host: host === '-' ? ctx.sender : host, tag, message };
}

function parse3164(
  c: Cursor,
  ctx: ReceiveContext,
  problems: SyslogProblem[],
): { time: string; host: string; tag: string; message: string } {
  const rest = c.text.slice(c.pos);
  let time: string | undefined;
  let after = 0;
  const bsd = RFC3164_TIME.exec(rest);
  if (bsd) {
    const month = MONTHS.indexOf(bsd[1]!) + 1;
    const [d, h, mi, s] = bsd.slice(2, 6).map((v) => Number(v.trim()));
    if (month > 0) {
      const y = inferYear(month, d!, ctx.receivedAt);
      if (validClock(y, month, d!, h!, mi!, s!)) {
        time = `${y}-${pad2(month)}-${pad2(d!)} ${pad2(h!)}:${pad2(mi!)}:${pad2(Math.min(s!, 59))}`;
        after = bsd[0].length;
      }
    }
  } else {
    // Many devices put an RFC 3339 stamp where RFC 3164 has its own.
    const iso = RFC3339_TIME.exec(rest);
    if (iso && rest[iso[0].length] === ' ') {
      const [y, mo, d, h, mi, s] = iso.slice(1, 7).map(Number);
      if (validClock(y!, mo!, d!, h!, mi!, s!)) {
        time = `${iso[1]}-${iso[2]}-${iso[3]} ${iso[4]}:${iso[5]}:${pad2(Math.min(s!, 59))}`;
        after = iso[0].length + 1;
      }
    }
  }

  let host = ctx.sender;
  let body = rest;
  if (time !== undefined) {
    body = rest.slice(after);
    const sp = body.indexOf(' ');
    const word = sp < 0 ? body : body.slice(0, sp);
    // A word ending in ':' or holding '[' is the tag of a message sent without HOSTNAME.
    if (sp > 0 && HOSTNAME.test(word) && !word.endsWith(':')) {
      host = word;
      body = body.slice(sp + 1);
    }
  } else {
    problems.push('no-header');
  }

  // TAG: up to and including the first ':' of the first word, else the first word when a header was present.
  let tag = '';
  let message = body;
  const m = /^([^\s:]{1,512}):/.exec(body);
  if (m) {
    tag = `${m[1]}:`;
    message = body.slice(tag.length);
  } else if (time !== undefined) {
    const sp = body.indexOf(' ');
    tag = sp < 0 ? body : body.slice(0, sp);
    message = sp < 0 ? '' : body.slice(sp);
  }
  return { time: time ?? ctx.receivedAt, host, tag, message };
}

/** Decodes one syslog message; never throws: what cannot be parsed is stored as the message. */
export function parseSyslog(raw: Buffer | string, ctx: ReceiveContext): ParsedSyslog {
  let text = typeof raw === 'string' ? raw : raw.toString('utf8');
  // Trailers that framing or senders leave: rsyslog drops them too.
  text = text.replace(/[\r\n\0]+$/, '');
  const problems: SyslogProblem[] = [];
  const c: Cursor = { text, pos: 0 };
  const pri = parsePri(c, problems);
  const facility = pri >> 3;
  const priority = pri & 7;

  let format: ParsedSyslog['format'] = 'rfc3164';
  let parsed: { time: string; host: string; tag: string; message: string };
  if (text.startsWith('1 ', c.pos) && problems.length === 0) {
    format = 'rfc5424';
    c.pos += 2;
    parsed = parse5424(c, ctx, problems);
  } else {
    parsed = parse3164(c, ctx, problems);
  }

  const hostChars = escapeControl(parsed.host);
  const tagChars = escapeControl(parsed.tag);
  const fromHost = truncateChars(hostChars, COLUMN_CHARS);
  const sysLogTag = truncateChars(tagChars, COLUMN_CHARS);
  if (fromHost !== hostChars) problems.push('host-truncated');
  if (sysLogTag !== tagChars) problems.push('tag-truncated');
  if (ctx.truncated) problems.push('message-truncated');

  return {
    format,
    deviceReportedTime: parsed.time,
    receivedAt: ctx.receivedAt,
    fromHost,
    sysLogTag,
    priority,
    facility,
    message: escapeControl(parsed.message),
    problems,
  };
}

/** A frame cut out of a TCP stream, and whether it was longer than allowed. */
export interface Frame {
  data: Buffer;
  truncated: boolean;
}

/**
 * Splits a TCP stream into messages (RFC 6587): a frame that starts with a
 * digit is octet-counted (`LEN SP MSG`), any other ends at LF. Frames over
 * `maxBytes` are cut and the excess skipped. Pure and incremental.
 */
export class SyslogFrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes of an over-long octet-counted frame still to skip. */
  private skip = 0;
  /** An LF frame was over-long: drop input up to the next LF. */
  private discardLine = false;
  /**
   * Storage `buf` is a view of, with room after it, so a message trickled in
   * one byte per segment costs O(n) to gather, not O(n²) (a new copy of the
   * whole partial message per segment); at most about twice maxBytes.
   */
  private backing: Buffer | undefined;
  /** Leading bytes of `buf` already searched for LF in vain (not searched again). */
  private searched = 0;

  constructor(private readonly maxBytes: number) {}

  private append(chunk: Buffer): void {
    if (this.buf.length === 0) {
      this.buf = chunk;
      this.backing = undefined;
      this.searched = 0;
      return;
    }
    const need = this.buf.length + chunk.length;
    const b = this.backing;
    if (b && this.buf.buffer === b.buffer) {
      const end = this.buf.byteOffset - b.byteOffset + this.buf.length;
      if (end + chunk.length <= b.length) {
        chunk.copy(b, end);
        this.buf = b.subarray(end - this.buf.length, end + chunk.length);
        return;
      }
    }
    const grown = Buffer.allocUnsafe(Math.max(4096, need * 2));
    this.buf.copy(grown, 0);
    chunk.copy(grown, this.buf.length);
    this.backing = grown;
    this.buf = grown.subarray(0, need);
  }

  /** Drops the first `n` bytes of `buf`. */
  private advance(n: number): void {
    this.buf = this.buf.subarray(n);
    this.searched = 0;
  }

  private reset(): void {
    this.buf = Buffer.alloc(0);
    this.backing = undefined;
    this.searched = 0;
  }

  /** Feeds received bytes; returns the complete frames. */
  push(chunk: Buffer): Frame[] {
    this.append(chunk);
    const out: Frame[] = [];
    for (;;) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, this.buf.length);
        this.skip -= n;
        this.advance(n);
        if (this.skip > 0) return out;
      }
      if (this.discardLine) {
        const lf = this.buf.indexOf(0x0a);
        if (lf < 0) {
          this.reset();
          return out;
        }
        this.advance(lf + 1);
        this.discardLine = false;
      }
      if (this.buf.length === 0) return out;
      const first = this.buf[0]!;
      if (first >= 0x31 && first <= 0x39) {
        const sp = this.buf.subarray(0, 11).indexOf(0x20);
        const digits = sp > 0 ? this.buf.subarray(0, sp).toString('latin1') : '';
        if (sp > 0 && /^\d+$/.test(digits)) {
          const len = Number(digits);
          const start = sp + 1;
          if (len > this.maxBytes) {
            if (this.buf.length < start + this.maxBytes) return out;
            out.push({ data: Buffer.from(this.buf.subarray(start, start + this.maxBytes)), truncated: true });
            this.skip = len - this.maxBytes;
            this.advance(start + this.maxBytes);
            continue;
          }
          if (this.buf.length < start + len) return out;
          out.push({ data: Buffer.from(this.buf.subarray(start, start + len)), truncated: false });
          this.advance(start + len);
          continue;
        }
        // Not `LEN SP`: wait for more digits, else treat the frame as LF-delimited.
        if (sp < 0 && this.buf.length < 11 && /^\d+$/.test(this.buf.toString('latin1'))) return out;
      }
      const lf = this.buf.indexOf(0x0a, this.searched);
      if (lf < 0) {
        if (this.buf.length > this.maxBytes) {
          out.push({ data: Buffer.from(this.buf.subarray(0, this.maxBytes)), truncated: true });
          this.reset();
          this.discardLine = true;
        } else this.searched = this.buf.length;
        return out;
      }
      const line = this.buf.subarray(0, lf);
      this.advance(lf + 1);
      if (line.length === 0 || (line.length === 1 && line[0] === 0x0d)) continue;
      const cut = line.length > this.maxBytes;
      out.push({ data: Buffer.from(cut ? line.subarray(0, this.maxBytes) : line), truncated: cut });
    }
  }

  /** What is left when the connection closes: an unterminated last message. */
  end(): Frame[] {
    const rest = this.buf;
    this.reset();
    if (this.skip > 0 || this.discardLine || rest.length === 0) return [];
    // An octet-counted frame cut short by the peer: keep what came, without its length prefix.
    const counted = /^[1-9]\d{0,9} /.exec(rest.subarray(0, 11).toString('latin1'));
    const body = counted ? rest.subarray(counted[0].length) : rest;
    if (body.length === 0) return [];
    const cut = counted !== null || body.length > this.maxBytes;
    return [{ data: Buffer.from(body.subarray(0, this.maxBytes)), truncated: cut }];
  }
}
