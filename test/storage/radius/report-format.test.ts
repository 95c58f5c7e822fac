import { describe, expect, it } from 'vitest';
import { displayMac, macSpellings, normaliseMac } from '../../../storage/radius/mac.js';
import { formatDuration, formatTraffic, maskPassword } from '../../../storage/radius/report-format.js';

describe('hotspot formats', () => {
  it('prints traffic 1024-based with two decimals', () => {
    expect(formatTraffic(0)).toBe('0.00 B');
    expect(formatTraffic(1023)).toBe('1023.00 B');
    expect(formatTraffic(1536)).toBe('1.50 KB');
    expect(formatTraffic(5_000_000_000)).toBe('4.66 GB');
    expect(formatTraffic(3 * 1024 ** 4)).toBe('3.00 TB');
  });

  it('prints durations HH:MM:SS with a day prefix from one day on', () => {
    expect(formatDuration(0)).toBe('00:00:00');
    expect(formatDuration(3661)).toBe('01:01:01');
    expect(formatDuration(86399)).toBe('23:59:59');
    expect(formatDuration(90061)).toBe('1d 01:01:01');
    expect(formatDuration(10 * 86400 + 5)).toBe('10d 00:00:05');
  });

  it('masks passwords to the first character and seven asterisks whatever the length', () => {
    expect(maskPassword('S')).toBe('S*******');
    expect(maskPassword('Secret-password-that-is-long')).toBe('S*******');
    expect(maskPassword('')).toBeNull();
  });

  it('normalises MACs from any common notation', () => {
    for (const m of ['aa:bb:cc:dd:ee:ff', 'AA-BB-CC-DD-EE-FF', 'aabb.ccdd.eeff', 'aabbccddeeff', 'AABBCC-DDEEFF']) {
      expect(normaliseMac(m)).toBe('AA-BB-CC-DD-EE-FF');
    }
    expect(normaliseMac('aa:bb-cc:dd:ee:ff')).toBeUndefined();
    expect(normaliseMac('aa:bb:cc:dd:ee')).toBeUndefined();
    expect(normaliseMac("aa'bb")).toBeUndefined();
    expect(macSpellings('AA-BB-CC-DD-EE-FF')).toEqual(
      expect.arrayContaining(['aa:bb:cc:dd:ee:ff', 'AABBCCDDEEFF', 'aabb.ccdd.eeff']),
    );
    expect(displayMac('00-11-22-33-44-55:Guest WiFi')).toBe('00-11-22-33-44-55');
    expect(displayMac('not a mac')).toBe('not a mac');
  });
});
