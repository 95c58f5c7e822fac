/**
 * The logger every component takes: the part of pino's Logger they call.
 * src/log.ts builds the pino logger that fits it; tests pass a recorder.
 */

/** Structured log lines: an object of fields, then the message. */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
