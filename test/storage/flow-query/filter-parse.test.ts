import { describe, expect, it } from 'vitest';
import {
  FilterSyntaxError,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  parseFilter,
  parseFilterNumber,
  filterErrorCaret,
  type FilterExpr,
} from '../../../storage/flow-query/filter-parse.js';
import { xorshift } from '../../helpers/xorshift.js';

function syntaxError(text: string): FilterSyntaxError {
  try {
    parseFilter(text);
  } catch (err) {
    if (err instanceof FilterSyntaxError) return err;
    throw err;
  }
  throw new Error(`'${text}' parsed`);
}

/** The tree without offsets, for comparing shapes. */
function shape(e: FilterExpr): unknown {
  return JSON.parse(JSON.stringify(e, (k, v: unknown) => (k === 'at' ? undefined : v)));
}

const FULL = [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];

describe('parseFilter: what nfdump 1.7 accepts', () => {
  it('addresses: ip, host, src/dst, IPv6, lists', () => {
    expect(shape(parseFilter('src ip 10.0.0.1'))).toEqual({
      kind: 'address',
      direction: 'src',
      nets: [{ words: [0, 0, 0xffff, 0x0a000001], mask: FULL, text: '10.0.0.1' }],
    });
    expect(parseFilter('host 10.0.0.1')).toMatchObject({ kind: 'address', direction: 'either' });
    expect(parseFilter('dst host ::ffff:10.0.0.1')).toMatchObject({
      direction: 'dst',
      nets: [{ words: [0, 0, 0xffff, 0x0a000001] }],
    });
    expect(parseFilter('ip 2001:db8::1')).toMatchObject({ nets: [{ words: [0x20010db8, 0, 0, 1], mask: FULL }] });
    expect(parseFilter('ip 1:2:3:4:5:6:7:8')).toMatchObject({ nets: [{ words: [0x10002, 0x30004, 0x50006, 0x70008] }] });
    expect(parseFilter('src ip in [ 10.0.0.1, 10.1.0.0/16 2001:db8::/32 ]')).toMatchObject({
      kind: 'address',
      nets: [{ text: '10.0.0.1' }, { text: '10.1.0.0/16' }, { text: '2001:db8::/32' }],
    });
  });

  it('networks: CIDR (IPv4 parts may be left out), IPv4 mask, IPv6 prefix; host bits are cleared', () => {
    expect(parseFilter('net 10.0.0.1/8')).toMatchObject({
      nets: [{ words: [0, 0, 0xffff, 0x0a000000], mask: [...FULL.slice(0, 3), 0xff000000] }],
    });
    expect(parseFilter('net 10.2/16')).toMatchObject({ nets: [{ words: [0, 0, 0xffff, 0x0a020000] }] });
    expect(parseFilter('src net 10.0.0.0 255.0.255.0')).toMatchObject({
      direction: 'src',
      nets: [{ mask: [...FULL.slice(0, 3), 0xff00ff00] }],
    });
    expect(parseFilter('dst net 2001:db8:ffff::/32')).toMatchObject({
      nets: [{ words: [0x20010db8, 0, 0, 0], mask: [0xffffffff, 0, 0, 0] }],
    });
    expect(parseFilter('net 0.0.0.0/0')).toMatchObject({ nets: [{ mask: [...FULL.slice(0, 3), 0] }] });
  });

  it('directions: src or dst, dst or src, src and dst', () => {
    expect(parseFilter('src or dst port 80')).toMatchObject({ kind: 'port', direction: 'either' });
    expect(parseFilter('dst or src port 80')).toMatchObject({ kind: 'port', direction: 'either' });
    expect(parseFilter('src and dst net 10.0.0.0/8')).toMatchObject({ kind: 'address', direction: 'both' });
  });

  it('ports and AS: comparators in symbols and words, lists', () => {
    const ops = {
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
    for (const [text, op] of Object.entries(ops)) {
      expect(parseFilter(`port ${text} 80`)).toMatchObject({ kind: 'port', test: { op, value: 80 } });
      expect(parseFilter(`PORT ${text.toUpperCase()} 80`)).toMatchObject({ kind: 'port', test: { op, value: 80 } });
    }
    expect(parseFilter('port>80')).toMatchObject({ test: { op: 'gt', value: 80 } });
    expect(parseFilter('dst port in [ 80 443, 8080 ]')).toMatchObject({ test: { op: 'in', values: [80, 443, 8080] } });
    expect(parseFilter('src as 65000')).toMatchObject({ kind: 'as', direction: 'src', test: { op: 'eq', value: 65000 } });
    expect(parseFilter('as in [ 1 4294967295 ]')).toMatchObject({ kind: 'as', test: { values: [1, 4294967295] } });
  });

  it('numbers: decimal, 0x hex, k/m/g/t as powers of 1000, saturating at 2^64 − 1', () => {
    expect(parseFilter('bytes > 1k')).toMatchObject({ kind: 'bytes', test: { op: 'gt', value: 1000 } });
    expect(parseFilter('packets < 2M')).toMatchObject({ kind: 'packets', test: { op: 'lt', value: 2_000_000 } });
    expect(parseFilter('bytes 3g')).toMatchObject({ test: { op: 'eq', value: 3e9 } });
    expect(parseFilterNumber('1t')).toBe(1e12);
    expect(parseFilterNumber('0x50')).toBe(80);
    expect(parseFilterNumber('010')).toBe(10);
    expect(parseFilterNumber('99999999999999999999')).toBe(2 ** 64);
    expect(parseFilterNumber('9'.repeat(4000))).toBe(2 ** 64);
    expect(parseFilterNumber('1.5k')).toBeUndefined();
    expect(parseFilterNumber('1kb')).toBeUndefined();
  });

  it('protocols, flags, tos, interfaces, exporter, family, any', () => {
    expect(parseFilter('proto tcp')).toMatchObject({ kind: 'proto', value: 6 });
    expect(parseFilter('proto ICMP6')).toMatchObject({ value: 58 });
    expect(parseFilter('proto gre')).toMatchObject({ value: 47 });
    expect(parseFilter('proto esp')).toMatchObject({ value: 50 });
    expect(parseFilter('proto 112')).toMatchObject({ value: 112 });
    expect(parseFilter('flags S')).toMatchObject({ kind: 'flags', mask: 0x02 });
    expect(parseFilter('flags UAPRSF')).toMatchObject({ mask: 0x3f });
    expect(parseFilter('flags X')).toMatchObject({ mask: 0x3f });
    expect(parseFilter('flags 18')).toMatchObject({ kind: 'flagsValue', test: { op: 'eq', value: 18 } });
    expect(parseFilter('flags > 2')).toMatchObject({ kind: 'flagsValue', test: { op: 'gt', value: 2 } });
    expect(parseFilter('tos >= 32')).toMatchObject({ kind: 'tos', test: { op: 'ge', value: 32 } });
    expect(parseFilter('in if 3')).toMatchObject({ kind: 'interface', side: 'in', value: 3 });
    expect(parseFilter('out if 70000')).toMatchObject({ kind: 'interface', side: 'out', value: 70000 });
    expect(parseFilter('if 3')).toMatchObject({ kind: 'interface', side: 'either' });
    expect(parseFilter('in bytes > 5')).toMatchObject({ kind: 'bytes' });
    expect(parseFilter('router ip 10.0.0.1')).toMatchObject({ kind: 'exporter' });
    expect(parseFilter('exporter 2001:db8::1')).toMatchObject({ kind: 'exporter' });
    expect(parseFilter('next ip 10.0.0.1')).toMatchObject({ kind: 'nextHop' });
    for (const w of ['inet', 'ipv4', 'INET']) expect(parseFilter(w)).toMatchObject({ kind: 'family', family: 4 });
    for (const w of ['inet6', 'ipv6']) expect(parseFilter(w)).toMatchObject({ kind: 'family', family: 6 });
    expect(parseFilter('any')).toMatchObject({ kind: 'any' });
    expect(parseFilter('')).toMatchObject({ kind: 'any' });
    expect(parseFilter('  # only a comment')).toMatchObject({ kind: 'any' });
  });

  it('country (netsvc) and geo (nfdump): two letters, upper-cased', () => {
    expect(parseFilter('src country de')).toMatchObject({ kind: 'country', direction: 'src', code: 'DE' });
    expect(parseFilter('geo FR')).toMatchObject({ kind: 'country', direction: 'either', code: 'FR' });
  });

  it('and binds tighter than or; not tighter than and; chains are flat', () => {
    expect(shape(parseFilter('proto tcp or proto udp and port 53'))).toMatchObject({
      kind: 'or',
      operands: [{ kind: 'proto' }, { kind: 'and', operands: [{ kind: 'proto' }, { kind: 'port' }] }],
    });
    expect(parseFilter('not proto tcp and port 53')).toMatchObject({
      kind: 'and',
      operands: [{ kind: 'not' }, { kind: 'port' }],
    });
    expect(parseFilter('! (any || any) && !any')).toMatchObject({ kind: 'and', operands: [{ kind: 'not' }, { kind: 'not' }] });
    const chain = parseFilter(Array.from({ length: 300 }, (_, i) => `port ${i}`).join(' or '));
    expect(chain).toMatchObject({ kind: 'or' });
    expect((chain as unknown as { operands: unknown[] }).operands).toHaveLength(300);
    expect(parseFilter('(port 1 or port 2) or port 3')).toMatchObject({ kind: 'or', operands: [{}, {}, {}] });
  });

  it('comments and several lines, as in an nfdump filter file', () => {
    expect(parseFilter('proto udp # DNS\n and port 53')).toMatchObject({ kind: 'and' });
  });
});

describe('parseFilter: errors say where, what was expected, what was found', () => {
  it('a word where a number belongs', () => {
    const e = syntaxError('proto tcp and port http');
    expect(e).toMatchObject({ name: 'FilterSyntaxError', position: 19, column: 20, found: 'http' });
    expect(e.expected).toContain('a port number (0-65535)');
    expect(e.message).toBe("column 20: expected a port number (0-65535) after 'port', found 'http'");
    expect(filterErrorCaret(e)).toBe('proto tcp and port http\n                   ^');
  });

  it.each([
    ['port 70000', 5, '70000'],
    ['as 4294967296', 3, '4294967296'],
    ['tos 256', 4, '256'],
    ['proto 256', 6, '256'],
    ['proto ipv6-icmp', 6, 'ipv6-icmp'],
    ['ip 10.1', 3, '10.1'],
    ['ip 256.1.1.1', 3, '256.1.1.1'],
    ['ip 1:2:3:4:5:6:7:8:9', 3, '1:2:3:4:5:6:7:8:9'],
    ['src ip 10.0.0.1/24', 7, '10.0.0.1/24'],
    ['net 10.0.0.0/33', 4, '10.0.0.0/33'],
    ['net 2001:db8::/129', 4, '2001:db8::/129'],
    ['net 10/8', 4, '10/8'],
    ['net 2001:db8:: ffff::', 4, '2001:db8::'],
    ['net 10.0.0.0 255.0.0', 13, '255.0.0'],
    ['flags s', 6, 's'],
    ['flags SS', 6, 'SS'],
    ['flags', 5, 'end of input'],
    ['port 80 proto tcp', 8, 'proto'],
    ['src port 80 or', 14, 'end of input'],
    ['and', 0, 'and'],
    ['()', 1, ')'],
    ['(port 80', 8, 'end of input'],
    ['port 80)', 7, ')'],
    ['port != 80', 5, '!'],
    ['port in [ ]', 10, ']'],
    ['bytes > 1.5k', 8, '1.5k'],
    ['src if 3', 4, 'if'],
    ['src geo DEU', 8, 'DEU'],
    ['out bytes > 5', 4, 'bytes'],
    ['port 80 & port 81', 8, '&'],
    ['port ~80', 5, "'~'"],
  ])('%s', (text, position, found) => {
    const e = syntaxError(text);
    expect({ position: e.position, found: e.found }).toEqual({ position, found });
    expect(e.column).toBe(position + 1);
    expect(e.message).toMatch(new RegExp(`^column ${position + 1}: `));
    expect(e.expected.length).toBeGreaterThan(0);
  });

  it('lines and columns in a multi-line expression', () => {
    const e = syntaxError('proto tcp\nand port x');
    expect({ line: e.line, column: e.column, position: e.position }).toEqual({ line: 2, column: 10, position: 19 });
    expect(e.message).toMatch(/^line 2, column 10: /);
    expect(filterErrorCaret(e).split('\n')).toEqual(['and port x', '         ^']);
  });
});

describe('parseFilter: bounds and hostile input', () => {
  it(`refuses more than ${MAX_FILTER_LENGTH} characters`, () => {
    expect(() => parseFilter(`${'any or '.repeat(700)}any`)).toThrow(FilterSyntaxError);
    expect(syntaxError('x'.repeat(100_000)).position).toBe(MAX_FILTER_LENGTH);
  });

  it(`refuses nesting deeper than ${MAX_FILTER_DEPTH}, however it is written`, () => {
    expect(() => parseFilter(`${'not '.repeat(MAX_FILTER_DEPTH)}any`)).not.toThrow();
    expect(() => parseFilter(`${'('.repeat(MAX_FILTER_DEPTH)}any${')'.repeat(MAX_FILTER_DEPTH)}`)).not.toThrow();
    expect(syntaxError(`${'not '.repeat(1000)}any`).message).toMatch(/nest deeper than 64/);
    expect(syntaxError(`${'!'.repeat(4000)}any`).message).toMatch(/nest deeper than 64/);
    expect(syntaxError(`${'('.repeat(2000)}any${')'.repeat(2000)}`).message).toMatch(/nest deeper than 64/);
  });

  it('very long numbers and addresses are errors or saturate, never hang', () => {
    expect(syntaxError(`port ${'9'.repeat(4000)}`).expected).toContain('a port number (0-65535)');
    expect(parseFilter(`bytes > ${'9'.repeat(4000)}`)).toMatchObject({ test: { value: 2 ** 64 } });
    expect(syntaxError(`ip ${'1.'.repeat(1000)}1`).found).toMatch(/^1\.1\./);
    expect(syntaxError(`ip ${':'.repeat(3000)}`).found).toMatch(/^::/);
  });

  it('random bytes and random token soup: a FilterSyntaxError or a tree, nothing else', () => {
    const rnd = xorshift(20261126);
    const words = [
      'src',
      'dst',
      'ip',
      'net',
      'port',
      'and',
      'or',
      'not',
      '!',
      '(',
      ')',
      '[',
      ']',
      'in',
      'any',
      '80',
      '10.0.0.1',
      '::1',
      '10.0/16',
      'flags',
      'SA',
      '>',
      '==',
      'proto',
      'tcp',
      'bytes',
      '1k',
      'country',
      'DE',
      ',',
      '&&',
      '||',
      '#',
      '\n',
    ];
    for (let k = 0; k < 3000; k++) {
      let text: string;
      if (k % 2 === 0) {
        const n = Math.floor(rnd() * 60);
        text = String.fromCharCode(...Array.from({ length: n }, () => Math.floor(rnd() * 256)));
      } else {
        const n = Math.floor(rnd() * 20);
        text = Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]!).join(' ');
      }
      try {
        parseFilter(text);
      } catch (err) {
        expect(err, JSON.stringify(text)).toBeInstanceOf(FilterSyntaxError);
        const e = err as FilterSyntaxError;
        expect(e.position).toBeGreaterThanOrEqual(0);
        expect(e.position).toBeLessThanOrEqual(text.length);
        expect(filterErrorCaret(e)).toContain('^');
      }
    }
  });
});
