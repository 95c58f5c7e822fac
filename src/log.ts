/** Structured logging (pino): one JSON line per event, never a secret or token. */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Field names whose values are replaced before a line is written, wherever they appear. */
const REDACT = [
  'secret',
  'password',
  'access_token',
  'authorization',
  '*.secret',
  '*.password',
  '*.access_token',
  '*.authorization',
  'req.headers.authorization',
  // Driver errors may carry statement text with bound values in it.
  'err.sql',
  '*.sql',
];

/** Builds the service logger; tests pass a destination to read what was logged. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { svc: 'netsvc' },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
