/** The HTTP listener of `serve`, and the error it gives when the port cannot be had. */
import { createAdaptorServer, type ServerType } from '@hono/node-server';

/** A listening socket that could not be opened (port in use, no permission); the user's to fix. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/**
 * Connections the kernel holds for HTTP until accepted. Node's default, 511,
 * overflows when a thousand clients connect at once (a login storm): the
 * handshakes dropped come back after 1 s, 3 s, … and delay honest requests as
 * long. The kernel caps it at net.core.somaxconn (4096 on current Linux).
 */
const HTTP_BACKLOG = 4096;

/** Serves `fetch` on hostname:port; resolves once listening. */
export function listenHttp(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const s = createAdaptorServer({ fetch, hostname });
    s.listen({ port, host: hostname, backlog: HTTP_BACKLOG }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : (err.code ?? err.message);
      reject(new ListenError(`cannot listen for HTTP on ${hostname}:${port}: ${why} (set http.port or --port)`, { cause: err }));
    });
  });
}
