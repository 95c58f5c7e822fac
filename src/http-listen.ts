/** The HTTP listener of `serve`, and the error it gives when the port cannot be had. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener, type ServerType } from '@hono/node-server';

import { ListenError } from './listen-error.js';

// Its own module so that the CLI knows it without loading the HTTP server; re-exported for serve's wiring.
export { ListenError } from './listen-error.js';

/**
 * Connections the kernel holds for HTTP until accepted. Node's default, 511,
 * overflows when a thousand clients connect at once (a login storm): the
 * handshakes dropped come back after 1 s, 3 s, … and delay honest requests as
 * long. The kernel caps it at net.core.somaxconn (4096 on current Linux).
 */
const HTTP_BACKLOG = 4096;

/**
 * Serves `fetch` on hostname:port; resolves once listening. `early` sees each
 * request first, on Node's objects, and may answer it itself (returns true).
 */
export function listenHttp(
  fetch: (req: Request) => Response | Promise<Response>,
  hostname: string,
  port: number,
  early?: (req: IncomingMessage, res: ServerResponse) => boolean,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const listener = getRequestListener(fetch, { hostname });
    const s = createServer((req, res) => {
      if (!early?.(req, res)) void listener(req, res);
    });
    s.listen({ port, host: hostname, backlog: HTTP_BACKLOG }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'address already in use'
          : err.code === 'EACCES'
            ? 'permission denied'
            : (err.code ?? err.message);
      reject(new ListenError(`cannot listen for HTTP on ${hostname}:${port}: ${why} (set http.port or --port)`, { cause: err }));
    });
  });
}
