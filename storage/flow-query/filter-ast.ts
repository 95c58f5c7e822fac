/**
 * The filter language's syntax tree: what `parseFilter` builds from an
 * nfdump filter expression and `compileFilter` turns into a predicate.
 *
 * Every value a primitive tests is here already checked and normalised
 * (numbers in range, scaling suffixes applied, addresses as four 32-bit
 * words), so the compiler only chooses code. `at` is the offset of the
 * primitive's first token in the expression, for messages.
 */

/** Which address, port, AS or country of a flow a primitive tests: `either` (no qualifier, or `src or dst`) or `both` (`src and dst`). */
export type Direction = 'src' | 'dst' | 'either' | 'both';

/** A comparator: `=`/`==`/`eq`, `>`/`gt`, `<`/`lt`, `>=`/`ge`, `<=`/`le`. */
export type CompareOp = 'eq' | 'gt' | 'lt' | 'ge' | 'le';

/** A test of one number: a comparison, or membership of a list (`in [ … ]`). */
export type NumberTest =
  { readonly op: CompareOp; readonly value: number } | { readonly op: 'in'; readonly values: readonly number[] };

/**
 * An address with a mask, both as four big-endian 32-bit words of the
 * 128-bit address (IPv4 as ::ffff:a.b.c.d): matches when
 * (address & mask) == (net & mask) word by word. `ip A` is a full mask,
 * `net A/N` a prefix, `net A MASK` any IPv4 mask nfdump accepts.
 */
export interface IpNet {
  readonly words: readonly [number, number, number, number];
  readonly mask: readonly [number, number, number, number];
  /** As written, for messages. */
  readonly text: string;
}

/** One primitive of the filter language. */
export type FilterPrimitive =
  | { readonly kind: 'any'; readonly at: number }
  | { readonly kind: 'family'; readonly family: 4 | 6; readonly at: number }
  | { readonly kind: 'address'; readonly direction: Direction; readonly nets: readonly IpNet[]; readonly at: number }
  | { readonly kind: 'exporter'; readonly nets: readonly IpNet[]; readonly at: number }
  | { readonly kind: 'nextHop'; readonly nets: readonly IpNet[]; readonly at: number }
  | { readonly kind: 'port'; readonly direction: Direction; readonly test: NumberTest; readonly at: number }
  | { readonly kind: 'as'; readonly direction: Direction; readonly test: NumberTest; readonly at: number }
  | { readonly kind: 'country'; readonly direction: Direction; readonly code: string; readonly at: number }
  | { readonly kind: 'proto'; readonly value: number; readonly at: number }
  /** Every flag in `mask` set, on a TCP flow (nfdump's `flags S`; X = all six). */
  | { readonly kind: 'flags'; readonly mask: number; readonly at: number }
  /** The whole flags byte compared with a number, on a TCP flow (nfdump's `flags 18`, `flags > 2`). */
  | { readonly kind: 'flagsValue'; readonly test: NumberTest; readonly at: number }
  | { readonly kind: 'bytes'; readonly test: NumberTest; readonly at: number }
  | { readonly kind: 'packets'; readonly test: NumberTest; readonly at: number }
  | { readonly kind: 'tos'; readonly test: NumberTest; readonly at: number }
  /** `in if N` (input), `out if N` (output), `if N` (either). */
  | { readonly kind: 'interface'; readonly side: 'in' | 'out' | 'either'; readonly value: number; readonly at: number };

/** A filter expression: primitives joined by and, or, not. `and`/`or` hold two or more operands, flattened. */
export type FilterExpr =
  | FilterPrimitive
  | { readonly kind: 'and'; readonly operands: readonly FilterExpr[] }
  | { readonly kind: 'or'; readonly operands: readonly FilterExpr[] }
  | { readonly kind: 'not'; readonly operand: FilterExpr };
