/** `netsvc import`'s registration; the work is in import-run.ts, loaded when the command runs. */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';
import type { ImportFlags } from './import-run.js';

/** Registers `import`. */
export function registerImportCommand(program: Command, ctx: CliContext): void {
  withGlobalOptions(program.command('import'))
    .description('decode NetFlow/IPFIX export datagrams from pcap/pcapng files, as if received live at the record times')
    .argument('<pcap...>', 'capture files (pcap or pcapng; Ethernet, Linux cooked, raw IP)')
    .option('--port <port>', 'only datagrams sent to this UDP port (default: every UDP datagram)')
    .option('--source <name>', 'flow source to store the flows under', 'netflow')
    .option('--no-store', 'only decode and summarise; write no capture files')
    .option('--json', 'print the summary as JSON')
    .action(async (files: string[], opts: ImportFlags, cmd: Command) => {
      const { importAction } = await import('./import-run.js');
      await importAction(ctx, files, opts, cmd);
    });
}
