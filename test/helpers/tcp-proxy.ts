/**
 * A loopback TCP proxy in front of a database server, for outage tests that
 * must not touch the server the other test files share:
 * - `down()` resets every connection and refuses new ones, as a server that
 *   stopped or is restarting does; `up()` listens again on the same port;
 * - `freeze()` keeps every connection open and accepts new ones but
 *   forwards nothing, as a server stopped by SIGSTOP does (the kernel still
 *   completes the handshake); `thaw()` lets it all through again.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running proxy; `port` stays the same across `down()`/`up()`. */
export interface TcpProxy {
  readonly port: number;
  down(): Promise<void>;
  up(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (ephemeral port) to `targetHost:targetPort`. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server?: Socket }>();
  let frozen = false;
  const waiting: Array<() => void> = [];
  let server: Server | undefined;

  const onConnection = (client: Socket): void => {
    const pair: { client: Socket; server?: Socket } = { client };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pairs.delete(pair);
      pair.server?.destroy();
    });
    client.pause();
    const open = (): void => {
      if (client.destroyed) return;
      const upstream = connect(targetPort, targetHost);
      pair.server = upstream;
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      if (frozen) upstream.pause();
      else client.resume();
    };
    if (frozen) waiting.push(open);
    else open();
  };

  const listen = (port: number): Promise<Server> =>
    new Promise((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });

  server = await listen(0);
  const port = (server.address() as { port: number }).port;

  const closeServer = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });

  const proxy: TcpProxy = {
    port,
    async down() {
      const closed = closeServer();
      for (const p of pairs) {
        p.client.resetAndDestroy();
        p.server?.destroy();
      }
      pairs.clear();
      waiting.length = 0;
      await closed;
    },
    async up() {
      server = await listen(port);
    },
    freeze() {
      frozen = true;
      for (const p of pairs) {
        p.client.pause();
        p.server?.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const p of pairs) {
        p.client.resume();
        p.server?.resume();
      }
      for (const open of waiting.splice(0)) open();
    },
    close: () => proxy.down(),
  };
  return proxy;
}
