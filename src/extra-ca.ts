/**
 * NODE_EXTRA_CA_CERTS, loaded only by the commands that may make a TLS connection (issue 19).
 *
 * Node 20 reads and parses the file that variable names at the start of every process (40–80 ms
 * for a system bundle), and a process cannot load it later. bin/netsvc therefore starts every
 * command but `serve` without it, handing the file over as `_NETSVC_EXTRA_CA_CERTS`. At the CLI's
 * start, `deferredExtraCa` puts the variable back in the environment, so that the command, and any
 * process it starts, sees the environment as the user set it; and it gives the command a context
 * that, before a TLS connection could be made, runs the same command again in a Node process
 * started with the variable, which loads the certificates as Node always did. netsvc makes TLS
 * connections only to MariaDB/PostgreSQL servers whose URL (or PGSSLMODE) asks for TLS, in
 * `status --url` and in `serve`: the context's `config` checks the first once the configuration is
 * loaded, and the other two call its `beforeTls`.
 *
 * No state of its own: tools/bundle-cli.mjs copies it into dist/src/cli.js (one module less to load
 * at every start).
 */
import { readFileSync } from 'node:fs';
import type { CliContext } from './commands/context.js';

/** The variable bin/netsvc moves NODE_EXTRA_CA_CERTS to (not `NETSVC_*`: the configuration reads those). */
export const DEFERRED_EXTRA_CA_VARIABLE = '_NETSVC_EXTRA_CA_CERTS';

/**
 * Called first at the CLI's start with the process's context. Without a deferred
 * NODE_EXTRA_CA_CERTS, answers `ctx` as it is. Else puts the variable back in `env` (and removes
 * the deferred one) and answers `ctx` with a `config` and a `beforeTls` that run the command again
 * with the certificates loaded when it may connect over TLS.
 */
export function deferredExtraCa(ctx: CliContext, env: NodeJS.ProcessEnv = process.env): CliContext {
  const file = env[DEFERRED_EXTRA_CA_VARIABLE];
  if (file === undefined) return ctx;
  delete env[DEFERRED_EXTRA_CA_VARIABLE];
  if (file === '') return ctx;
  env.NODE_EXTRA_CA_CERTS = file;
  return {
    ...ctx,
    async config(cmd, overrides) {
      const config = await ctx.config(cmd, overrides);
      if (configMayUseTls(config, env)) await runAgainWithExtraCa(env);
      return config;
    },
    beforeTls: () => runAgainWithExtraCa(env),
  };
}

/**
 * Whether a client for this database URL may open a TLS connection, as mysql2 (`uri`) and pg
 * (`connectionString`, then PGSSLMODE) read it; in doubt (a URL that does not parse, another
 * scheme), yes: answering yes only costs a second start.
 */
export function databaseUrlMayUseTls(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (url.startsWith('sqlite:')) return false;
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return true;
  }
  if (url.startsWith('mysql://')) {
    // mysql2 reads each query value as JSON when it parses, else as a string, and uses TLS when
    // `ssl` is truthy (an options object or a profile name); the first `ssl` is the one it takes.
    const ssl = params.get('ssl');
    if (ssl === null) return false;
    try {
      return Boolean(JSON.parse(ssl));
    } catch {
      return ssl !== '';
    }
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    // pg-connection-string: the last value of a key wins; sslmode=disable turns TLS off whatever
    // else is given, any other sslmode or a certificate file turns it on, ssl=0 (or empty) off and
    // any other ssl on (also `ssl=false`, a non-empty string to pg); without any, pg takes PGSSLMODE.
    const last = (key: string): string | undefined => params.getAll(key).at(-1);
    const mode = last('sslmode');
    if (mode === 'disable') return false;
    if (mode || last('sslcert') || last('sslkey') || last('sslrootcert')) return true;
    const ssl = last('ssl');
    if (ssl !== undefined) return ssl !== '0' && ssl !== '';
    if (last('sslnegotiation') === 'direct') return true;
    return env.PGSSLMODE !== undefined && env.PGSSLMODE !== '' && env.PGSSLMODE !== 'disable';
  }
  return true;
}

/** Whether any database of any entity of the configuration may be reached over TLS. */
export function configMayUseTls(
  config: { entities: Readonly<Record<string, { radius?: string; syslog?: string }>> },
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return Object.values(config.entities).some((e) =>
    [e.radius, e.syslog].some((url) => url !== undefined && databaseUrlMayUseTls(url, env)),
  );
}

/** Signals passed on to the new process (SIGUSR1 is Node's own: it opens the inspector). */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGHUP', 'SIGUSR2'] as const;

/**
 * Whether this process is in the foreground process group of its terminal: then the keyboard's
 * SIGINT (Ctrl-C) and SIGQUIT (Ctrl-\) reach the new process too, which is in the same group, and
 * passing them on would deliver them twice (`serve` and `replay` read a second Ctrl-C as "stop at
 * once"). Linux's /proc tells; elsewhere, no.
 */
function inForegroundOfTerminal(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const [, , pgrp, , ttyNr, tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ttyNr !== '0' && pgrp === tpgid;
  } catch {
    return false;
  }
}

/**
 * Runs the same command again (same Node, flags, script and arguments; `env`, in which
 * NODE_EXTRA_CA_CERTS is set; stdin, stdout and stderr shared) in a Node process, which loads the
 * certificates at its start, passes signals on to it, and ends as it ends (its exit code, or the
 * signal that ended it). The promise then never settles, so nothing of this run's command goes
 * on; it fails only when the new process cannot be started.
 */
async function runAgainWithExtraCa(env: NodeJS.ProcessEnv): Promise<never> {
  const [{ spawn }, { constants }] = await Promise.all([import('node:child_process'), import('node:os')]);
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    argv0: process.argv0,
    stdio: 'inherit',
    env,
  });
  const forward = (signal: NodeJS.Signals): void => {
    if ((signal === 'SIGINT' || signal === 'SIGQUIT') && inForegroundOfTerminal()) return;
    child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  return new Promise<never>((_, fail) => {
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      if (signal === null) process.exit(code ?? 1);
      // Ended by a signal: end the same way (Node's default action, now that nothing listens),
      // or, for a signal that would not end this process, with the shell's code for it.
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(128 + constants.signals[signal]), 100);
    });
  });
}
