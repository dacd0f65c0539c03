/**
 * A loopback stand-in for the vendors behind Segment's Actions destinations: one HTTPS server (and one
 * plain HTTP server) that answers for every host name, with a certificate per name signed by a CA made
 * for the test. Destinations keep their real host names: the egress guard's resolver answers loopback
 * for all of them, and the agents' `portMap` sends port 443/80 to these servers.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { generate } from 'selfsigned';
import { EgressGuard, type HostResolver } from '@tributary/destinations';

export interface RecordedRequest {
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** What the fake answers: a response, a connection reset, or nothing at all (a hang). */
export type FakeAnswer =
  { status: number; headers?: Record<string, string>; body?: string } | 'reset' | 'hang';

export interface FakeVendor {
  readonly ca: string;
  readonly requests: RecordedRequest[];
  /** Set to change the answer; default 200 `{"status":"ok"}` (JSON most vendors accept). */
  answer: (request: RecordedRequest) => FakeAnswer;
  readonly portMap: Readonly<Record<number, number>>;
  /** A guard whose resolver answers 127.0.0.1 for every name. */
  readonly egressGuard: EgressGuard;
  close(): Promise<void>;
}

const OK: FakeAnswer = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: '{"status":"ok","code":200}',
};

export async function startFakeVendor(): Promise<FakeVendor> {
  const caPems = await generate([{ name: 'commonName', value: 'Tributary test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  });
  const contexts = new Map<string, Promise<SecureContext>>();
  const contextFor = (serverName: string) => {
    let context = contexts.get(serverName);
    if (!context) {
      context = generate([{ name: 'commonName', value: serverName }], {
        keyType: 'ec',
        algorithm: 'sha256',
        ca: { key: caPems.private, cert: caPems.cert },
        extensions: [
          { name: 'basicConstraints', cA: false },
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
          { name: 'extKeyUsage', serverAuth: true },
          { name: 'subjectAltName', altNames: [{ type: 2, value: serverName }] },
        ],
      }).then((pems) => createSecureContext({ key: pems.private, cert: pems.cert }));
      contexts.set(serverName, context);
    }
    return context;
  };
  const sockets = new Set<Socket>();
  const vendor: FakeVendor = {
    ca: caPems.cert,
    requests: [],
    answer: () => OK,
    portMap: {},
    egressGuard: new EgressGuard(undefined, loopbackResolver),
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([close(https), close(http)]);
    },
  };
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedRequest = {
        host: String(request.headers.host ?? ''),
        method: request.method ?? '',
        path: request.url ?? '',
        headers: Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [
            name,
            Array.isArray(value) ? value.join(', ') : String(value),
          ]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      vendor.requests.push(recorded);
      const answer = vendor.answer(recorded);
      if (answer === 'hang') return;
      if (answer === 'reset') {
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? '');
    });
  };
  const https = createHttpsServer(
    {
      SNICallback: (serverName, callback) =>
        contextFor(serverName).then(
          (context) => callback(null, context),
          (error: Error) => callback(error),
        ),
    },
    handler,
  );
  const http = createHttpServer(handler);
  for (const server of [https, http])
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
  await Promise.all([listen(https), listen(http)]);
  Object.assign(vendor, {
    portMap: { 443: (https.address() as AddressInfo).port, 80: (http.address() as AddressInfo).port },
  });
  return vendor;
}

const loopbackResolver: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
