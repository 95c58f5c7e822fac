import { describe, expect, it } from 'vitest';
import { KnownSecrets } from '../../api/known-secrets.js';

const HASH_1 = 'scrypt$16384$8$1$c2FsdDE=$aGFzaDE=';
const HASH_2 = 'scrypt$16384$8$1$c2FsdDI=$aGFzaDI=';

describe('KnownSecrets', () => {
  it('knows a secret once added, for that api_id and stored hash only', () => {
    const known = new KnownSecrets(10);
    expect(known.has('nsv_a', HASH_1, 's3cret')).toBe(false);
    known.add('nsv_a', HASH_1, 's3cret');
    expect(known.has('nsv_a', HASH_1, 's3cret')).toBe(true);
    expect(known.has('nsv_a', HASH_1, 's3cre')).toBe(false);
    expect(known.has('nsv_b', HASH_1, 's3cret')).toBe(false);
    // Credentials issued again: a new salt, so the old secret is not known against the new hash.
    expect(known.has('nsv_a', HASH_2, 's3cret')).toBe(false);
  });

  it('does not confuse triples whose parts join to the same text', () => {
    const known = new KnownSecrets(10);
    known.add('nsv_a', HASH_1, 'bc');
    expect(known.has('nsv_a', `${HASH_1}b`, 'c')).toBe(false);
  });

  it('holds at most `max` entries, forgetting the least recently used', () => {
    const known = new KnownSecrets(2);
    known.add('a', HASH_1, 'x');
    known.add('b', HASH_1, 'x');
    expect(known.has('a', HASH_1, 'x')).toBe(true); // a is now the most recent
    known.add('c', HASH_1, 'x');
    expect(known.size).toBe(2);
    expect(known.has('b', HASH_1, 'x')).toBe(false);
    expect(known.has('a', HASH_1, 'x')).toBe(true);
    expect(known.has('c', HASH_1, 'x')).toBe(true);
  });

  it('remembers nothing when max is 0', () => {
    const known = new KnownSecrets(0);
    known.add('a', HASH_1, 'x');
    expect(known.has('a', HASH_1, 'x')).toBe(false);
    expect(known.size).toBe(0);
  });

  it('keeps no secret in clear', () => {
    const known = new KnownSecrets(4);
    known.add('nsv_a', HASH_1, 'very-secret-value');
    const held = JSON.stringify([...(known as unknown as { seen: Map<string, true> }).seen.keys()]);
    expect(held).not.toContain('very-secret-value');
    expect(held).not.toContain('nsv_a');
  });
});
