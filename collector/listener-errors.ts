/** Errors of the flow listeners that are the operator's to fix; apart, so the CLI can name them without loading the collector. */

/** A configuration the listeners cannot work with. */
export class ListenerConfigError extends Error {
  override readonly name = 'ListenerConfigError';
  constructor(
    message: string,
    readonly listen: string,
  ) {
    super(message);
  }
}

/** A socket that could not be bound. */
export class ListenerBindError extends Error {
  override readonly name = 'ListenerBindError';
  constructor(
    message: string,
    readonly listen: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
