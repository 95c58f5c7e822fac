/**
 * SysLogTag as rsyslog stores it: `prog:`, `prog[pid]:` (RFC 3164 keeps the
 * colon) or `prog`, `prog[pid]` (RFC 5424 has none). Pure helpers.
 */

const PID_SUFFIX = /\[([^\][]*)\]$/;

/** The program part of a tag: `hostapd[812]:` → `hostapd`, `hostapd:` → `hostapd`. */
export function programOf(tag: string): string {
  let t = tag.trim();
  if (t.endsWith(':')) t = t.slice(0, -1);
  return t.replace(PID_SUFFIX, '');
}

/** The pid inside a tag (`sshd[812]:` → `812`), else "". */
export function pidOf(tag: string): string {
  let t = tag.trim();
  if (t.endsWith(':')) t = t.slice(0, -1);
  return PID_SUFFIX.exec(t)?.[1] ?? '';
}
