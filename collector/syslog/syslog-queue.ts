/**
 * The receiver's queue of messages waiting to be written: first in, first
 * out, bounded, dropping the oldest when full. An array with a moving head,
 * so that dropping one message per arrival while the database is locked
 * costs O(1), not a shift of up to `max` elements each time.
 */

/** A bounded FIFO that drops the oldest items to stay within `max`. */
export class DropOldestQueue<T> {
  private items: T[] = [];
  private head = 0;

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error('DropOldestQueue: max must be at least 1');
  }

  /** Items held now. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Appends one item; answers how many of the oldest were dropped to stay within `max` (0 or 1). */
  push(item: T): number {
    this.items.push(item);
    return this.trim();
  }

  /** Removes and returns up to `n` of the oldest items. */
  take(n: number): T[] {
    const end = Math.min(this.items.length, this.head + n);
    const out = this.items.slice(this.head, end);
    this.head = end;
    this.compact();
    return out;
  }

  /**
   * Puts items back in front (a write that failed), oldest first; answers how
   * many of the oldest were dropped to stay within `max`.
   */
  unshift(items: readonly T[]): number {
    if (items.length === 0) return 0;
    if (this.head >= items.length) {
      this.head -= items.length;
      for (let i = 0; i < items.length; i++) this.items[this.head + i] = items[i]!;
    } else {
      this.items = [...items, ...this.items.slice(this.head)];
      this.head = 0;
    }
    return this.trim();
  }

  /** Empties the queue; answers what it held. */
  clear(): number {
    const n = this.length;
    this.items = [];
    this.head = 0;
    return n;
  }

  private trim(): number {
    const excess = this.length - this.max;
    if (excess <= 0) return 0;
    this.head += excess;
    this.compact();
    return excess;
  }

  /** Releases the slots before the head once they are half the array (amortised O(1) per item). */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
