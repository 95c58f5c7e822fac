/**
 * What `bench/hostile-scrypt.ts` and test/e2e/auth-storm.test.ts share: HTTP
 * requests from a chosen loopback address, and a wrong-secret storm on
 * `POST /svc/api/<area>/auth` from many. On Linux every 127.0.0.0/8 address
 * is local, and the service tells clients apart by the socket's peer address.
 *
 * The storm runs in a worker thread on bare sockets, so that on one machine
 * the attackers' client neither holds up the event loop of whoever measures
 * the service meanwhile nor takes much of the CPU the service is measured on.
 */
import { Agent, request } from 'node:http';
import { Worker } from 'node:worker_threads';

/** What to send. */
export interface AuthStormOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:8080. */
  url: string;
  area: string;
  apiId: string;
  /** Attacking addresses 127.0.1.1 … 127.0.1.<addresses> (at most 254). */
  addresses: number;
  /** Wrong secrets each address sends. */
  perAddress: number;
  /**
   * 'clients': each address sends its attempts one after another, each as soon
   * as the last is answered, all addresses at once. 'burst': every attempt on
   * its own connection, all opened at once.
   */
  mode: 'clients' | 'burst';
  /**
   * Nice value for the attackers' thread (Linux). A remote attacker takes no
   * CPU from the service; one on the same machine at the default priority
   * would take it from serve's threads, which lower themselves to nice 10
   * (flowIngest.otherThreadsNice). Giving the attackers the same nice puts
   * them on an equal footing.
   */
  nice?: number;
}

/** One answer to an attempt. */
export interface StormAnswer {
  address: string;
  status: number;
  retryAfter: string | undefined;
}

/** A storm under way. */
export interface AuthStorm {
  /** Attempts answered so far. */
  answered(): number;
  /** Addresses answered at least once so far. */
  heard(): number;
  /** Every answer, once all are in. */
  done: Promise<StormAnswer[]>;
}

// Plain JavaScript for an eval'd worker: the worker cannot load this TypeScript file.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { connect } = require('node:net');
const { url, area, apiId, addresses, perAddress, mode, nice } = workerData;
if (nice) {
  try {
    const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    require('node:os').setPriority(tid, nice);
  } catch {}
}
const { hostname, port } = new URL(url);
const path = '/svc/api/' + area + '/auth';
function post(localAddress, secret) {
  const body = JSON.stringify({ api_id: apiId, secret });
  const req = 'POST ' + path + ' HTTP/1.1\\r\\nhost: ' + hostname + ':' + port + '\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n' + body;
  return new Promise((resolve) => {
    const chunks = [];
    // write, not end: a half-closed request may be taken as aborted before it is answered.
    const s = connect({ host: hostname, port: Number(port), localAddress }, () => s.write(req));
    s.on('data', (c) => chunks.push(c));
    s.on('error', () => undefined);
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\\/1\\.1 (\\d{3})/.exec(text);
      const retry = /\\r\\nretry-after: *(\\S+)/i.exec(text);
      const answer = { address: localAddress, status: status ? Number(status[1]) : 0, retryAfter: retry ? retry[1] : undefined };
      parentPort.postMessage({ answer });
      resolve(answer);
    });
  });
}
const from = (i) => '127.0.1.' + (i + 1);
async function run() {
  if (mode === 'burst') {
    const all = [];
    for (let round = 0; round < perAddress; round++) for (let i = 0; i < addresses; i++) all.push(post(from(i), 'wrong-' + round));
    return Promise.all(all);
  }
  const per = await Promise.all(Array.from({ length: addresses }, async (_, i) => {
    const out = [];
    for (let round = 0; round < perAddress; round++) out.push(await post(from(i), 'wrong-' + round));
    return out;
  }));
  return per.flat();
}
run().then((all) => parentPort.postMessage({ done: all }));
`;

/** Starts the storm; it runs until every attempt is answered. */
export function startAuthStorm(opts: AuthStormOptions): AuthStorm {
  if (opts.addresses < 1 || opts.addresses > 254) throw new Error('addresses must be 1-254');
  const worker = new Worker(WORKER, { eval: true, workerData: opts });
  let answered = 0;
  const heard = new Set<string>();
  const done = new Promise<StormAnswer[]>((resolve, reject) => {
    worker.on('message', (m: { answer?: StormAnswer; done?: StormAnswer[] }) => {
      if (m.answer) {
        answered++;
        heard.add(m.answer.address);
      }
      if (m.done) {
        resolve(m.done);
        void worker.terminate();
      }
    });
    worker.on('error', reject);
  });
  return { answered: () => answered, heard: () => heard.size, done };
}

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
  const headers = {
    ...init.headers,
    ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
  };
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
