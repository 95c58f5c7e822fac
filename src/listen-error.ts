/** The error `serve` gives when its HTTP port cannot be had, apart from the listener so that the CLI knows it without loading the HTTP server. */

/** A listening socket that could not be opened (port in use, no permission); the user's to fix. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}
