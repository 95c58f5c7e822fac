/**
 * HTTP requests from a chosen loopback source address, so one test process can
 * play many clients: on Linux every 127.0.0.0/8 address is local, and the
 * service sees each as a different client (it takes the socket's peer).
 */
import { Agent, request } from 'node:http';

/** An agent that keeps one connection from `localAddress` open between requests. */
export function keepAliveFrom(localAddress: string): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1, localAddress } as ConstructorParameters<typeof Agent>[0]);
}

/** What came back, and how long it took from the call to the last byte. */
export interface TimedResponse {
  status: number;
  retryAfter: string | undefined;
  body: string;
  ms: number;
}

/**
 * Sends one request from `localAddress`: on a connection of its own, or on
 * one kept alive by `agent` (made by `keepAliveFrom` for the same address), as
 * a dashboard or a script using one HTTP client does.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown; agent?: Agent } = {},
): Promise<TimedResponse> {
  const started = performance.now();
  const body = init.json === undefined ? undefined : JSON.stringify(init.json);
  const headers = { ...init.headers, ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }) };
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers, localAddress, agent: init.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
