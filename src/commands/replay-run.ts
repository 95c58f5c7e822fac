/** `netsvc replay <pcap…> --to IP:PORT`: send the export datagrams of captures over UDP. */
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readCapture } from '../../collector/pcap/pcap.js';
import {
  parseDestination,
  replayDatagrams,
  ReplayOptionError,
  type ReplayDatagram,
  type ReplayResult,
  type ReplayTiming,
} from '../../collector/pcap/replay.js';
import { UsageError, type CliContext } from './context.js';

/** Options of `runReplay`, as the command line gives them. */
export interface ReplayCommandOptions {
  to: string;
  port?: number;
  rate?: number;
  loop: number;
  timing: ReplayTiming;
  speed?: number;
  signal?: AbortSignal;
}

/** Reads the captures (datagrams to `port` only, when given) and sends them; returns what was sent. */
export async function runReplay(
  files: readonly string[],
  opts: ReplayCommandOptions,
): Promise<ReplayResult & { datagrams: number }> {
  const dest = parseDestination(opts.to);
  const datagrams: ReplayDatagram[] = [];
  for (const f of files) {
    const { datagrams: found } = readCapture(readFileSync(f));
    for (const d of found) if (opts.port === undefined || d.dstPort === opts.port) datagrams.push(d);
  }
  const result = await replayDatagrams(datagrams, {
    host: dest.host,
    port: dest.port,
    timing: opts.timing,
    rate: opts.rate,
    loops: opts.loop,
    speed: opts.speed,
    signal: opts.signal,
  });
  return { ...result, datagrams: datagrams.length };
}

function positive(name: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${text}'`);
  }
  return n;
}

/** The command-line flags of `replay`, as commander gives them. */
export interface ReplayFlags {
  to: string;
  port?: string;
  rate?: string;
  loop: string;
  timing?: string;
  speed: string;
  json?: boolean;
}

/** The action of `netsvc replay`. */
export async function replayAction(ctx: CliContext, files: string[], opts: ReplayFlags, cmd: Command): Promise<void> {
  await ctx.config(cmd); // validates --config/--data-dir like every command
  for (const f of files) if (!existsSync(f)) throw new UsageError(`no such file: ${f}`);
  const rate = positive('--rate', opts.rate, false);
  const timing = (opts.timing ?? (rate !== undefined ? 'fixed' : 'original')) as ReplayTiming;
  if (!['original', 'fixed', 'max'].includes(timing))
    throw new UsageError(`--timing must be original, fixed or max, got '${opts.timing}'`);
  if (timing === 'fixed' && rate === undefined) throw new UsageError('--timing fixed needs --rate');
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  try {
    const r = await runReplay(files, {
      to: opts.to,
      port: positive('--port', opts.port, true),
      rate,
      loop: positive('--loop', opts.loop, true) ?? 1,
      timing,
      speed: positive('--speed', opts.speed, false),
      signal: abort.signal,
    });
    const pps = r.elapsedMs > 0 ? Math.round((r.sent / r.elapsedMs) * 1000) : r.sent;
    if (opts.json) ctx.out(JSON.stringify({ to: opts.to, timing, ...r, pps }));
    else
      ctx.out(
        `sent ${r.sent} datagrams (${r.bytes} bytes) to ${opts.to} in ${(r.elapsedMs / 1000).toFixed(3)} s (${pps}/s), ${r.errors} errors`,
      );
  } catch (err) {
    if (err instanceof ReplayOptionError) throw new UsageError(err.message);
    throw err;
  } finally {
    process.off('SIGINT', stop);
  }
}
