/**
 * Errors the commands throw for the user to read, kept apart from the commands' work so that
 * the CLI's error handling (cli.ts) knows them without loading that work.
 */

/** Damaged capture files were met (`dump`, `top`): the answer leaves them out; exit code 1. */
export class DumpError extends Error {
  override readonly name = 'DumpError';
}

/** The instance cannot be reached or did not answer with metrics (`status`); exit code 1. */
export class StatusError extends Error {
  override readonly name = 'StatusError';
}
