import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ConnectionGate } from '../../src/connection-gate.js';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly address: string) {
    super();
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A gate whose turns the test runs by hand. */
function gate(perTurn: number, maxWaiting = 1000) {
  const admitted: FakeSocket[] = [];
  let pending: (() => void) | undefined;
  const g = new ConnectionGate<FakeSocket>((s) => admitted.push(s), { perTurn, maxWaiting }, (fn) => (pending = fn));
  const turn = (): FakeSocket[] => {
    const before = admitted.length;
    const fn = pending;
    pending = undefined;
    fn?.();
    return admitted.slice(before);
  };
  const offer = (address: string): FakeSocket => {
    const s = new FakeSocket(address);
    g.offer(s, address);
    return s;
  };
  return { g, admitted, turn, offer };
}

describe('ConnectionGate', () => {
  it('admits a lone connection at the next turn', () => {
    const { turn, offer } = gate(8);
    const s = offer('192.0.2.1');
    expect(turn()).toEqual([s]);
    expect(turn()).toEqual([]);
  });

  it('lets a new address in ahead of a flood of connections from a few others', () => {
    const { turn, offer } = gate(8);
    for (let i = 0; i < 300; i++) offer(`198.51.100.${i % 3}`);
    // The first turn takes one of each flooding address first, then more of them.
    const first = turn();
    expect(first).toHaveLength(8);
    expect(new Set(first.slice(0, 3).map((s) => s.address)).size).toBe(3);
    const honest = offer('192.0.2.7');
    // Each flooding address now has connections open: the honest one, with none, goes first.
    expect(turn()[0]).toBe(honest);
  });

  it('serves equals round robin, and an address whose connections closed gets its turn back', () => {
    const { turn, offer } = gate(1);
    const a1 = offer('a');
    offer('a');
    const b1 = offer('b');
    expect(turn()).toEqual([a1]);
    // a has one open, b none: b first.
    expect(turn()).toEqual([b1]);
    const c1 = offer('c');
    a1.destroy();
    // a (its first closed) and c are both at 0 open; a waited longer.
    expect(turn()[0]!.address).toBe('a');
    expect(turn()).toEqual([c1]);
  });

  it('admits at most perTurn connections a turn, and every one in the end', () => {
    const { turn, offer, admitted } = gate(8);
    for (let i = 0; i < 100; i++) offer(`203.0.113.${i % 10}`);
    let turns = 0;
    for (let got = turn(); got.length > 0; got = turn()) {
      expect(got.length).toBeLessThanOrEqual(8);
      turns++;
    }
    expect(turns).toBe(13);
    expect(admitted).toHaveLength(100);
  });

  it('closes and counts connections beyond maxWaiting, and every waiting one when closed', () => {
    const { g, offer, turn } = gate(8, 5);
    const waiting = Array.from({ length: 5 }, () => offer('a'));
    const refused = offer('b');
    expect(refused.destroyed).toBe(true);
    expect(g.stats()).toEqual({ waiting: 5, admittedTotal: 0, refusedTotal: 1 });
    g.close();
    expect(waiting.every((s) => s.destroyed)).toBe(true);
    expect(turn()).toEqual([]);
    expect(offer('c').destroyed).toBe(true);
  });
});
