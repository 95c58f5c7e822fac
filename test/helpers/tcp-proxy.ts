/**
 * A loopback TCP proxy in front of a database server, for outage tests that
 * must not touch the server the other test files share:
 * - `down()` resets every connection and refuses new ones, as a server that
 *   stopped or is restarting does; `up()` listens again on the same port;
 * - `freeze()` keeps every connection open and accepts new ones but
 *   forwards nothing, as a server stopped by SIGSTOP does (the kernel still
 *   completes the handshake); `thaw()` lets it all through again.
 * `startProxyProcess` runs a proxy in a process of its own, for a test that
 * stops it with a real SIGSTOP.
 */
import { spawn } from 'node:child_process';
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

/** A proxy in a process of its own, which a test stops with SIGSTOP as it would a database server. */
export interface ProxyProcess {
  readonly port: number;
  /** SIGSTOP: the kernel still completes handshakes on its port, nothing answers. */
  stop(): void;
  /** SIGCONT. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a plain TCP proxy to `targetHost:targetPort` in a child process on 127.0.0.1 (ephemeral port). */
export async function startProxyProcess(targetHost: string, targetPort: number): Promise<ProxyProcess> {
  const script = `
    const net = require('node:net');
    const [host, port] = process.argv.slice(1);
    const server = net.createServer((c) => {
      const u = net.connect(Number(port), host);
      c.on('error', () => u.destroy());
      u.on('error', () => c.destroy());
      c.pipe(u);
      u.pipe(c);
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));
  `;
  const child = spawn(process.execPath, ['-e', script, targetHost, String(targetPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`proxy exited ${code}`)));
  });
  return {
    port,
    stop: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
