/** The error `netsvc radius install` stops with, in a module of its own: the CLI maps it without loading the install. */

/** Why the install stopped: not a raddb directory, a default site it cannot edit, or a configuration FreeRADIUS rejects. */
export class RadiusInstallError extends Error {
  override readonly name = 'RadiusInstallError';

  constructor(
    readonly code: 'raddb' | 'site' | 'check',
    message: string,
  ) {
    super(message);
  }
}
