#!/usr/bin/env node
/**
 * `netsvc`: the command-line entry point. Every command takes the global
 * `--config FILE` and `--data-dir DIR`, before or after the subcommand.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './commands/admin.js';
import { processContext, withGlobalOptions, type CliContext } from './commands/context.js';
import { registerDbCommands } from './commands/db.js';
import { registerDbIndexSyslogCommand } from './commands/db-index-syslog.js';
import { registerDumpCommand } from './commands/dump.js';
import { registerDbIndexRadiusCommand } from './commands/db-radius.js';
import { registerProfileCommands } from './commands/profile.js';
import { registerQuotaCommands } from './commands/quota.js';
import { registerRadiusCommands } from './commands/radius.js';
import { registerImportCommand } from './commands/import.js';
import { registerKpiCommands } from './commands/kpi.js';
import { registerReplayCommand } from './commands/replay.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTopCommand } from './commands/top.js';
import { deferredExtraCa } from './extra-ca.js';

/** Builds the command tree; tests drive it with their own context. */
export function buildProgram(ctx: CliContext): Command {
  const program = withGlobalOptions(new Command('netsvc'))
    .description('NetFlow/IPFIX collector, syslog viewer and FreeRADIUS hotspot manager behind one REST API')
    .version('0.1.0')
    .configureOutput({ writeOut: (s) => ctx.out(s), writeErr: (s) => ctx.err(s) })
    .showHelpAfterError()
    .exitOverride();
  registerServeCommand(program, ctx);
  registerAdminCommands(program, ctx);
  const db = registerDbCommands(program, ctx);
  registerDbIndexSyslogCommand(db, ctx);
  registerDbIndexRadiusCommand(db, ctx);
  registerProfileCommands(program, ctx);
  registerQuotaCommands(program, ctx);
  registerRadiusCommands(program, ctx);
  registerImportCommand(program, ctx);
  registerReplayCommand(program, ctx);
  registerStatusCommand(program, ctx);
  registerDumpCommand(program, ctx);
  registerTopCommand(program, ctx);
  registerKpiCommands(program, ctx);
  program.commands.forEach(function exitOverrideAll(cmd: Command) {
    cmd.exitOverride();
    cmd.commands.forEach(exitOverrideAll);
  });
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    // Help and version exit 0; every other commander error is a usage mistake.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    // The error classes are loaded only when there is an error to match (--help needs none).
    const { userMessage } = await import('./user-errors.js');
    const user = userMessage(err);
    if (user) {
      ctx.err(`netsvc: ${user.message}`);
      return user.code;
    }
    throw err;
  }
}

const invokedDirectly = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  // `netsvc dump … | head` closes the pipe early: that ends the output, it is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  // Before the command runs: NODE_EXTRA_CA_CERTS as the user set it, when bin/netsvc deferred it (src/extra-ca.ts).
  runCli(process.argv.slice(2), deferredExtraCa(processContext())).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
