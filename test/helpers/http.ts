/** Serving a Hono app on an ephemeral loopback port for tests. */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';

/** A running test server. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `fetch` on 127.0.0.1 with an ephemeral port. */
export async function serveOnLoopback(fetch: (req: Request, env?: unknown) => Response | Promise<Response>): Promise<TestServer> {
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** POSTs JSON and returns status and parsed body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** GETs and returns status and parsed body. */
export async function getJson(url: string, token?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: await res.json() };
}
