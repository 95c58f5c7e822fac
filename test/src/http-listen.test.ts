import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ListenError, listenHttp, type HttpListener } from '../../src/http-listen.js';

const open: HttpListener[] = [];
afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
});

function get(port: number, path: string, agent?: Agent, localAddress?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, localAddress }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('listenHttp', () => {
  it('answers through the connection gate, tells each client address apart, and counts what it admitted', async () => {
    const l = await listenHttp(
      (req) => new Response(`${new URL(req.url).pathname} ok`),
      '127.0.0.1',
      0,
    );
    open.push(l);
    const port = l.address().port;
    const answers = await Promise.all(['127.0.0.2', '127.0.0.3', '127.0.0.2'].map((a, i) => get(port, `/p${i}`, undefined, a)));
    expect(answers).toEqual([
      { status: 200, body: '/p0 ok' },
      { status: 200, body: '/p1 ok' },
      { status: 200, body: '/p2 ok' },
    ]);
    expect(l.gateStats()).toMatchObject({ waiting: 0, admittedTotal: 3, refusedTotal: 0 });
  });

  it('closes kept-alive connections when closed, instead of waiting for their idle timeout', async () => {
    const l = await listenHttp(() => new Response('ok'), '127.0.0.1', 0);
    const agent = new Agent({ keepAlive: true });
    const port = l.address().port;
    expect((await get(port, '/', agent)).status).toBe(200);
    const socketClosed = new Promise<void>((resolve) => {
      const sockets = Object.values(agent.freeSockets).flat();
      expect(sockets).toHaveLength(1);
      sockets[0]!.once('close', () => resolve());
    });
    const started = performance.now();
    await l.close();
    await socketClosed;
    // Node's keep-alive timeout is 5 s: a close that waited for it would take that long.
    expect(performance.now() - started).toBeLessThan(2000);
    agent.destroy();
  });

  it('names the address and the setting to change when the port is taken', async () => {
    const first = await listenHttp(() => new Response('ok'), '127.0.0.1', 0);
    open.push(first);
    const port = first.address().port;
    const err = await listenHttp(() => new Response('ok'), '127.0.0.1', port).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenError);
    expect((err as Error).message).toBe(`cannot listen for HTTP on 127.0.0.1:${port}: address already in use (set http.port or --port)`);
  });
});
