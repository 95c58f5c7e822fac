import { describe, expect, it } from 'vitest';
import { SummarySink } from '../../../common/flow-sink.js';
import { syntheticWorkloads } from '../../../collector/decode/synthetic.js';
import { DEFAULT_LISTENER_OPTIONS } from '../../../collector/listen/listener-options.js';
import { warmUpOverLoopback } from '../../../collector/listen/listener-warm-up.js';
import { createFlowListeners } from '../../../collector/listen/udp-listener.js';
import { portFree } from '../../helpers/net.js';

describe('flow listener warm-up over loopback', () => {
  /** True when nothing is bound to the UDP port on 127.0.0.1 (binding it works). */

  it('receives and decodes the synthetic datagrams on a throwaway socket, then closes it', async () => {
    const r = await warmUpOverLoopback(DEFAULT_LISTENER_OPTIONS, Date.now, 5000, 2);
    const perRound = syntheticWorkloads(Date.now()).reduce((n, w) => n + w.setup.length + w.datagrams.length, 0);
    expect(r.sent).toBe(perRound * 2);
    // Bursts of 32 with at most 64 in flight: well within even a default receive buffer.
    expect(r.received).toBe(r.sent);
    expect(r.flows).toBeGreaterThan(1000);
    expect(await portFree(r.port)).toBe(true);
  });

  it('a close() while the warm-up runs waits for it and leaves no socket open', async () => {
    const l = createFlowListeners({ netflow: { listen: '127.0.0.1:0' } }, { sink: new SummarySink() }, { warmUp: true });
    const started = l.start();
    await new Promise((r) => setTimeout(r, 5)); // inside the warm-up
    await l.close();
    await started;
    expect(await portFree(l.addresses().netflow!.port)).toBe(true);
  });
});
