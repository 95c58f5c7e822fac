import { describe, expect, it } from 'vitest';
import { FailureSignal } from '../../../collector/listen/failure-signal.js';

describe('failure signal', () => {
  it('tells each subscriber the first failure once, whether it subscribed before or after', () => {
    const s = new FailureSignal();
    const early: string[] = [];
    s.subscribe((e) => early.push(e.message));
    s.fail(new Error('first'));
    s.fail(new Error('second'));
    const late: string[] = [];
    s.subscribe((e) => late.push(e.message));
    expect(early).toEqual(['first']);
    expect(late).toEqual(['first']);
  });
});
