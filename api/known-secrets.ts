/**
 * Secrets already verified, remembered in memory so that a good credential
 * logging in again costs an HMAC instead of an scrypt, and is never queued
 * behind a storm of wrong ones.
 *
 * What is kept is HMAC-SHA256 under a key drawn at start (never stored) of the
 * api_id, the stored scrypt hash and the secret. The stored hash carries a
 * fresh random salt each time credentials are issued, so issuing new ones
 * makes every remembered entry of the old secret unreachable at once, as
 * bumping the credential version does for tokens. Only a secret that passed
 * scrypt is added, so a wrong guess never finds an entry and still pays for
 * its scrypt.
 *
 * What it weakens: someone who can read the process's memory can test guesses
 * against an entry at HMAC speed rather than scrypt speed; secrets are 256
 * random bits, so no guessing helps, and such a reader sees secrets in request
 * bodies anyway. A remembered login answers faster than a first one, which
 * tells the caller only what the 200 tells it. The per-address failure limit
 * and the area switches are checked as before.
 */
import { createHmac, randomBytes } from 'node:crypto';

/** A bounded set of verified (api_id, stored hash, secret) triples; the least recently used goes first. */
export class KnownSecrets {
  private readonly key = randomBytes(32);
  // A Map keeps insertion order: deleting and setting again on a hit makes the first key the least recently used.
  private readonly seen = new Map<string, true>();

  /** `max` entries at most; 0 remembers nothing. */
  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 0) throw new Error('known secrets: max must be an integer of at least 0');
  }

  /** Entries held now. */
  get size(): number {
    return this.seen.size;
  }

  private digest(apiId: string, storedHash: string, secret: string): string {
    // Length prefixes, so no two different triples feed the same bytes.
    const h = createHmac('sha256', this.key);
    for (const part of [apiId, storedHash, secret]) h.update(`${Buffer.byteLength(part)}:`).update(part);
    return h.digest('base64');
  }

  /** True when this secret was verified against this stored hash before. */
  has(apiId: string, storedHash: string, secret: string): boolean {
    if (this.max === 0) return false;
    const d = this.digest(apiId, storedHash, secret);
    if (!this.seen.delete(d)) return false;
    this.seen.set(d, true);
    return true;
  }

  /** Remembers a secret that scrypt has just verified against `storedHash`. */
  add(apiId: string, storedHash: string, secret: string): void {
    if (this.max === 0) return;
    const d = this.digest(apiId, storedHash, secret);
    this.seen.delete(d);
    this.seen.set(d, true);
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }
}
