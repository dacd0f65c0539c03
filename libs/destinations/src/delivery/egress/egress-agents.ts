/**
 * HTTP(S) agents whose every connection goes through the egress guard: host names resolve through its
 * `lookup` (so a socket connects only to a checked address) and IP literals, which Node connects to
 * without a lookup, are checked before the socket is made. For HTTP clients that take an agent rather
 * than opening sockets themselves (node-fetch inside Segment's Actions destinations), with a guarded
 * undici dispatcher beside them for the requests Tributary sends for those clients
 * (`actions-fetch.client.ts`).
 *
 * Like the guarded dispatcher, they also answer whether what a host answered may be shown to the tenant
 * (`mayShowResponseOf`): each socket's address is checked when it connects and the answer kept by host
 * name, for good, so a name that ever reached a loopback or private address keeps its answers hidden.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { EgressGuard } from './egress-guard';
import { normalizeHostName } from './egress-policy';
import { GuardedDispatcher } from './guarded-dispatcher';

export interface EgressAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
  /** The agent for a URL, in the form node-fetch's `agent` option takes. */
  readonly forUrl: (url: URL) => HttpAgent;
  /** The same connections' rules for undici: the same guard, CAs and port map. */
  readonly dispatcher: GuardedDispatcher;
  /** Whether `hostName`'s answers may appear in a reason (`EgressGuard.mayShowResponseOf`, see above). */
  mayShowResponseOf(hostName: string): boolean;
  destroy(): void;
}

export interface EgressAgentsOptions {
  /** CAs trusted besides the system's (tests: the CA of a fake vendor). */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /**
   * Connections to port N go to port `portMap[N]` instead, on the address the guard checked. For tests,
   * whose fake vendors listen on free ports while the destinations call their vendors on 443.
   */
  readonly portMap?: Readonly<Record<number, number>>;
}

/**
 * The dispatcher's own limits on connecting and on waiting for an answer's headers and body chunks: a
 * backstop only, as its requests keep to their own timeouts (an Actions request's, 5 s by default).
 */
const DISPATCHER_TIMEOUT_MS = 60_000;

type ConnectionCallback = (error: Error | null, socket?: Duplex) => void;

export function createEgressAgents(guard: EgressGuard, options: EgressAgentsOptions = {}): EgressAgents {
  const common = { keepAlive: true, scheduling: 'lifo' as const, lookup: guard.lookup };
  const hostsWithHiddenResponses = new Set<string>();
  const noteConnection = (hostName: string, address: string | undefined) => {
    if (!guard.mayShowResponseOf(address, hostName))
      hostsWithHiddenResponses.add(normalizeHostName(hostName));
  };
  const http = guardLiterals(new HttpAgent(common), guard, noteConnection, options.portMap);
  const https = guardLiterals(
    new HttpsAgent({
      ...common,
      ...(options.ca !== undefined && { ca: options.ca as HttpsAgentOptions['ca'] }),
    }),
    guard,
    noteConnection,
    options.portMap,
  );
  const dispatcher = new GuardedDispatcher(guard, {
    timeoutMs: DISPATCHER_TIMEOUT_MS,
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.portMap !== undefined && { portMap: options.portMap }),
  });
  return {
    http,
    https,
    forUrl: (url) => (url.protocol === 'https:' ? https : http),
    dispatcher,
    mayShowResponseOf: (hostName) =>
      !hostsWithHiddenResponses.has(normalizeHostName(hostName)) && dispatcher.mayShowResponseOf(hostName),
    destroy() {
      http.destroy();
      https.destroy();
      void dispatcher.close();
    },
  };
}

function guardLiterals<A extends HttpAgent>(
  agent: A,
  guard: EgressGuard,
  noteConnection: (hostName: string, address: string | undefined) => void,
  portMap: Readonly<Record<number, number>> = {},
): A {
  const withConnection = agent as unknown as {
    createConnection(
      options: { host?: string; port?: number | string },
      callback: ConnectionCallback,
    ): Duplex | undefined;
  };
  const connect = withConnection.createConnection.bind(agent);
  withConnection.createConnection = (options, callback) => {
    const refusal = guard.refusalOfLiteral(options.host ?? '');
    if (refusal) {
      // Asynchronously, as a failed connect would: the request reports it through its 'error' event.
      process.nextTick(() => callback(refusal));
      return undefined;
    }
    const mapped = portMap[Number(options.port)];
    const socket = connect(mapped === undefined ? options : { ...options, port: mapped }, callback);
    const hostName = options.host ?? '';
    if (socket) socket.once('connect', () => noteConnection(hostName, (socket as Socket).remoteAddress));
    return socket;
  };
  return agent;
}
