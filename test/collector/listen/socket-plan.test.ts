import { describe, expect, it } from 'vitest';
import { SummarySink } from '../../../common/flow-sink.js';
import { ListenerConfigError } from '../../../collector/listen/listener-errors.js';
import { createThreadedFlowListeners } from '../../../collector/listen/threaded-listener.js';
import { createFlowListeners } from '../../../collector/listen/udp-listener.js';

describe('flow listener configuration', () => {
  it('rejects setups it cannot serve before binding anything', () => {
    const sink = new SummarySink();
    expect(() => createFlowListeners({ a: { listen: '127.0.0.1:2999' }, b: { listen: '127.0.0.1:2999' } }, { sink })).toThrow(
      ListenerConfigError,
    );
    expect(() =>
      createFlowListeners(
        { a: { listen: '127.0.0.1:2999', exporters: ['10.0.0.1'] }, b: { listen: '127.0.0.1:2999', exporters: ['10.0.0.1'] } },
        { sink },
      ),
    ).toThrow(/claimed by both/);
    expect(() => createFlowListeners({ a: { listen: '127.0.0.1:2999', exporters: ['router-1'] } }, { sink })).toThrow(
      ListenerConfigError,
    );
    expect(() => createFlowListeners({ a: { listen: 'nonsense' } }, { sink })).toThrow(ListenerConfigError);
    // Two sources on port 0 each get a port of their own.
    expect(
      createFlowListeners({ a: { listen: '127.0.0.1:0' }, b: { listen: '127.0.0.1:0' } }, { sink }).socketStats(),
    ).toHaveLength(2);
  });

  it('the worker-thread listeners reject the same setups at start', async () => {
    const l = createThreadedFlowListeners(
      { a: { listen: '127.0.0.1:2999' }, b: { listen: '127.0.0.1:2999' } },
      { sink: new SummarySink() },
    );
    await expect(l.start()).rejects.toBeInstanceOf(ListenerConfigError);
  });
});
