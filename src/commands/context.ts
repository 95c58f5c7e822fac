/** What every CLI command gets: configuration from the global flags, and output. */
import type { Command } from 'commander';
import { loadConfig, processEnvironment, type Config } from '../config.js';

/** Output channels and configuration loading, injected so tests can drive commands. */
export interface CliContext {
  /** Configuration from `--config`/`--data-dir` (accepted before or after the subcommand), file and environment. */
  config(cmd: Command, overrides?: Record<string, unknown>): Config;
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

/** A mistake in how a command was called; printed as one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The default context: real process streams and environment. */
export function processContext(): CliContext {
  return {
    config(cmd, overrides) {
      const opts = cmd.optsWithGlobals<{ config?: string; dataDir?: string }>();
      return loadConfig({ file: opts.config, dataDir: opts.dataDir, overrides });
    },
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    env: processEnvironment(),
  };
}

/** Adds the global flags to a command, so they work after the subcommand too. */
export function withGlobalOptions(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'configuration file (default: ./netsvc.config.json when present)')
    .option('-d, --data-dir <dir>', 'data directory (overrides the configuration)');
}
