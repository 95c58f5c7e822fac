/** The HTTP listener of `serve`, and the error it gives when the port cannot be had. */
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { ConnectionGate, DEFAULT_GATE_OPTIONS, type ConnectionGateOptions, type ConnectionGateStats } from './connection-gate.js';

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

/** A running HTTP listener. */
export interface HttpListener {
  address(): AddressInfo;
  /** Counters of the connection gate (connection-gate.ts). */
  gateStats(): ConnectionGateStats;
  /** Stops accepting, ends every connection (kept-alive ones too) and resolves when done. */
  close(): Promise<void>;
}

/**
 * Serves `fetch` on hostname:port; resolves once listening. Connections are
 * accepted unread by a plain TCP server and handed to the HTTP server through
 * the connection gate, fairly per client address.
 */
export function listenHttp(
  fetch: (req: Request) => Response | Promise<Response>,
  hostname: string,
  port: number,
  gateOptions: ConnectionGateOptions = DEFAULT_GATE_OPTIONS,
): Promise<HttpListener> {
  const http = createHttpServer(getRequestListener(fetch, { hostname }));
  // The HTTP server never listens itself; 'listening' starts its tracking of connections, which
  // enforces headersTimeout and requestTimeout and lets closeAllConnections() find them.
  http.emit('listening');
  const gate = new ConnectionGate<Socket>((socket) => {
    http.emit('connection', socket);
    socket.resume();
  }, gateOptions);
  const tcp = createNetServer({ pauseOnConnect: true }, (socket) => gate.offer(socket, socket.remoteAddress ?? ''));
  return new Promise((resolve, reject) => {
    tcp.once('error', (err: NodeJS.ErrnoException) => {
      gate.close();
      const why = err.code === 'EADDRINUSE' ? 'address already in use' : err.code === 'EACCES' ? 'permission denied' : (err.code ?? err.message);
      reject(new ListenError(`cannot listen for HTTP on ${hostname}:${port}: ${why} (set http.port or --port)`, { cause: err }));
    });
    tcp.listen({ port, host: hostname, backlog: HTTP_BACKLOG }, () =>
      resolve({
        address: () => tcp.address() as AddressInfo,
        gateStats: () => gate.stats(),
        close: () =>
          new Promise<void>((done) => {
            gate.close();
            tcp.close(() => done());
            // Kept-alive connections would hold the close open; end them. The HTTP server's
            // close() stops its connection tracking (it reports that it was not listening).
            http.close(() => undefined);
            http.closeAllConnections();
          }),
      }),
    );
  });
}
