/** `netsvc replay`'s registration; the work is in replay-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { ReplayFlags } from './replay-run.js';

/** Registers `replay`. */
export function registerReplayCommand(program: Command, ctx: CliContext): void {
  withGlobalOptions(program.command('replay'))
    .description('send the UDP payloads of pcap/pcapng files, in order, to one address you name (a test harness for collectors)')
    .argument('<pcap...>', 'capture files of export datagrams')
    .requiredOption('--to <ip:port>', 'destination, an address literal: 127.0.0.1:2055, [::1]:2055')
    .option('--port <port>', 'only datagrams that were sent to this UDP port in the capture')
    .option('--rate <pps>', 'datagrams per second (implies --timing fixed)')
    .option('--loop <n>', 'send the whole set n times', '1')
    .option('--timing <mode>', 'original (capture timing, the default), fixed (--rate) or max (as fast as possible)')
    .option('--speed <x>', 'with original timing: play x times faster', '1')
    .option('--json', 'print the result as JSON')
    .action(async (files: string[], opts: ReplayFlags, cmd: Command) => {
      const { replayAction } = await import('./replay-run.js');
      await replayAction(ctx, files, opts, cmd);
    });
}
