/** `netsvc radius install`: netsvc's FreeRADIUS configuration into a raddb directory (docs/hotspot.md, section 3). */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';

/** Registers `radius install`. */
export function registerRadiusCommands(program: Command, ctx: CliContext): void {
  const radius = withGlobalOptions(program.command('radius')).description("FreeRADIUS's side of the hotspot area");
  withGlobalOptions(radius.command('install'))
    .description(
      "install netsvc's sql module (on the entity's RADIUS database), counters, policy and dictionary into FreeRADIUS, " +
        'edit the default site to use them, and check the result with freeradius -XC; running it again changes nothing',
    )
    .option('--raddb <dir>', 'FreeRADIUS configuration directory', '/etc/freeradius/3.0')
    .option('-e, --entity <name>', 'entity whose RADIUS database FreeRADIUS is to use (default: the only one, or default)')
    .option(
      '--database <url>',
      'database URL to use instead of an entity from the configuration (sqlite:, mysql://, postgres://)',
    )
    .action(async (opts: { raddb: string; entity?: string; database?: string }, cmd: Command) => {
      // Loaded here, not at the top: the CLI starts without the install's modules.
      const { runRadiusInstall } = await import('./radius-install.js');
      await runRadiusInstall(ctx, cmd, opts);
    });
}
