/**
 * The in-thread flow listeners: one SocketGroup (drain-loop.ts) per socket of
 * the plan (socket-plan.ts), a SourceIngest per flow source, template expiry
 * and saving, the start (warm-up, binding, or the socket thread through its
 * supervisor) and the close. udp-listener.ts builds them.
 */
import { warmUpDecoding } from '../decode/warm-up.js';
import { SourceIngest } from '../decode/ingest.js';
import type { FlowDecoder } from '../decode/decoder.js';
import { LogThrottle } from '../../common/log-throttle.js';
import type { Log } from '../../common/log.js';
import { SocketGroup, type DrainOwner } from './drain-loop.js';
import { FaultHook } from './fault-hook.js';
import type { FlowListeners, SocketStats, SourceStats } from './flow-listeners.js';
import type { FlowSourceSettings } from './flow-source-config.js';
import { flowSourcesWithDefaults, withFlowSourceDefaults } from './flow-source-defaults.js';
import { dropsOf, readUdpDrops } from './kernel-drops.js';
import { bindFailureMessage, ListenerBindError } from './listener-errors.js';
import type { FlowListenerDeps, FlowListenerOptions } from './listener-options.js';
import { WARM_UP_BUDGET_MS } from './loopback-warm-up.js';
import { parseListen, planSockets } from './socket-plan.js';
import { SocketThreadCounters, type SocketThreadInput } from './socket-thread-handle.js';
import { SocketThreadSupervisor } from './socket-thread-supervisor.js';
import { openSourceDecoder } from './source-decoder.js';
import { newSourceState, type SourceState } from './source-state.js';
import { currentThreadId } from './thread-id.js';
import { bindFlowSocket, formatHostPort, setBufferSize } from './udp-socket.js';

/** The warm-up over loopback (listener-warm-up.ts), given to the listeners so that it can build listeners of its own. */
export type LoopbackWarmUp = (
  opts: FlowListenerOptions,
  now: () => number,
) => Promise<{ port: number; sent: number; received: number; flows: number }>;

/** The flow listeners that decode on this thread (createFlowListeners); their sockets read here or by a socket thread. */
export class Listeners implements FlowListeners, DrainOwner {
  readonly sources: SourceState[] = [];
  readonly groups: SocketGroup[] = [];
  /** With a socket thread and warm-up: decodes the warm-up's datagrams and throws them away. */
  readonly warmState: SourceState | undefined;
  /** The socket thread's counters (received, queue drops, unclaimed), when there is one. */
  private readonly counters: SocketThreadCounters | undefined;
  /** Starts the socket thread, and again when it dies. */
  private readonly supervisor: SocketThreadSupervisor;
  readonly now: () => number;
  private readonly logger: Log | undefined;
  private readonly logThrottle: LogThrottle;
  private lastExpire: number;
  private lastSave: number;
  private timer: NodeJS.Timeout | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  private started = false;
  /** The running or finished start, for a start() or close() that comes meanwhile. */
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private readonly fault: FaultHook;

  constructor(
    settings: Readonly<Record<string, FlowSourceSettings>>,
    deps: FlowListenerDeps,
    readonly opts: FlowListenerOptions,
    /** The warm-up over loopback when the sockets are read on this thread (listener-warm-up.ts). */
    private readonly loopbackWarmUp: LoopbackWarmUp,
  ) {
    this.now = deps.now ?? Date.now;
    this.logger = deps.logger;
    this.lastExpire = this.now();
    this.lastSave = this.now();
    this.fault = new FaultHook(opts.faultInjection);
    this.logThrottle = new LogThrottle(opts.logEveryMs, this.now);
    const sink = this.fault.wrapSink(deps.sink);
    const configs = flowSourcesWithDefaults(settings);
    const plan = planSockets(configs);
    plan.names.forEach((name) => {
      const cfg = configs[name]!;
      let decoder: FlowDecoder;
      let save: (all?: boolean) => void = () => {};
      let changed: () => boolean = () => false;
      if (deps.createDecoder) decoder = deps.createDecoder(name, cfg);
      else ({ decoder, save, changed } = openSourceDecoder(name, cfg, opts, this.now, this.logger));
      this.sources.push(
        newSourceState(name, cfg, new SourceIngest({ source: name, sink, decoder, batchRows: opts.batchRows }), save, changed),
      );
    });
    if (opts.socketThread) {
      this.counters = SocketThreadCounters.allocate(this.sources.length, plan.sockets.length);
      if (opts.warmUp)
        this.warmState = newSourceState(
          'warm-up',
          withFlowSourceDefaults({ listen: '127.0.0.1:0' }),
          new SourceIngest({ source: 'warm-up', sink: { write() {} }, batchRows: opts.batchRows }),
        );
    }
    for (const p of plan.sockets) {
      const group = new SocketGroup(p.listen, p.sourceIdx, p.requestedBuffer, this, opts);
      group.claims = p.claims;
      group.defaultSource = p.defaultSource;
      this.groups.push(group);
    }
    this.supervisor = new SocketThreadSupervisor(opts.restartDelayMs, this.logger, {
      adopt: (handle) =>
        handle.sockets.forEach((b, i) => {
          const g = this.groups[i]!;
          g.bound = { address: b.address, port: b.port };
          g.granted = setBufferSize(b.granted);
          g.reader = b.reader;
        }),
      lost: () => {
        for (const g of this.groups) g.reader = 'none';
      },
      closing: () => this.closing !== undefined,
    });
  }

  rateLog(level: 'warn' | 'error', key: string, obj: object, msg: string): void {
    if (!this.logger || !this.logThrottle.allow(key)) return;
    this.logger[level](obj, msg);
  }

  maybeExpire(): void {
    const t = this.now();
    if (t - this.lastSave >= this.opts.templateSaveEveryMs) {
      this.lastSave = t;
      this.saveTemplates();
    }
    if (t - this.lastExpire < this.opts.expireEveryMs) return;
    this.lastExpire = t;
    for (const s of this.sources) {
      try {
        this.fault.fail('expire');
        s.ingest.decoder.expire(t);
      } catch (err) {
        s.ingestErrors++;
        this.rateLog(
          'error',
          `expire:${s.name}`,
          { source: s.name, step: 'expire', err, ingestErrors: s.ingestErrors },
          'flow template expiry failed; counted, ingest goes on',
        );
      }
    }
  }

  /** Schedules a save of the sources whose templates changed, unless one is already due. */
  saveChangedSoon(): void {
    if (this.saveTimer || !this.started) return;
    if (!this.sources.some((s) => s.changed())) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.saveTemplates(true);
    }, this.opts.templateSaveDelayMs);
  }

  /** Saves every source's templates, or with `onlyChanged` those that changed (errors are logged; the next save retries). */
  saveTemplates(onlyChanged = false): void {
    for (const s of this.sources) {
      if (onlyChanged && !s.changed()) continue;
      try {
        // The periodic and the final save write every exporter, so re-announcement times are kept too.
        s.save(!onlyChanged);
      } catch (err) {
        s.ingestErrors++;
        this.rateLog(
          'error',
          `save:${s.name}`,
          { source: s.name, step: 'save', err, ingestErrors: s.ingestErrors },
          'flow templates could not be saved',
        );
      }
    }
  }

  start(): Promise<void> {
    if (this.started) return this.starting ?? Promise.resolve();
    this.started = true;
    this.starting = this.bindAll();
    return this.starting;
  }

  private async bindAll(): Promise<void> {
    try {
      // The socket thread is started first: it loads its modules (a few hundred ms) on the other
      // core while this thread warms its decoders up, and warms up the receive path itself
      // through the rings, which this thread reads once its own warm-up is done.
      const socketThread = this.opts.socketThread ? this.startSocketThread() : undefined;
      if (this.opts.warmUp) {
        const t0 = performance.now();
        warmUpDecoding(this.now());
        const w = socketThread ? undefined : await this.loopbackWarmUp(this.opts, this.now);
        this.logger?.info({ ...w, ms: Math.round(performance.now() - t0) }, 'flow decode path warmed up');
      }
      if (socketThread) await socketThread;
      else for (const g of this.groups) await this.bind(g);
    } catch (err) {
      await this.closeSockets();
      // Nothing more comes to decode: the rings are no longer watched.
      for (const g of this.groups) g.stopTimer();
      this.started = false;
      this.starting = undefined;
      throw err;
    }
    this.timer = setInterval(() => {
      this.maybeExpire();
      // Templates expired here are saved as removed soon, as a withdrawal is.
      this.saveChangedSoon();
    }, this.opts.expireEveryMs);
    this.timer.unref();
  }

  /** Starts the socket thread on the rings (it warms up, then binds every socket) and decodes from them. */
  private async startSocketThread(): Promise<void> {
    const t0 = performance.now();
    // Decoding starts first: the warm-up's datagrams come through the first ring.
    for (const g of this.groups) g.watch();
    // The socket thread binds once the warm-up it sent through the first ring is decoded.
    const warmed = async (w: { sent: number; received: number }): Promise<void> => {
      await this.idle();
      this.warmState?.ingest.batch.clear();
      // The warm-up is no backlog of real traffic.
      for (const g of this.groups) g.ring!.resetHighWater();
      const flows = this.warmState?.ingest.decoder.counters.snapshot().total.flows ?? 0;
      this.logger?.info({ ...w, flows, ms: Math.round(performance.now() - t0) }, 'flow socket thread warmed up');
    };
    const input: SocketThreadInput = {
      sockets: this.groups.map((g) => ({
        listen: g.listen,
        ...parseListen(g.listen),
        requestedBuffer: g.requestedBuffer,
        claims: [...g.claims],
        defaultSource: g.defaultSource,
        ring: g.ring!.memory,
      })),
      sourceNames: this.sources.map((s) => s.name),
      counters: this.counters!.buffer,
      warmUp: this.opts.warmUp,
      warmUpBudgetMs: WARM_UP_BUDGET_MS,
      logEveryMs: this.opts.logEveryMs,
      batchReceive: this.opts.batchReceive,
      faultInjection: this.opts.faultInjection?.startsWith('socket-crash:')
        ? `crash-after:${this.opts.faultInjection.slice('socket-crash:'.length)}`
        : undefined,
    };
    const handle = await this.supervisor.start(input, warmed);
    handle.sockets.forEach((_b, i) => this.boundLog(this.groups[i]!));
  }

  onFailure(fn: (err: Error) => void): void {
    this.supervisor.onFailure(fn);
  }

  private boundLog(g: SocketGroup): void {
    const names = g.sourceIdx.map((i) => this.sources[i]!.name);
    const granted = g.granted;
    if (granted < g.requestedBuffer) {
      this.logger?.warn(
        { listen: g.listen, requested: g.requestedBuffer, granted, fix: `sysctl -w net.core.rmem_max=${g.requestedBuffer}` },
        `kernel granted a smaller UDP receive buffer than configured (${granted} of ${g.requestedBuffer} bytes): raise net.core.rmem_max to ${g.requestedBuffer}`,
      );
    }
    this.logger?.info(
      { sources: names, address: g.bound!.address, port: g.bound!.port, receiveBuffer: g.granted, reader: g.reader },
      'flow listener started',
    );
  }

  private bind(g: SocketGroup): Promise<void> {
    const { host, port, type } = parseListen(g.listen);
    return bindFlowSocket(
      { type, host, port, recvBufferSize: g.requestedBuffer },
      (msg, rinfo) => g.onMessage(msg, rinfo),
      (err) => this.logger?.error({ err, listen: g.listen }, 'flow socket error'),
    ).then(
      (socket) => {
        g.socket = socket;
        g.bound = socket.address();
        g.granted = setBufferSize(socket.getRecvBufferSize());
        this.boundLog(g);
      },
      (err: Error) => {
        const names = [...new Set([g.defaultSource, ...g.claims.values()])]
          .filter((n) => n >= 0)
          .map((n) => this.sources[n]!.name);
        throw new ListenerBindError(bindFailureMessage(g.listen, names, err), g.listen, { cause: err });
      },
    );
  }

  private async closeSockets(): Promise<void> {
    await this.supervisor.stop();
    await Promise.all(
      this.groups.map(
        (g) =>
          new Promise<void>((resolve) => {
            const s = g.socket;
            g.socket = undefined;
            if (!s) return resolve();
            s.close(() => resolve());
          }),
      ),
    );
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      // A close during start (the warm-up takes up to a second) waits for the sockets it binds.
      await this.starting?.catch(() => undefined);
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      await this.closeSockets();
      if (this.saveTimer) clearTimeout(this.saveTimer);
      this.saveTimer = undefined;
      await this.idle();
      for (const g of this.groups) g.stopTimer();
      this.saveTemplates();
      this.started = false;
    })();
    return this.closing;
  }

  async idle(): Promise<void> {
    await Promise.all(this.groups.map((g) => g.idle()));
  }

  addresses(): Record<string, { address: string; port: number }> {
    const out: Record<string, { address: string; port: number }> = {};
    for (const g of this.groups) {
      if (!g.bound) continue;
      for (const i of g.sourceIdx) out[this.sources[i]!.name] = { address: g.bound.address, port: g.bound.port };
    }
    return out;
  }

  threadId(): number | undefined {
    return this.opts.socketThread ? this.supervisor.thread?.tid : currentThreadId();
  }

  sourceStats(): SourceStats[] {
    const bound = this.addresses();
    const c = this.counters;
    return this.sources.map((s, i) => {
      const snap = s.ingest.decoder.counters.snapshot();
      const b = bound[s.name];
      return {
        source: s.name,
        listen: b ? formatHostPort(b.address, b.port) : s.config.listen,
        received: c ? c.received(i) : s.received,
        queueDrops: c ? c.queueDrops(i) : s.queueDrops,
        sinkErrors: s.sinkErrors,
        sinkLostFlows: s.sinkLostFlows,
        decoderErrors: s.ingest.decoderErrors,
        ingestErrors: s.ingestErrors,
        total: snap.total,
        exporters: snap.exporters,
      };
    });
  }

  socketStats(): SocketStats[] {
    const drops = readUdpDrops();
    return this.groups.map((g, i) => ({
      listen: g.bound ? formatHostPort(g.bound.address, g.bound.port) : g.listen,
      sources: g.sourceIdx.map((i) => this.sources[i]!.name),
      receiveBufferRequested: g.requestedBuffer,
      receiveBufferGranted: g.granted,
      kernelDrops: g.bound ? dropsOf(drops, g.bound.address, g.bound.port) : undefined,
      unclaimed: this.counters ? this.counters.unclaimed(i) : g.unclaimed,
      queueDepth: g.queue.count,
      queueHighWater: g.queue.highWater,
      reader: g.reader,
      readerRestarts: this.supervisor.restarts,
    }));
  }
}
