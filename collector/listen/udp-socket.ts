/**
 * Binding a UDP socket (the flow sockets, as both ways of reading the sockets do (on the
 * decoding thread, listeners.ts; on the socket thread, socket-thread.ts; and
 * the syslog receiver's), and reading back the buffer it was given.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

/** Where and how to bind. */
export interface FlowSocketSpec {
  type: 'udp4' | 'udp6';
  host: string;
  port: number;
  /** SO_RCVBUF to ask for, bytes. */
  recvBufferSize: number;
}

/**
 * Binds a UDP socket (dual-stack for udp6) that hands each datagram to
 * `onMessage`. Rejects with the bind error, the socket closed; errors after
 * the bind go to `onError`.
 */
export function bindFlowSocket(
  spec: FlowSocketSpec,
  onMessage: (msg: Buffer, rinfo: RemoteInfo) => void,
  onError: (err: Error) => void,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket({ type: spec.type, recvBufferSize: spec.recvBufferSize, ipv6Only: false });
    const onBindError = (err: Error): void => {
      socket.close();
      reject(err);
    };
    socket.once('error', onBindError);
    socket.on('message', onMessage);
    socket.bind(spec.port, spec.host, () => {
      socket.off('error', onBindError);
      socket.on('error', onError);
      resolve(socket);
    });
  });
}

/**
 * The receive buffer the kernel set, from what SO_RCVBUF reads back: Linux
 * reports twice the size it set (the other half is for its bookkeeping).
 */
export function setBufferSize(reported: number): number {
  return process.platform === 'linux' ? reported / 2 : reported;
}

/** `HOST:PORT`, or `[V6]:PORT` for an IPv6 address. */
export function formatHostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
