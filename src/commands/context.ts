/** What every CLI command gets: configuration from the global flags, and output. */
import type { Command } from 'commander';
import type { Config } from '../config.js';

/** Output channels and configuration loading, injected so tests can drive commands. */
export interface CliContext {
  /** Configuration from `--config`/`--data-dir` (accepted before or after the subcommand), file and environment. */
  config(cmd: Command, overrides?: Record<string, unknown>): Promise<Config>;
  /**
   * Called before a command may open a TLS connection that its configuration's database URLs do
   * not show (`serve`, `status --url`): makes sure the process trusts what NODE_EXTRA_CA_CERTS
   * names, which may mean running the command again in a new process (src/extra-ca.ts). `config`
   * does the same when the configuration names a database reached over TLS.
   */
  beforeTls(): Promise<void>;
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
    async config(cmd, overrides) {
      const opts = cmd.optsWithGlobals<{ config?: string; dataDir?: string }>();
      // Loaded when a command runs (--help needs none); the schema library, a third of the CLI's
      // start, is loaded only when the configuration is not found validated in the cache.
      const { defaultConfigCacheDir, loadConfigCached } = await import('../config-cache.js');
      const sources = { file: opts.config, dataDir: opts.dataDir, overrides, env: process.env };
      return loadConfigCached(sources, defaultConfigCacheDir(process.env));
    },
    // Node loaded what NODE_EXTRA_CA_CERTS names at the start; cli.ts wraps this context when
    // bin/netsvc deferred it (src/extra-ca.ts).
    beforeTls: async () => undefined,
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    // The one read of process.env outside config.ts: a command's own variables (quota's --by default).
    env: process.env,
  };
}

/** Adds the global flags to a command, so they work after the subcommand too. */
export function withGlobalOptions(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'configuration file (default: ./netsvc.config.json when present)')
    .option('-d, --data-dir <dir>', 'data directory (overrides the configuration)');
}
