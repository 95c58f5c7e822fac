import { describe, expect, it } from 'vitest';
import { defaultCatalogue, parseCatalogue } from '../../../storage/radius/attribute-catalogue.js';

const cat = defaultCatalogue();
const def = (name: string) => {
  const d = cat.get(name);
  if (!d) throw new Error(`${name} missing from the catalogue`);
  return d;
};

describe('attribute catalogue', () => {
  it('holds every attribute the hotspot area promises, each in the table FreeRADIUS reads it from', () => {
    const expected: Record<string, 'check' | 'reply'> = {
      'Session-Timeout': 'reply',
      'Idle-Timeout': 'reply',
      'Acct-Interim-Interval': 'reply',
      'Simultaneous-Use': 'check',
      'WISPr-Bandwidth-Max-Up': 'reply',
      'WISPr-Bandwidth-Max-Down': 'reply',
      'WISPr-Redirection-URL': 'reply',
      'Mikrotik-Rate-Limit': 'reply',
      'ChilliSpot-Max-Input-Octets': 'reply',
      'ChilliSpot-Max-Output-Octets': 'reply',
      'ChilliSpot-Max-Total-Octets': 'reply',
      'Max-Daily-Session': 'check',
      'Max-All-Session': 'check',
      'Max-Daily-Octets': 'check',
      'Max-Weekly-Octets': 'check',
      'Max-Monthly-Octets': 'check',
      'Max-Total-Octets': 'check',
    };
    for (const [name, table] of Object.entries(expected)) expect(def(name).table).toBe(table);
  });

  it('gives user rows := and profile rows an operator that lets the user value win', () => {
    for (const d of cat.all()) {
      if (d.multiple) continue;
      expect(d.operator).toBe(':=');
      expect(d.profileOperator).toBe(d.table === 'reply' ? '=' : '+=');
    }
  });

  it('converts client units to FreeRADIUS units and back', () => {
    expect(cat.toStored(def('WISPr-Bandwidth-Max-Down'), '2048')).toEqual({ ok: true, value: '2048000' });
    expect(cat.toStored(def('Max-Daily-Octets'), 1.5)).toEqual({ ok: true, value: '1572864' });
    expect(cat.toStored(def('Max-Total-Octets'), '10240')).toEqual({ ok: true, value: String(10240 * 1048576) });
    expect(cat.fromStored(def('Max-Daily-Octets'), '1572864')).toBe(1.5);
    expect(cat.fromStored(def('WISPr-Bandwidth-Max-Up'), '512000')).toBe(512);
    expect(cat.toStored(def('Session-Timeout'), '3600')).toEqual({ ok: true, value: '3600' });
  });

  it('refuses values the attribute cannot hold, naming the attribute', () => {
    const bad = (name: string, v: unknown) => cat.toStored(def(name), v);
    expect(bad('Session-Timeout', '1.5')).toMatchObject({ ok: false, error: expect.stringContaining('Session-Timeout') });
    expect(bad('Session-Timeout', '-1')).toMatchObject({ ok: false });
    expect(bad('Session-Timeout', '1; DROP TABLE radreply')).toMatchObject({ ok: false });
    // ChilliSpot octet limits are 32-bit attributes: 4096 MB does not fit.
    expect(bad('ChilliSpot-Max-Total-Octets', '4096')).toMatchObject({ ok: false });
    expect(bad('ChilliSpot-Max-Total-Octets', '4095')).toMatchObject({ ok: true });
    expect(bad('WISPr-Redirection-URL', 'javascript:alert(1)')).toMatchObject({ ok: false });
    expect(bad('WISPr-Redirection-URL', 'https://portal.corp.test/welcome?x=1')).toMatchObject({ ok: true });
    expect(bad('Mikrotik-Rate-Limit', '2M/4M')).toMatchObject({ ok: true });
    expect(bad('Mikrotik-Rate-Limit', "2M'/4M")).toMatchObject({ ok: false });
    // A value wrapped in backquotes would be expanded by FreeRADIUS (%{exec:…}); quotes would be stripped.
    expect(bad('Reply-Message', '`%{exec:/bin/true}`')).toMatchObject({ ok: false });
    expect(bad('Reply-Message', '"hi"')).toMatchObject({ ok: false });
    expect(bad('Reply-Message', "it's fine")).toMatchObject({ ok: true });
    expect(bad('Reply-Message', 'x'.repeat(254))).toMatchObject({ ok: false });
  });

  it('finds names case-insensitively, as FreeRADIUS dictionaries do, and lists the public map', () => {
    expect(cat.get('session-timeout')?.name).toBe('Session-Timeout');
    expect(cat.publicMap()['WISPr-Bandwidth-Max-Up']).toEqual({ text: expect.any(String), format: 'Kbps', multiple: false });
  });

  it('rejects catalogue data that would write a comparison into a check table', () => {
    const bad = {
      attributes: [
        {
          name: 'Simultaneous-Use',
          label: 'x',
          format: 'Number',
          type: 'integer',
          multiple: false,
          table: 'check',
          operator: '=',
          profileOperator: '+=',
          scale: 1,
          min: 1,
          max: 2,
        },
      ],
    };
    expect(() => parseCatalogue(bad)).toThrow(/check items need/);
  });
});
