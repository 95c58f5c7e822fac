import type { FlowSink } from '../../common/flow-sink.js';

/** The `faultInjection` test hook: `fail(step)` throws for the first N calls of the named step. */
export class FaultHook {
  private left: number;
  private readonly step: string | undefined;
  constructor(spec: string | undefined) {
    const m = /^(expire|flush):(\d+)$/.exec(spec ?? '');
    this.step = m?.[1];
    this.left = m ? Number(m[2]) : 0;
  }
  fail(step: 'expire' | 'flush'): void {
    if (this.step === step && this.left > 0) {
      this.left--;
      throw new Error(`injected ${step} failure`);
    }
  }
  /** `sink`, failing its first N writes when the hook says `flush:N`. */
  wrapSink(sink: FlowSink): FlowSink {
    if (this.step !== 'flush') return sink;
    return {
      write: (source, batch) => {
        this.fail('flush');
        return sink.write(source, batch);
      },
    };
  }
}
