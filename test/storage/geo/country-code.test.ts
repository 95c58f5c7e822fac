import { describe, expect, it } from 'vitest';
import { countryCode, countryNumber } from '../../../storage/geo/country-code.js';

describe('country numbers', () => {
  it('round-trips two letters, either case in, upper case out', () => {
    expect(countryNumber('DE')).toBe(0x4445);
    expect(countryNumber('de')).toBe(0x4445);
    expect(countryCode(0x4445)).toBe('DE');
    expect(countryCode(countryNumber('us'))).toBe('US');
  });

  it('answers 0 as the empty code (unknown)', () => {
    expect(countryCode(0)).toBe('');
  });

  it('refuses what is not two letters A-Z', () => {
    for (const bad of ['', 'D', 'DEU', 'D1', 'É?', ' d']) expect(() => countryNumber(bad)).toThrow(RangeError);
    for (const bad of [0x4430, 0x3045, 0x10000, -1, 1.5, 0x6465]) expect(() => countryCode(bad)).toThrow(RangeError);
  });
});
