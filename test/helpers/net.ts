/** Loopback network helpers shared by the tests. */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** A port free for both UDP and TCP on 127.0.0.1, above the well-known range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const tcpFree = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (!tcpFree) continue;
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket('udp4');
      u.once('error', () => resolve(false));
      u.bind(port, '127.0.0.1', () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no free port found');
}

/** Sends one UDP datagram to 127.0.0.1:port. */
export function sendUdp(port: number, text: string | Buffer): Promise<void> {
  const s = createSocket('udp4');
  return new Promise((resolve, reject) =>
    s.send(typeof text === 'string' ? Buffer.from(text) : text, port, '127.0.0.1', (err) => {
      s.close();
      if (err) reject(err);
      else resolve();
    }),
  );
}

/** True when nothing is bound to the port on 127.0.0.1. */
export async function portFree(port: number): Promise<boolean> {
  const s = createSocket('udp4');
  const free = await new Promise<boolean>((ok) => {
    s.once('error', () => ok(false));
    s.bind(port, '127.0.0.1', () => ok(true));
  });
  s.close();
  return free;
}
