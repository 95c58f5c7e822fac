/**
 * A parsed filter (filter-ast.ts) turned into a columnar predicate over a
 * FlowBatch: `select` writes the matching rows' indices, `block` says from a
 * block's per-column min/max whether its rows need looking at.
 *
 * `select` is one generated function per filter: the expression becomes one
 * condition inside one loop over the typed arrays, which V8 compiles like
 * hand-written code (as collector/decode/record-decoder.ts does for
 * templates). Only names chosen here reach the generated source; every value
 * from the expression (numbers, address words, lists) is passed in as data
 * (`K`), never spliced into the text. Addresses are compared as four native
 * 32-bit words per row against the net's masked words.
 */
import { COLUMN_TYPES, type FlowBatch, type NumericColumn } from '../../common/flow-batch.js';
import type { PlainColumn } from '../capture/column-codec.js';
import { ALL_COLUMNS, isAddressColumn, type ColumnEntry, type ColumnName } from '../capture/format.js';
import type { GeoLookup } from '../geo/geo-lookup.js';
import type { Direction, FilterExpr, IpNet, NumberTest } from './filter-ast.js';

/** Per-column min/max of a block, undefined when the block lacks the column. */
export type BlockStats = (column: ColumnName) => { min: number; max: number } | undefined;

/** What a block's min/max say about a filter: no row can match, every row matches, or look at the rows. */
export type BlockVerdict = 'none' | 'some' | 'all';

/** A filter ready to run over FlowBatch columns. */
export interface CompiledFilter {
  /** The FlowBatch columns the predicate reads (decode only these). */
  readonly columns: readonly ColumnName[];
  /** From a block's per-column min/max (undefined when the block lacks the column): 'none' = no row can match (skip the block), 'all' = every row matches, 'some' = check rows. */
  block(stats: BlockStats): BlockVerdict;
  /** Writes the indices of matching rows in [from, to) of `batch` into `out`, ascending; returns how many. */
  select(batch: FlowBatch, from: number, to: number, out: Uint32Array): number;
  /**
   * How many of a block's `rows` match (of rows [from, to) when given), from its filter columns
   * as stored (`columns` by name, capture/column-codec.ts's PlainColumn), without decoding them;
   * undefined when a column is missing from `columns`. Absent for a filter that reads what is
   * never stored so (addresses, geo data): the caller then decodes and selects.
   */
  countPlain?(columns: ReadonlyMap<ColumnName, PlainColumn>, rows: number, from?: number, to?: number): number | undefined;
}

/** What a filter needs from outside the flow: geo data for `country` and for AS numbers a flow left 0. */
export interface FilterEnv {
  geo?: GeoLookup;
}

/** A filter that parses but cannot run here (e.g. `country` without geo data); `at` is the primitive's offset in the expression. */
export class FilterCompileError extends Error {
  override readonly name = 'FilterCompileError';
  readonly code = 'filter-unsupported';
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

type Side = 'src' | 'dst';

const ADDRESS_OF: Readonly<Record<Side, 'srcAddr' | 'dstAddr'>> = { src: 'srcAddr', dst: 'dstAddr' };

/** Lists longer than this are tested through a table (bitmap or Set) instead of a chain of compares. */
const CHAIN_LIMIT = 6;

/** And/or over operands reading at most this many column values are evaluated whole (bitwise), above it they stop early. */
const BITWISE_READS = 16;

/** Column reads in a piece of generated code. */
function reads(code: string): number {
  return code.split('[i').length - 1;
}

/**
 * Joins conditions with and (`&`) or or (`|`). Cheap ones (array reads and compares, no calls)
 * are joined bitwise: every part is evaluated, but the row costs no mispredicted branch per
 * part, which on random data is what a short-circuit costs; a costly set stops early instead.
 */
function join(parts: readonly string[], op: '&' | '|', limit = Infinity): string {
  if (parts.length === 1) return parts[0]!;
  const cheap = parts.every((p) => !/\.\w+\(/.test(p)) && parts.reduce((n, p) => n + reads(p), 0) <= limit;
  return `(${parts.join(cheap ? ` ${op} ` : ` ${op}${op} `)})`;
}

class CodeGen {
  readonly K: unknown[] = [];
  readonly columns = new Set<ColumnName>();
  /** Column key (a column name, or `w:<view>` for a word view) → local name in the generated function. */
  readonly locals = new Map<string, string>();
  usesWords = false;

  constructor(private readonly env: FilterEnv) {}

  /** A constant passed in as data: its name in the generated code. */
  konst(v: unknown): string {
    this.K.push(v);
    return `k${this.K.length - 1}`;
  }

  /** A numeric column's array, as a local of the generated function. */
  col(name: ColumnName): string {
    this.columns.add(name);
    let local = this.locals.get(name);
    if (!local) {
      local = `c_${name}`;
      this.locals.set(name, local);
    }
    return local;
  }

  /** The native-word view of an address column. */
  words(column: 'srcAddr' | 'dstAddr' | 'exporter' | 'nextHop'): string {
    this.columns.add(column);
    this.usesWords = true;
    const view = { srcAddr: 'srcWords', dstAddr: 'dstWords', exporter: 'exporterWords', nextHop: 'nextHopWords' }[column];
    const key = `w:${view}`;
    let local = this.locals.get(key);
    if (!local) {
      local = `w_${view}`;
      this.locals.set(key, local);
    }
    return local;
  }

  /** The byte view of srcAddr/dstAddr (for the geo lookups). */
  bytes(column: 'srcAddr' | 'dstAddr'): string {
    this.columns.add(column);
    let local = this.locals.get(column);
    if (!local) {
      local = `a_${column}`;
      this.locals.set(column, local);
    }
    return local;
  }

  geo(at: number, what: string): string {
    if (!this.env.geo)
      throw new FilterCompileError(`${what} needs geo data (an AS and country database), and none is configured`, at);
    return this.konst(this.env.geo);
  }

  test(value: string, test: NumberTest, domain: 'u16' | 'other', simple: boolean): string {
    if (test.op !== 'in') {
      const k = this.konst(test.value);
      const op = { eq: '===', gt: '>', lt: '<', ge: '>=', le: '<=' }[test.op];
      return `${value} ${op} ${k}`;
    }
    if (simple && test.values.length <= CHAIN_LIMIT) {
      return join(
        test.values.map((v) => `(${value} === ${this.konst(v)})`),
        '|',
      );
    }
    if (domain === 'u16') {
      const bitmap = new Uint8Array(65536);
      for (const v of test.values) bitmap[v] = 1;
      return `${this.konst(bitmap)}[${value}] === 1`;
    }
    return `${this.konst(new Set(test.values))}.has(${value})`;
  }

  /**
   * The address in `net`: the words with a non-zero mask, as one integer test
   * ((w0 ^ k0) | ((w3 & m3) ^ k3) …) === 0 rather than a compare and a branch per word. A net
   * whose last masked word keeps 16 bits or more (a host, an IPv4 /16 and longer) tests that
   * word first and alone, since it rejects nearly every row, and the others only for the rows
   * it lets through.
   */
  net(column: 'srcAddr' | 'dstAddr' | 'exporter' | 'nextHop', net: IpNet): string {
    const w = this.words(column);
    const value = nativeWords(net.words);
    const mask = nativeWords(net.mask);
    const parts: string[] = [];
    let last = -1;
    for (let j = 0; j < 4; j++) {
      const m = mask[j]!;
      if (m === 0) continue;
      last = j;
      const at = j === 0 ? 'i4' : `i4 + ${j}`;
      if (m === -1) parts.push(`(${w}[${at}] ^ ${this.konst(value[j])})`);
      else parts.push(`((${w}[${at}] & ${this.konst(m)}) ^ ${this.konst(value[j]! & m)})`);
    }
    if (parts.length === 0) return 'true';
    if (parts.length > 1 && net.mask[last]!.toString(2).replace(/0/g, '').length >= 16) {
      const first = parts.pop()!;
      return `((${first} === 0) && ((${parts.join(' | ')}) === 0))`;
    }
    return `((${parts.join(' | ')}) === 0)`;
  }

  nets(column: 'srcAddr' | 'dstAddr' | 'exporter' | 'nextHop', nets: readonly IpNet[]): string {
    return join(
      nets.map((n) => this.net(column, n)),
      '|',
      BITWISE_READS,
    );
  }

  /** A flow's AS on one side: the column, or the geo lookup when the column is 0 and geo data is given. */
  asValue(side: Side): { code: string; simple: boolean } {
    const c = this.col(side === 'src' ? 'srcAs' : 'dstAs');
    if (!this.env.geo) return { code: `${c}[i]`, simple: true };
    const g = this.konst(this.env.geo);
    const a = this.bytes(ADDRESS_OF[side]);
    return { code: `(${c}[i] !== 0 ? ${c}[i] : ${g}.asOf(${a}, i))`, simple: false };
  }

  directed(direction: Direction, one: (side: Side) => string): string {
    switch (direction) {
      case 'src':
        return one('src');
      case 'dst':
        return one('dst');
      case 'either':
        return join([one('src'), one('dst')], '|', BITWISE_READS);
      case 'both':
        return join([one('src'), one('dst')], '&', BITWISE_READS);
    }
  }

  /** `negated`: under an odd number of `not`s (nfdump reads `flags` differently there, see flagsTest). */
  expr(e: FilterExpr, negated = false): string {
    switch (e.kind) {
      case 'and':
        return join(
          e.operands.map((o) => this.expr(o, negated)),
          '&',
          BITWISE_READS,
        );
      case 'or':
        return join(
          e.operands.map((o) => this.expr(o, negated)),
          '|',
          BITWISE_READS,
        );
      case 'not':
        return `!${this.expr(e.operand, !negated)}`;
      case 'any':
        return 'true';
      case 'family':
        return `(${this.col('ipVersion')}[i] ${e.family === 6 ? '===' : '!=='} 6)`;
      case 'address':
        return this.directed(e.direction, (s) => this.nets(ADDRESS_OF[s], e.nets));
      case 'exporter':
        return this.nets('exporter', e.nets);
      case 'nextHop':
        return this.nets('nextHop', e.nets);
      case 'port':
        return this.directed(
          e.direction,
          (s) => `(${this.test(`${this.col(s === 'src' ? 'srcPort' : 'dstPort')}[i]`, e.test, 'u16', true)})`,
        );
      case 'as':
        return this.directed(e.direction, (s) => {
          const v = this.asValue(s);
          return `(${this.test(v.code, e.test, 'other', v.simple)})`;
        });
      case 'country': {
        const code = (e.code.charCodeAt(0) << 8) | e.code.charCodeAt(1);
        const g = this.geo(e.at, `'country ${e.code}'`);
        return this.directed(e.direction, (s) => `(${g}.countryOf(${this.bytes(ADDRESS_OF[s])}, i) === ${this.konst(code)})`);
      }
      case 'proto':
        return `(${this.col('proto')}[i] === ${this.konst(e.value)})`;
      case 'flags': {
        const m = this.konst(e.mask);
        const flags = negated ? `((${this.col('tcpFlags')}[i] & ${m}) !== 0)` : `((${this.col('tcpFlags')}[i] & ${m}) === ${m})`;
        return `((${this.col('proto')}[i] === 6) & ${flags})`;
      }
      case 'flagsValue':
        return join(
          [`(${this.col('proto')}[i] === 6)`, `(${this.test(`${this.col('tcpFlags')}[i]`, e.test, 'other', true)})`],
          '&',
        );
      case 'bytes':
        return `(${this.test(`${this.col('bytes')}[i]`, e.test, 'other', true)})`;
      case 'packets':
        return `(${this.test(`${this.col('packets')}[i]`, e.test, 'other', true)})`;
      case 'tos':
        return `(${this.test(`${this.col('tos')}[i]`, e.test, 'other', true)})`;
      case 'interface': {
        const k = this.konst(e.value);
        const inIf = (): string => `${this.col('inputIf')}[i] === ${k}`;
        const outIf = (): string => `${this.col('outputIf')}[i] === ${k}`;
        if (e.side === 'in') return `(${inIf()})`;
        if (e.side === 'out') return `(${outIf()})`;
        return `((${inIf()}) | (${outIf()}))`;
      }
    }
  }
}

/** Four big-endian u32 words of an address as the platform's Int32 words over the same 16 bytes. */
function nativeWords(be: readonly number[]): Int32Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  for (let j = 0; j < 4; j++) view.setUint32(j * 4, be[j]! >>> 0, false);
  return new Int32Array(bytes.buffer);
}

type Select = (batch: FlowBatch, from: number, to: number, out: Uint32Array) => number;

function generate(
  e: FilterExpr,
  env: FilterEnv,
): { select: Select; columns: ColumnName[]; source: string; countPlain: CompiledFilter['countPlain'] | undefined } {
  const g = new CodeGen(env);
  const cond = g.expr(e);
  const reads = [...g.locals].map(([key, local]) => {
    const from = key.startsWith('w:')
      ? `batch.${key.slice(2)}`
      : key === 'srcAddr' || key === 'dstAddr'
        ? `batch.${key}`
        : `cols.${key}`;
    return `  const ${local} = ${from};`;
  });
  // Constants once; the columns per call (a batch's arrays change as it grows). Every row's
  // index is written and the count advanced by the condition as 0 or 1 (n < out.length holds as
  // n ≤ i − from): no branch per row, where an `if` or a ternary is one that random rows
  // mispredict (proto tcp: 4.5 → 1.6 CPU ns/row in bench/flow-filter.ts).
  const source = `${g.K.map((_, k) => `const k${k} = K[${k}];`).join('\n')}
return function select(batch, from, to, out) {
  const cols = batch.cols;
${reads.join('\n')}
  if (from < 0) from = 0;
  if (to > batch.length) to = batch.length;
  if (to - from > out.length) throw new RangeError('out holds ' + out.length + ' indices, fewer than the ' + (to - from) + ' rows asked for');
  let n = 0;
  for (let i = from; i < to; i++) {
${g.usesWords ? '    const i4 = i << 2;\n' : ''}    out[n] = i;
    n += (${cond}) | 0;
  }
  return n;
};`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the syntax tree; values come in through K, never as text
  const select = new Function('K', source)(g.K) as Select;
  const plain = [...g.locals.keys()].every((key) => !key.startsWith('w:') && !isAddressColumn(key as ColumnName));
  return { select, columns: [...g.columns], source, countPlain: plain ? plainCounter(g, cond) : undefined };
}

type PlainCount = (planes: readonly Uint8Array[], bases: readonly number[], n: number, from: number, to: number) => number;

/**
 * A filter's count over columns as stored: the condition of `select`, each `c_<column>[i]`
 * read from the stored bytes instead, as decodeNumeric would write it into the column's array
 * (an integer array keeps the low bits of base + stored value, so the same wrap is applied).
 * One function per combination of the columns' widths, made at its first use.
 */
function plainCounter(g: CodeGen, cond: string): NonNullable<CompiledFilter['countPlain']> {
  const names = [...g.locals.keys()] as NumericColumn[];
  const byWidths = new Map<string, PlainCount>();
  const planes: Uint8Array[] = [];
  const bases: number[] = [];
  return (columns, rows, from = 0, to = rows) => {
    planes.length = 0;
    bases.length = 0;
    let key = '';
    for (const name of names) {
      const c = columns.get(name);
      if (!c) return undefined;
      planes.push(c.bytes);
      bases.push(c.base);
      key += c.width;
    }
    let count = byWidths.get(key);
    if (!count) {
      count = makePlainCount(g, cond, names, key);
      byWidths.set(key, count);
    }
    return count(planes, bases, rows, from, to);
  };
}

function makePlainCount(g: CodeGen, cond: string, names: readonly NumericColumn[], widths: string): PlainCount {
  const wrap = (name: NumericColumn, v: string): string => {
    const kind = COLUMN_TYPES[name];
    if (kind === Uint8Array) return `((${v}) & 255)`;
    if (kind === Uint16Array) return `((${v}) & 65535)`;
    if (kind === Uint32Array) return `((${v}) >>> 0)`;
    return `(${v})`;
  };
  const setup: string[] = [];
  const value = new Map<string, string>();
  names.forEach((name, k) => {
    const p = `p_${name}`;
    const b = `b_${name}`;
    setup.push(`  const ${p} = P[${k}];`, `  const ${b} = B[${k}];`);
    const width = Number(widths[k]);
    let v: string;
    if (width === 0) {
      setup.push(`  const v_${name} = ${wrap(name, b)};`);
      v = `v_${name}`;
    } else {
      const raw =
        width === 1
          ? `${p}[i]`
          : width === 2
            ? `(${p}[i] | (${p}[n + i] << 8))`
            : `((${p}[i] | (${p}[n + i] << 8) | (${p}[n2 + i] << 16) | (${p}[n3 + i] << 24)) >>> 0)`;
      v = wrap(name, `${b} + ${raw}`);
    }
    value.set(`c_${name}[i]`, v);
  });
  const body = cond.replace(/c_(\w+)\[i\]/g, (m) => value.get(m) ?? m);
  const source = `${g.K.map((_, k) => `const k${k} = K[${k}];`).join('\n')}
return function countPlain(P, B, n, from, to) {
${setup.join('\n')}
  const n2 = 2 * n;
  const n3 = 3 * n;
  let m = 0;
  for (let i = from; i < to; i++) m += (${body}) | 0;
  return m;
};`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- as select's: only names chosen here, values through K
  return new Function('K', source)(g.K) as PlainCount;
}

// ---------------------------------------------------------------- block pruning

function and3(a: BlockVerdict, b: BlockVerdict): BlockVerdict {
  if (a === 'none' || b === 'none') return 'none';
  return a === 'all' && b === 'all' ? 'all' : 'some';
}

function or3(a: BlockVerdict, b: BlockVerdict): BlockVerdict {
  if (a === 'all' || b === 'all') return 'all';
  return a === 'none' && b === 'none' ? 'none' : 'some';
}

function not3(a: BlockVerdict): BlockVerdict {
  return a === 'all' ? 'none' : a === 'none' ? 'all' : 'some';
}

/** Float64 columns: a value that is not a number (only a damaged or foreign file holds one) matches no comparison, so their range never proves 'all'. */
const FLOAT_COLUMNS: ReadonlySet<ColumnName> = new Set<ColumnName>(['bytes', 'packets', 'received', 'start', 'end']);

function rangeVerdict(stats: BlockStats, column: ColumnName, test: NumberTest): BlockVerdict {
  const r = stats(column);
  if (!r || !Number.isFinite(r.min) || !Number.isFinite(r.max) || r.min > r.max) return 'some';
  const { min, max } = r;
  let v: BlockVerdict;
  switch (test.op) {
    case 'eq':
      v = test.value < min || test.value > max ? 'none' : min === max ? 'all' : 'some';
      break;
    case 'gt':
      v = max <= test.value ? 'none' : min > test.value ? 'all' : 'some';
      break;
    case 'lt':
      v = min >= test.value ? 'none' : max < test.value ? 'all' : 'some';
      break;
    case 'ge':
      v = max < test.value ? 'none' : min >= test.value ? 'all' : 'some';
      break;
    case 'le':
      v = min > test.value ? 'none' : max <= test.value ? 'all' : 'some';
      break;
    case 'in': {
      const inside = test.values.some((x) => x >= min && x <= max);
      v = !inside ? 'none' : min === max ? 'all' : 'some';
      break;
    }
  }
  return v === 'all' && FLOAT_COLUMNS.has(column) ? 'some' : v;
}

function directedVerdict(direction: Direction, one: (side: Side) => BlockVerdict): BlockVerdict {
  switch (direction) {
    case 'src':
      return one('src');
    case 'dst':
      return one('dst');
    case 'either':
      return or3(one('src'), one('dst'));
    case 'both':
      return and3(one('src'), one('dst'));
  }
}

function verdict(e: FilterExpr, stats: BlockStats, env: FilterEnv, negated = false): BlockVerdict {
  switch (e.kind) {
    case 'and': {
      let v: BlockVerdict = 'all';
      for (const o of e.operands) {
        v = and3(v, verdict(o, stats, env, negated));
        if (v === 'none') break;
      }
      return v;
    }
    case 'or': {
      let v: BlockVerdict = 'none';
      for (const o of e.operands) {
        v = or3(v, verdict(o, stats, env, negated));
        if (v === 'all') break;
      }
      return v;
    }
    case 'not':
      return not3(verdict(e.operand, stats, env, !negated));
    case 'any':
      return 'all';
    case 'family': {
      const six = rangeVerdict(stats, 'ipVersion', { op: 'eq', value: 6 });
      return e.family === 6 ? six : not3(six);
    }
    // The directory's address min/max count IPv4 and other rows (address-codec.ts), which says
    // nothing about which addresses a block holds; countries come from outside the file.
    case 'address':
    case 'exporter':
    case 'nextHop':
    case 'country':
      return 'some';
    case 'port':
      return directedVerdict(e.direction, (s) => rangeVerdict(stats, s === 'src' ? 'srcPort' : 'dstPort', e.test));
    case 'as':
      return directedVerdict(e.direction, (s) => {
        const column = s === 'src' ? 'srcAs' : 'dstAs';
        // With geo data a 0 in the column is replaced per row: the range holds only when no row is 0.
        if (env.geo) {
          const r = stats(column);
          if (!r || !(r.min > 0)) return 'some';
        }
        return rangeVerdict(stats, column, e.test);
      });
    case 'proto':
      return rangeVerdict(stats, 'proto', { op: 'eq', value: e.value });
    case 'flags': {
      const tcp = rangeVerdict(stats, 'proto', { op: 'eq', value: 6 });
      const r = stats('tcpFlags');
      let f: BlockVerdict = 'some';
      if (r && Number.isFinite(r.min) && Number.isFinite(r.max)) {
        if (r.min === r.max) f = flagsTest(r.min, e.mask, negated) ? 'all' : 'none';
        else if (r.max < (negated ? e.mask & -e.mask : e.mask)) f = 'none'; // below the lowest bit (any) or the mask (all)
      }
      return and3(tcp, f);
    }
    case 'flagsValue':
      return and3(rangeVerdict(stats, 'proto', { op: 'eq', value: 6 }), rangeVerdict(stats, 'tcpFlags', e.test));
    case 'bytes':
      return rangeVerdict(stats, 'bytes', e.test);
    case 'packets':
      return rangeVerdict(stats, 'packets', e.test);
    case 'tos':
      return rangeVerdict(stats, 'tos', e.test);
    case 'interface': {
      const t: NumberTest = { op: 'eq', value: e.value };
      if (e.side === 'in') return rangeVerdict(stats, 'inputIf', t);
      if (e.side === 'out') return rangeVerdict(stats, 'outputIf', t);
      return or3(rangeVerdict(stats, 'inputIf', t), rangeVerdict(stats, 'outputIf', t));
    }
  }
}

/**
 * The BlockStats of a data block from its column directory (CaptureFile.loadBlock's `columns`).
 * Address columns answer undefined: their min/max count IPv4-mapped and other rows
 * (address-codec.ts), not addresses. Ids this build does not know are ignored.
 */
export function directoryStats(entries: readonly ColumnEntry[]): BlockStats {
  const byName = new Map<ColumnName, { min: number; max: number }>();
  for (const e of entries) {
    const name = ALL_COLUMNS[e.id];
    if (name !== undefined && !isAddressColumn(name)) byName.set(name, { min: e.min, max: e.max });
  }
  return (column) => byName.get(column);
}

/**
 * nfdump's `flags` test: every flag of the mask set; but under an odd number of `not`s, any of
 * them (its filter engine inverts the element, so `not flags AP` means neither A nor P, which
 * is what its manual's `flags S and not flags AFRPU`, "only SYN", relies on).
 */
export function flagsTest(flags: number, mask: number, negated: boolean): boolean {
  return negated ? (flags & mask) !== 0 : (flags & mask) === mask;
}

/** Compiles a parsed filter; throws FilterCompileError when it needs what `env` lacks (geo data for `country`). */
export function compileFilter(expr: FilterExpr, env: FilterEnv = {}): CompiledFilter {
  const { select, columns, countPlain } = generate(expr, env);
  return {
    columns,
    block: (stats) => verdict(expr, stats, env),
    select,
    countPlain,
  };
}

/** The generated source of a filter's `select`, for tests and debugging. */
export function filterSource(expr: FilterExpr, env: FilterEnv = {}): string {
  return generate(expr, env).source;
}
