/**
 * `netsvc profile …`: hotspot profiles (FreeRADIUS groups) from the command
 * line. Attributes are written the way that lets a user's own value win:
 * reply items with `=`, check items with `+=`, and `Fall-Through = Yes` on
 * every profile so all attached profiles apply (docs/hotspot.md). `describe`
 * points out rows of profiles made elsewhere that break that rule. The work is
 * in profile-run.ts, loaded when a profile command runs.
 */
import type { Command } from 'commander';
import { withGlobalOptions, type CliContext } from './context.js';

/** Registers `profile list|add|describe|set|delete|unset`. */
export function registerProfileCommands(program: Command, ctx: CliContext): void {
  const profile = withGlobalOptions(program.command('profile')).description(
    'hotspot profiles (FreeRADIUS groups) and their attributes',
  );
  const entityOpt = (c: Command) =>
    withGlobalOptions(c).option('-e, --entity <name>', 'entity whose RADIUS database to use (default: the only one, or default)');

  entityOpt(profile.command('list'))
    .description(
      'list profiles: groups in radgroupcheck, radgroupreply, radusergroup or netsvc (the disabled-users group is hidden)',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { entity?: string; json?: boolean }, cmd: Command) =>
      (await import('./profile-run.js')).profileList(ctx, cmd, opts),
    );

  entityOpt(profile.command('add <name>'))
    .description("create a profile (or change its description); adds 'Fall-Through = Yes' so later profiles apply too")
    .option('--description <text>', 'what the profile is for')
    .action(async (name: string, opts: { entity?: string; description?: string }, cmd: Command) =>
      (await import('./profile-run.js')).profileAdd(ctx, cmd, name, opts),
    );

  entityOpt(profile.command('describe <name>'))
    .description("show a profile's attributes, members, and rows that keep users' own values from winning")
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { entity?: string; json?: boolean }, cmd: Command) =>
      (await import('./profile-run.js')).profileDescribe(ctx, cmd, name, opts),
    );

  entityOpt(profile.command('set <name> <attribute> <value>'))
    .description("set a catalogue attribute on a profile, in the catalogue's unit (see GET /hotspot/user-access)")
    .action(async (name: string, attribute: string, value: string, opts: { entity?: string }, cmd: Command) =>
      (await import('./profile-run.js')).profileSet(ctx, cmd, name, attribute, value, opts),
    );

  entityOpt(profile.command('delete <name>'))
    .description('delete a profile and its attributes (as DELETE /hotspot/profiles/{name}); refused while users are attached')
    .action(async (name: string, opts: { entity?: string }, cmd: Command) =>
      (await import('./profile-run.js')).profileDelete(ctx, cmd, name, opts),
    );

  entityOpt(profile.command('unset <name> <attribute>'))
    .description('remove an attribute from a profile')
    .action(async (name: string, attribute: string, opts: { entity?: string }, cmd: Command) =>
      (await import('./profile-run.js')).profileUnset(ctx, cmd, name, attribute, opts),
    );
}
