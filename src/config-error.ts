/** The configuration error, apart from the schema so that the CLI can name it without loading zod. */

/** A configuration problem the user must fix; printed without a stack trace. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}
