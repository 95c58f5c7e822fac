/**
 * nfdump filter expressions, text to syntax tree (filter-ast.ts): a lexer and
 * a recursive-descent parser for the part of nfdump 1.7's language that a
 * netsvc capture file can answer, so an operator's filter pastes unchanged.
 *
 *   expr    := and ( ('or' | '||') and )*
 *   and     := unary ( ('and' | '&&') unary )*
 *   unary   := ('not' | '!') unary | '(' expr ')' | primitive
 *
 * Keywords are case-insensitive; `#` starts a comment to the end of the line.
 * What nfdump 1.7.1 accepts was checked by running `nfdump -Z` (syntax) and
 * `nfdump -X` (the values it compiles): numbers are decimal or 0x hex with an
 * optional k/m/g/t (×1000) suffix, saturating at 2^64 − 1; TCP flag letters
 * are upper case, each once; `net A MASK` takes any IPv4 mask. netsvc adds
 * `exporter A` (nfdump: `router ip A`) and `[src|dst] country CC` (nfdump:
 * `geo CC`, accepted too).
 *
 * Bounds: MAX_FILTER_LENGTH characters and MAX_FILTER_DEPTH nested
 * not/parentheses, so hostile input is a FilterSyntaxError, never a stack
 * overflow; and/or chains are loops, built flat.
 */
import type { CompareOp, Direction, FilterExpr, FilterPrimitive, IpNet, NumberTest } from './filter-ast.js';

export type { CompareOp, Direction, FilterExpr, FilterPrimitive, IpNet, NumberTest } from './filter-ast.js';

/** Longest expression accepted, in characters. */
export const MAX_FILTER_LENGTH = 4096;
/** Deepest nesting of `not` and parentheses accepted. */
export const MAX_FILTER_DEPTH = 64;

/** A filter expression that does not parse; says where, what would have been accepted there, and what was found. */
export class FilterSyntaxError extends Error {
  override readonly name = 'FilterSyntaxError';
  readonly code = 'filter-syntax';
  /** 1-based line of `position` (expressions may span lines, as in nfdump's filter files). */
  readonly line: number;
  /** 1-based column of `position` within its line. */
  readonly column: number;
  constructor(
    /** The whole expression. */
    readonly expression: string,
    /** 0-based offset of the offending token (the expression's length at its end). */
    readonly position: number,
    /** What would have been accepted there, e.g. `'port'`, `a port number (0-65535)`. */
    readonly expected: readonly string[],
    /** The token found there, or `end of input`. */
    readonly found: string,
    /** The message after the location, e.g. `expected a port number after 'port', found 'http'`. */
    detail: string,
  ) {
    const { line, column } = lineColumn(expression, position);
    super(`${line > 1 || expression.includes('\n') ? `line ${line}, ` : ''}column ${column}: ${detail}`);
    this.line = line;
    this.column = column;
  }
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: position - start + 1 };
}

/** The error's line of the expression and a caret under its column (the message is the error's), for a terminal. */
export function filterErrorCaret(err: FilterSyntaxError): string {
  const lines = err.expression.split('\n');
  // Tabs and other control characters would shift the caret: shown as one space each.
  const text = (lines[err.line - 1] ?? '').replace(/[\x00-\x1f\x7f]/g, ' ');
  return `${text}\n${' '.repeat(err.column - 1)}^`;
}

// ---------------------------------------------------------------- lexer

type TokenKind = 'word' | 'punct' | 'end';

interface Token {
  kind: TokenKind;
  /** Text as written (a word's keyword value is its lower case). */
  text: string;
  /** Lower-cased text, for keywords. */
  lower: string;
  at: number;
}

const WORD = /[A-Za-z0-9_.:/-]/;
const PUNCT2 = ['&&', '||', '==', '>=', '<='];
const PUNCT1 = '()[],!=<>';

function isWordChar(c: string): boolean {
  return WORD.test(c);
}

function lex(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (isWordChar(c)) {
      const start = i;
      while (i < n && isWordChar(text[i]!)) i++;
      const w = text.slice(start, i);
      out.push({ kind: 'word', text: w, lower: w.toLowerCase(), at: start });
      continue;
    }
    const two = text.slice(i, i + 2);
    if (PUNCT2.includes(two)) {
      out.push({ kind: 'punct', text: two, lower: two, at: i });
      i += 2;
      continue;
    }
    if (PUNCT1.includes(c)) {
      out.push({ kind: 'punct', text: c, lower: c, at: i });
      i++;
      continue;
    }
    const shown = c === '&' || c === '|' ? c : describeChar(text.codePointAt(i)!);
    throw new FilterSyntaxError(text, i, ['a keyword', 'an operator'], shown, `unexpected character ${shown}`);
  }
  out.push({ kind: 'end', text: '', lower: '', at: n });
  return out;
}

function describeChar(cp: number): string {
  if (cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp < 0xa0)) return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return `'${String.fromCodePoint(cp)}'`;
}

// ---------------------------------------------------------------- values

/** 2^64 − 1 as the nearest float64 (2^64): what a saturated counter compares as. */
const TWO64_MINUS_1 = Number(18446744073709551615n);

/** A number token's value (decimal or 0x hex, optional k/m/g/t suffix ×1000), saturated at 2^64 − 1; undefined when it is not one. */
export function parseFilterNumber(text: string): number | undefined {
  const m = /^(?:0x([0-9a-f]+)|([0-9]+))([kmgt])?$/i.exec(text);
  if (!m) return undefined;
  const digits = m[1] ?? m[2]!;
  let v: bigint;
  // Long digit strings saturate without building a huge BigInt (an expression may hold 4 096 digits).
  if (
    (m[1] !== undefined && digits.replace(/^0+/, '').length > 16) ||
    (m[2] !== undefined && digits.replace(/^0+/, '').length > 20)
  ) {
    return TWO64_MINUS_1;
  }
  v = BigInt(m[1] !== undefined ? `0x${digits}` : digits);
  const suffix = m[3]?.toLowerCase();
  if (suffix) v *= 1000n ** BigInt('kmgt'.indexOf(suffix) + 1);
  return v > 18446744073709551615n ? TWO64_MINUS_1 : Number(v);
}

/** Parses a dotted IPv4 address of exactly `parts` … 4 parts (fewer for `net 10.0/16`) into a u32; undefined when invalid. */
function parseV4(text: string, minParts = 4): number | undefined {
  const parts = text.split('.');
  if (parts.length < minParts || parts.length > 4) return undefined;
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const p = parts[k] ?? '0';
    if (!/^[0-9]{1,3}$/.test(p)) return undefined;
    const b = Number(p);
    if (b > 255) return undefined;
    v = v * 256 + b;
  }
  return v;
}

/** Parses an IPv6 address (with `::` and an optional dotted IPv4 tail) into four u32 words; undefined when invalid. */
function parseV6(text: string): [number, number, number, number] | undefined {
  if (!text.includes(':')) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    const items = s.split(':');
    for (let k = 0; k < items.length; k++) {
      const it = items[k]!;
      if (k === items.length - 1 && it.includes('.')) {
        const v4 = parseV4(it);
        if (v4 === undefined) return undefined;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(it)) return undefined;
        out.push(parseInt(it, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    if (head.length + tail.length > 7) return undefined;
    all = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    if (head.length !== 8) return undefined;
    all = head;
  }
  return [
    ((all[0]! << 16) | all[1]!) >>> 0,
    ((all[2]! << 16) | all[3]!) >>> 0,
    ((all[4]! << 16) | all[5]!) >>> 0,
    ((all[6]! << 16) | all[7]!) >>> 0,
  ];
}

const FULL: [number, number, number, number] = [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];

function mapped(v4: number): [number, number, number, number] {
  return [0, 0, 0xffff, v4 >>> 0];
}

/** The mask of a /bits prefix of the 128-bit space. */
function prefixMask(bits: number): [number, number, number, number] {
  const m: [number, number, number, number] = [0, 0, 0, 0];
  for (let k = 0; k < 4; k++) {
    const b = Math.max(0, Math.min(32, bits - 32 * k));
    m[k] = b === 0 ? 0 : b === 32 ? 0xffffffff : (0xffffffff << (32 - b)) >>> 0;
  }
  return m;
}

function masked(words: readonly number[], mask: readonly number[]): [number, number, number, number] {
  return [(words[0]! & mask[0]!) >>> 0, (words[1]! & mask[1]!) >>> 0, (words[2]! & mask[2]!) >>> 0, (words[3]! & mask[3]!) >>> 0];
}

/** A host address (IPv4 or IPv6) as an IpNet with a full mask; undefined when it is not one. */
function hostNet(text: string): IpNet | undefined {
  const v4 = parseV4(text);
  if (v4 !== undefined) return { words: mapped(v4), mask: FULL, text };
  const v6 = parseV6(text);
  return v6 ? { words: v6, mask: FULL, text } : undefined;
}

// ---------------------------------------------------------------- parser

const COMPARATORS: Readonly<Record<string, CompareOp>> = {
  '=': 'eq',
  '==': 'eq',
  eq: 'eq',
  '>': 'gt',
  gt: 'gt',
  '<': 'lt',
  lt: 'lt',
  '>=': 'ge',
  ge: 'ge',
  '<=': 'le',
  le: 'le',
};

/** Protocol names nfdump 1.7 accepts after `proto` (its table holds the IANA keywords; these are the ones seen in flows). */
export const PROTOCOL_NAMES: Readonly<Record<string, number>> = {
  icmp: 1,
  igmp: 2,
  ggp: 3,
  ipip: 4,
  st: 5,
  tcp: 6,
  cbt: 7,
  egp: 8,
  igp: 9,
  udp: 17,
  rdp: 27,
  rsvp: 46,
  idrp: 45,
  gre: 47,
  esp: 50,
  ah: 51,
  icmp6: 58,
  eigrp: 88,
  ospf: 89,
  'ax.25': 93,
  mtp: 92,
  encap: 98,
  pim: 103,
  vrrp: 112,
  l2tp: 115,
  sctp: 132,
};

const FLAG_BITS: Readonly<Record<string, number>> = { F: 0x01, S: 0x02, R: 0x04, P: 0x08, A: 0x10, U: 0x20, X: 0x3f };

const PRIMITIVE_STARTS = [
  "'src'",
  "'dst'",
  "'ip'",
  "'host'",
  "'net'",
  "'port'",
  "'proto'",
  "'flags'",
  "'bytes'",
  "'packets'",
  "'tos'",
  "'in'",
  "'out'",
  "'if'",
  "'as'",
  "'router'",
  "'exporter'",
  "'country'",
  "'inet'",
  "'inet6'",
  "'any'",
  "'not'",
  "'('",
];

interface Limits {
  min: number;
  max: number;
  what: string;
}

const U8: Limits = { min: 0, max: 255, what: 'a number (0-255)' };
const U16_PORT: Limits = { min: 0, max: 65535, what: 'a port number (0-65535)' };
const U32_AS: Limits = { min: 0, max: 4294967295, what: 'an AS number (0-4294967295)' };
const U32_IF: Limits = { min: 0, max: 4294967295, what: 'an interface number (0-4294967295)' };
const U64: Limits = { min: 0, max: TWO64_MINUS_1, what: 'a number (optionally with k, m, g or t)' };

class Parser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  private peek(k = 0): Token {
    return this.tokens[Math.min(this.i + k, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'end') this.i++;
    return t;
  }

  private isWord(t: Token, ...words: string[]): boolean {
    return t.kind === 'word' && words.includes(t.lower);
  }

  private isPunct(t: Token, ...p: string[]): boolean {
    return t.kind === 'punct' && p.includes(t.text);
  }

  private shown(t: Token): string {
    return t.kind === 'end' ? 'end of input' : `'${t.text.length > 40 ? `${t.text.slice(0, 40)}…` : t.text}'`;
  }

  /** Throws "expected X after 'prev', found 'tok'" at token t. */
  private fail(t: Token, expected: readonly string[], detail?: string): never {
    const prev = this.tokens[this.tokens.indexOf(t) - 1];
    const what = expected.length <= 3 ? expected.join(' or ') : `${expected.slice(0, 3).join(', ')} or another primitive`;
    const after = prev ? ` after '${prev.text}'` : '';
    const found = t.kind === 'end' ? 'end of input' : t.text;
    throw new FilterSyntaxError(this.text, t.at, expected, found, detail ?? `expected ${what}${after}, found ${this.shown(t)}`);
  }

  parse(): FilterExpr {
    const e = this.parseOr();
    const t = this.peek();
    if (t.kind !== 'end') {
      this.fail(t, ["'and'", "'or'", ...(this.depth === 0 ? ['end of input'] : ["')'"])]);
    }
    return e;
  }

  private parseOr(): FilterExpr {
    const operands = [this.parseAnd()];
    for (;;) {
      const t = this.peek();
      if (!(this.isWord(t, 'or') || this.isPunct(t, '||'))) break;
      this.next();
      operands.push(this.parseAnd());
    }
    return operands.length === 1
      ? operands[0]!
      : { kind: 'or', operands: operands.flatMap((o) => (o.kind === 'or' ? o.operands : [o])) };
  }

  private parseAnd(): FilterExpr {
    const operands = [this.parseUnary()];
    for (;;) {
      const t = this.peek();
      if (!(this.isWord(t, 'and') || this.isPunct(t, '&&'))) break;
      this.next();
      operands.push(this.parseUnary());
    }
    return operands.length === 1
      ? operands[0]!
      : { kind: 'and', operands: operands.flatMap((o) => (o.kind === 'and' ? o.operands : [o])) };
  }

  private enter(t: Token): void {
    if (++this.depth > MAX_FILTER_DEPTH) {
      throw new FilterSyntaxError(
        this.text,
        t.at,
        ['a primitive'],
        t.text,
        `expressions nest deeper than ${MAX_FILTER_DEPTH} levels of 'not' and parentheses`,
      );
    }
  }

  private parseUnary(): FilterExpr {
    const t = this.peek();
    if (this.isWord(t, 'not') || this.isPunct(t, '!')) {
      this.enter(t);
      this.next();
      const operand = this.parseUnary();
      this.depth--;
      return { kind: 'not', operand };
    }
    if (this.isPunct(t, '(')) {
      this.enter(t);
      this.next();
      const e = this.parseOr();
      const close = this.peek();
      if (!this.isPunct(close, ')')) this.fail(close, ["')'", "'and'", "'or'"]);
      this.next();
      this.depth--;
      return e;
    }
    return this.parsePrimitive();
  }

  /** `src`, `dst`, `src or dst`, `dst or src`, `src and dst`, `dst and src`, or nothing. */
  private parseDirection(): Direction | undefined {
    const t = this.peek();
    if (!this.isWord(t, 'src', 'dst')) return undefined;
    this.next();
    const joiner = this.peek();
    const other = this.peek(1);
    if (this.isWord(joiner, 'or', 'and') && this.isWord(other, t.lower === 'src' ? 'dst' : 'src')) {
      this.next();
      this.next();
      return joiner.lower === 'or' ? 'either' : 'both';
    }
    return t.lower === 'src' ? 'src' : 'dst';
  }

  private parsePrimitive(): FilterPrimitive {
    const first = this.peek();
    const at = first.at;
    const direction = this.parseDirection();
    const t = this.peek();
    if (t.kind !== 'word') this.fail(t, direction ? ["'ip'", "'net'", "'port'", "'as'", "'country'"] : PRIMITIVE_STARTS);
    const dir: Direction = direction ?? 'either';
    const directed = (): void => {
      if (direction) this.fail(t, ["'ip'", "'host'", "'net'", "'port'", "'as'", "'country'", "'geo'"]);
    };
    switch (t.lower) {
      case 'ip':
      case 'host': {
        this.next();
        if (this.isWord(this.peek(), 'in')) {
          this.next();
          return { kind: 'address', direction: dir, nets: this.parseNetList(), at };
        }
        return { kind: 'address', direction: dir, nets: [this.parseHost()], at };
      }
      case 'net':
        this.next();
        return { kind: 'address', direction: dir, nets: [this.parseNet()], at };
      case 'port': {
        this.next();
        return { kind: 'port', direction: dir, test: this.parseNumberTest(U16_PORT, true), at };
      }
      case 'as': {
        this.next();
        return { kind: 'as', direction: dir, test: this.parseNumberTest(U32_AS, true), at };
      }
      case 'country':
      case 'geo': {
        this.next();
        const c = this.next();
        if (c.kind !== 'word' || !/^[a-z]{2}$/i.test(c.text)) {
          this.fail(c, ['a two-letter country code (ISO 3166 alpha-2)']);
        }
        return { kind: 'country', direction: dir, code: c.text.toUpperCase(), at };
      }
      default:
        break;
    }
    directed();
    switch (t.lower) {
      case 'any':
        this.next();
        return { kind: 'any', at };
      case 'inet':
      case 'ipv4':
        this.next();
        return { kind: 'family', family: 4, at };
      case 'inet6':
      case 'ipv6':
        this.next();
        return { kind: 'family', family: 6, at };
      case 'proto': {
        this.next();
        const v = this.next();
        if (v.kind === 'word') {
          const named = PROTOCOL_NAMES[v.lower];
          if (named !== undefined) return { kind: 'proto', value: named, at };
          const n = parseFilterNumber(v.text);
          if (n !== undefined && n <= 255) return { kind: 'proto', value: n, at };
        }
        return this.fail(v, ['a protocol name (tcp, udp, icmp, icmp6, gre, esp, …)', 'a protocol number (0-255)']);
      }
      case 'flags': {
        this.next();
        const v = this.peek();
        if (v.kind === 'word' && /^[A-Za-z]+$/.test(v.text) && !/^(eq|gt|lt|ge|le)$/i.test(v.text)) {
          this.next();
          let mask = 0;
          const seen = new Set<string>();
          for (const ch of v.text) {
            const bit = FLAG_BITS[ch];
            if (bit === undefined || seen.has(ch)) {
              this.fail(v, ['TCP flag letters from UAPRSFX (upper case, each once)', 'a number (0-255)']);
            }
            seen.add(ch);
            mask |= bit;
          }
          return { kind: 'flags', mask, at };
        }
        return { kind: 'flagsValue', test: this.parseNumberTest(U8, false), at };
      }
      case 'bytes':
        this.next();
        return { kind: 'bytes', test: this.parseNumberTest(U64, false), at };
      case 'packets':
        this.next();
        return { kind: 'packets', test: this.parseNumberTest(U64, false), at };
      case 'tos':
        this.next();
        return { kind: 'tos', test: this.parseNumberTest(U8, false), at };
      case 'if': {
        this.next();
        return { kind: 'interface', side: 'either', value: this.parseNumber(U32_IF), at };
      }
      case 'in':
      case 'out': {
        this.next();
        const what = this.peek();
        if (this.isWord(what, 'if')) {
          this.next();
          return { kind: 'interface', side: t.lower === 'in' ? 'in' : 'out', value: this.parseNumber(U32_IF), at };
        }
        if (t.lower === 'in' && this.isWord(what, 'bytes', 'packets')) {
          this.next();
          return { kind: what.lower === 'bytes' ? 'bytes' : 'packets', test: this.parseNumberTest(U64, false), at };
        }
        if (t.lower === 'out' && this.isWord(what, 'bytes', 'packets')) {
          this.fail(what, ["'if'"], `'out ${what.lower}' (the reverse direction of a two-way flow) is not kept by netsvc`);
        }
        return this.fail(what, t.lower === 'in' ? ["'if'", "'bytes'", "'packets'"] : ["'if'"]);
      }
      case 'router': {
        this.next();
        const ip = this.next();
        if (!this.isWord(ip, 'ip')) this.fail(ip, ["'ip'"]);
        return { kind: 'exporter', nets: [this.parseHost()], at };
      }
      case 'exporter':
        this.next();
        return { kind: 'exporter', nets: [this.parseHost()], at };
      case 'next': {
        this.next();
        const ip = this.next();
        if (!this.isWord(ip, 'ip')) this.fail(ip, ["'ip'"]);
        return { kind: 'nextHop', nets: [this.parseHost()], at };
      }
      default:
        return this.fail(t, PRIMITIVE_STARTS);
    }
  }

  private parseHost(): IpNet {
    const t = this.next();
    const net = t.kind === 'word' ? hostNet(t.text) : undefined;
    if (!net) this.fail(t, ['an IPv4 or IPv6 address']);
    return net;
  }

  /** `A/N` (IPv4 may leave out trailing zero parts: 10.0/16), or `A MASK` for IPv4. */
  private parseNet(): IpNet {
    const t = this.next();
    const expected = ['a network (A/N, or an IPv4 address and mask)'];
    if (t.kind !== 'word') return this.fail(t, expected);
    const slash = t.text.indexOf('/');
    if (slash < 0) {
      const v4 = parseV4(t.text);
      if (v4 === undefined) {
        if (parseV6(t.text))
          this.fail(t, ['an IPv6 prefix (A/N)'], `expected an IPv6 prefix (A/N) after 'net', found '${t.text}'`);
        return this.fail(t, expected);
      }
      const m = this.next();
      const mask = m.kind === 'word' ? parseV4(m.text) : undefined;
      if (mask === undefined) return this.fail(m, ['an IPv4 netmask (e.g. 255.255.0.0)']);
      const fullMask: [number, number, number, number] = [0xffffffff, 0xffffffff, 0xffffffff, mask];
      return { words: masked(mapped(v4), fullMask), mask: fullMask, text: `${t.text} ${m.text}` };
    }
    const addr = t.text.slice(0, slash);
    const bitsText = t.text.slice(slash + 1);
    const bits = /^[0-9]{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
    const v4 = addr.includes(':') ? undefined : parseV4(addr, 2);
    if (v4 !== undefined) {
      if (!(bits <= 32)) this.fail(t, ['a prefix length (0-32)'], `expected a prefix length (0-32) in '${t.text}'`);
      const mask = prefixMask(96 + bits);
      return { words: masked(mapped(v4), mask), mask, text: t.text };
    }
    const v6 = parseV6(addr);
    if (!v6) return this.fail(t, expected);
    if (!(bits <= 128)) this.fail(t, ['a prefix length (0-128)'], `expected a prefix length (0-128) in '${t.text}'`);
    const mask = prefixMask(bits);
    return { words: masked(v6, mask), mask, text: t.text };
  }

  /** `[ A B/N, C … ]`: addresses and prefixes, space or comma separated, at least one. */
  private parseNetList(): IpNet[] {
    const open = this.next();
    if (!this.isPunct(open, '[')) this.fail(open, ["'['"]);
    const out: IpNet[] = [];
    for (;;) {
      const t = this.peek();
      if (this.isPunct(t, ',') && out.length > 0) {
        this.next();
        continue;
      }
      if (this.isPunct(t, ']') && out.length > 0) {
        this.next();
        return out;
      }
      if (t.kind === 'word' && t.text.includes('/')) out.push(this.parseNet());
      else if (t.kind === 'word' && hostNet(t.text)) out.push(this.parseHost());
      else this.fail(t, out.length > 0 ? ['an IPv4 or IPv6 address or prefix', "']'"] : ['an IPv4 or IPv6 address or prefix']);
    }
  }

  private parseNumber(limits: Limits): number {
    const t = this.next();
    const v = t.kind === 'word' ? parseFilterNumber(t.text) : undefined;
    if (v === undefined || v < limits.min || v > limits.max) this.fail(t, [limits.what]);
    return v;
  }

  /** `[comp] N`, or `in [ N … ]` when `lists`. */
  private parseNumberTest(limits: Limits, lists: boolean): NumberTest {
    const t = this.peek();
    if (lists && this.isWord(t, 'in')) {
      this.next();
      const open = this.next();
      if (!this.isPunct(open, '[')) this.fail(open, ["'['"]);
      const values: number[] = [];
      for (;;) {
        const v = this.peek();
        if (this.isPunct(v, ',') && values.length > 0) {
          this.next();
          continue;
        }
        if (this.isPunct(v, ']') && values.length > 0) {
          this.next();
          return { op: 'in', values };
        }
        if (v.kind !== 'word') this.fail(v, values.length > 0 ? [limits.what, "']'"] : [limits.what]);
        values.push(this.parseNumber(limits));
      }
    }
    const op = COMPARATORS[t.lower];
    if (op !== undefined && (t.kind === 'punct' || t.kind === 'word')) {
      this.next();
      return { op, value: this.parseNumber(limits) };
    }
    const v = this.peek();
    if (v.kind !== 'word' || parseFilterNumber(v.text) === undefined) {
      const prev = this.tokens[this.i - 1]!;
      this.fail(
        v,
        lists ? [limits.what, 'a comparator', "'in'"] : [limits.what, 'a comparator'],
        `expected ${limits.what} after '${prev.text}', found ${this.shown(v)}`,
      );
    }
    return { op: 'eq', value: this.parseNumber(limits) };
  }
}

/** Parses an nfdump filter expression; throws FilterSyntaxError. An empty (or comment-only) expression is `any`. */
export function parseFilter(text: string): FilterExpr {
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterSyntaxError(
      text.slice(0, MAX_FILTER_LENGTH + 1),
      MAX_FILTER_LENGTH,
      ['end of input'],
      text.slice(MAX_FILTER_LENGTH, MAX_FILTER_LENGTH + 20),
      `the expression is longer than ${MAX_FILTER_LENGTH} characters`,
    );
  }
  const tokens = lex(text);
  if (tokens.length === 1) return { kind: 'any', at: 0 };
  return new Parser(text, tokens).parse();
}
