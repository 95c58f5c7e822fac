/** IP addresses as text: 4 or 16 bytes to dotted quad or RFC 5952 IPv6, and back. */

/** Formats 4 or 16 address bytes as text (RFC 5952 for IPv6). */
export function formatIp(a: Uint8Array): string {
  if (a.length === 4) return `${a[0]}.${a[1]}.${a[2]}.${a[3]}`;
  const words: number[] = [];
  for (let k = 0; k < 16; k += 2) words.push((a[k]! << 8) | a[k + 1]!);
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0 && words[5] === 0xffff) {
    return `::ffff:${a[12]}.${a[13]}.${a[14]}.${a[15]}`;
  }
  let bestStart = -1;
  let bestLen = 1;
  for (let s = 0; s < 8;) {
    if (words[s] !== 0) {
      s++;
      continue;
    }
    let e = s;
    while (e < 8 && words[e] === 0) e++;
    if (e - s > bestLen) {
      bestStart = s;
      bestLen = e - s;
    }
    s = e;
  }
  const hex = words.map((w) => w.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses an IPv4 or IPv6 text address into 4 or 16 bytes. */
export function parseIp(text: string): Uint8Array {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const out = new Uint8Array(4);
    for (let i = 0; i < 4; i++) {
      const n = Number(v4[i + 1]);
      if (n > 255) throw new RangeError(`not an IP address: ${text}`);
      out[i] = n;
    }
    return out;
  }
  let s = text;
  const out = new Uint8Array(16);
  // A trailing dotted quad (::ffff:1.2.3.4) fills the last four bytes.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let tailBytes: Uint8Array | undefined;
  if (tail) {
    tailBytes = parseIp(tail[2]!);
    s = `${tail[1]}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2 || !/^[0-9a-fA-F:]+$/.test(s)) throw new RangeError(`not an IP address: ${text}`);
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = 8 - head.length - rest.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) throw new RangeError(`not an IP address: ${text}`);
  const words = [...head, ...new Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...rest];
  words.forEach((w, i) => {
    if (!/^[0-9a-fA-F]{1,4}$/.test(w)) throw new RangeError(`not an IP address: ${text}`);
    const n = parseInt(w, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  if (tailBytes) out.set(tailBytes, 12);
  return out;
}
