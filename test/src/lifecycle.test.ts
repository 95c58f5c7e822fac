import { describe, expect, it } from 'vitest';
import { Lifecycle, LifecycleClosedError, type Component } from '../../src/lifecycle.js';

/** A fake part that records its start and close in `events`; `fail` names what it fails at. */
function part(events: string[], name: string, fail: { start?: boolean; close?: boolean } = {}): Component<string> {
  return {
    name,
    start: async () => {
      await Promise.resolve();
      if (fail.start) throw new Error(`${name} would not start`);
      events.push(`start ${name}`);
      return name;
    },
    close: async (value) => {
      await Promise.resolve();
      events.push(`close ${value}`);
      if (fail.close) throw new Error(`${name} would not close`);
    },
  };
}

function lifecycle() {
  const closeErrors: Array<[string, string]> = [];
  const life = new Lifecycle({ onCloseError: (name, err) => closeErrors.push([name, (err as Error).message]) });
  return { life, closeErrors };
}

describe('Lifecycle', () => {
  it('starts parts in order, gives back what each start returned, and closes them in reverse', async () => {
    const events: string[] = [];
    const { life, closeErrors } = lifecycle();
    for (const name of ['a', 'b', 'c']) expect(await life.start(part(events, name))).toBe(name);
    await life.close();
    expect(events).toEqual(['start a', 'start b', 'start c', 'close c', 'close b', 'close a']);
    expect(closeErrors).toEqual([]);
  });

  it('closes the started parts in reverse when one fails to start, and throws its error on', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    await life.start(part(events, 'a'));
    await life.start(part(events, 'b'));
    await expect(life.start(part(events, 'c', { start: true }))).rejects.toThrow('c would not start');
    expect(events).toEqual(['start a', 'start b', 'close b', 'close a']);
  });

  it('treats a start that throws at once like one that rejects', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    await life.start(part(events, 'a'));
    const sync = (): string => {
      throw new Error('at once');
    };
    await expect(life.open('b', sync, () => undefined)).rejects.toThrow('at once');
    expect(events).toEqual(['start a', 'close a']);
  });

  it('closes the started parts when a step that opens nothing fails', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    await life.start(part(events, 'a'));
    expect(await life.run(() => 42)).toBe(42);
    await expect(life.run(Promise.reject(new Error('module did not load')))).rejects.toThrow('module did not load');
    expect(events).toEqual(['start a', 'close a']);
  });

  it('awaits a start begun earlier in its place in the list, while other work went on', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    let bind!: () => void;
    const binding = new Promise<string>((resolve) => {
      bind = () => {
        events.push('start early');
        resolve('early');
      };
    });
    await life.start(part(events, 'a'));
    const early = life.open('early', binding, (v) => void events.push(`close ${v}`));
    events.push('loading alongside');
    bind();
    expect(await early).toBe('early');
    await life.start(part(events, 'b'));
    await life.close();
    expect(events).toEqual(['start a', 'loading alongside', 'start early', 'start b', 'close b', 'close early', 'close a']);
  });

  it('reports a part that fails to close and closes the others all the same', async () => {
    const events: string[] = [];
    const { life, closeErrors } = lifecycle();
    await life.start(part(events, 'a'));
    await life.start(part(events, 'b', { close: true }));
    await life.start(part(events, 'c'));
    await life.close();
    expect(events).toEqual(['start a', 'start b', 'start c', 'close c', 'close b', 'close a']);
    expect(closeErrors).toEqual([['b', 'b would not close']]);
  });

  it('throws the start error on, not a close error, when rolling back', async () => {
    const events: string[] = [];
    const { life, closeErrors } = lifecycle();
    await life.start(part(events, 'a', { close: true }));
    await expect(life.start(part(events, 'b', { start: true }))).rejects.toThrow('b would not start');
    expect(closeErrors).toEqual([['a', 'a would not close']]);
  });

  it('closes once: a second close, even while the first runs, closes nothing again', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    await life.start(part(events, 'a'));
    await life.start(part(events, 'b'));
    const first = life.close();
    const second = life.close();
    expect(second).toBe(first);
    await Promise.all([first, second]);
    await life.close();
    expect(events).toEqual(['start a', 'start b', 'close b', 'close a']);
  });

  it('closes at once a part whose start ends after the lifecycle was closed', async () => {
    const events: string[] = [];
    const { life } = lifecycle();
    let bind!: (v: string) => void;
    const late = life.open('late', new Promise<string>((resolve) => (bind = resolve)), (v) => void events.push(`close ${v}`));
    await life.close();
    bind('late');
    await expect(late).rejects.toBeInstanceOf(LifecycleClosedError);
    expect(events).toEqual(['close late']);
  });
});
