/** `netsvc serve`: the long-running service. */
import type { Command } from 'commander';
import { UsageError, withGlobalOptions, type CliContext } from './context.js';

function parsePort(port: string | undefined): number | undefined {
  if (port === undefined) return undefined;
  const n = Number(port);
  if (!/^\d+$/.test(port) || n > 65535) throw new UsageError(`--port must be an integer 0-65535, got '${port}'`);
  return n;
}

/** Signals that stop `serve` after writing what it holds. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const;

/** Registers `serve`. */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  withGlobalOptions(program.command('serve'))
    .description('run the HTTP API and the collectors until SIGINT, SIGTERM or SIGQUIT; SIGHUP writes what is held and goes on')
    .option('--host <host>', 'HTTP listen address (default from config: 127.0.0.1)')
    .option('--port <port>', 'HTTP listen port (default from config: 8080)')
    .action(async (opts: { host?: string; port?: string }, cmd: Command) => {
      // A long-running service, whose databases may be reached over TLS whatever its configuration
      // says now: it trusts what NODE_EXTRA_CA_CERTS names (bin/netsvc does not defer it for serve).
      await ctx.beforeTls();
      const config = await ctx.config(cmd, { 'http.host': opts.host, 'http.port': parsePort(opts.port) });
      const { createLogger } = await import('../log.js');
      const logger = createLogger(config.log.level);
      // Loaded here, not at the top: every other command starts without the service's modules.
      const { startService } = await import('../main.js');
      // The stop signals are taken before the service starts, so that none falls between its
      // "listening" line and the handlers (Node's default would end the process unwritten): one
      // received while starting stops the service as soon as it has started.
      let service: Awaited<ReturnType<typeof startService>> | undefined = undefined;
      let stopping = false;
      let stopped: () => void = () => {};
      const done = new Promise<void>((resolve) => (stopped = resolve));
      let closing = false;
      const close = (): void => {
        if (closing) return;
        closing = true;
        service!.close().then(stopped, (err: unknown) => {
          logger.error({ err }, 'error while shutting down');
          stopped();
        });
      };
      const stop = (signal: string): void => {
        if (stopping) {
          // A second signal while stopping (a shutdown stuck on a hung database): leave at once.
          if (signal !== 'fatal') {
            logger.warn({ signal }, 'second signal while stopping: exiting without waiting');
            process.exit(1);
          }
          return;
        }
        stopping = true;
        logger.info({ signal }, service ? 'shutting down' : 'shutting down once started');
        if (service) close();
      };
      // Every catchable signal whose default is to end the process stops it cleanly (what was
      // received is written first); a second one while stopping exits at once.
      for (const signal of STOP_SIGNALS) process.on(signal, () => stop(signal));
      // A hang-up (terminal closed, logrotate's usual signal) ends nothing: what the receivers
      // hold is written, so a file copied or rotated now has every flow up to now. netsvc
      // logs to stdout and keeps no log file of its own to reopen.
      process.on('SIGHUP', () => {
        if (!service) return;
        const started = Date.now();
        service.flush().then(
          () => logger.info({ signal: 'SIGHUP', ms: Date.now() - started }, 'received data written; still running'),
          (err: unknown) => logger.error({ err, signal: 'SIGHUP' }, 'writing received data failed'),
        );
      });
      service = await startService(config, { logger, now: Date.now });
      // As nfcapd or GoFlow2 would: rather than serve on without receiving flows, stop (what
      // was received is written; the open hour goes on at the next start) with EX_SOFTWARE,
      // for the supervisor to restart.
      service.onFatal((err) => {
        logger.fatal({ err }, 'flow ingest died; netsvc stops so that its supervisor can restart it');
        process.exitCode = 70;
        stop('fatal');
      });
      if (stopping) close();
      await done;
    });
}
