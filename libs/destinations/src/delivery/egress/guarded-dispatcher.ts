/**
 * An undici dispatcher whose every connection goes through the egress guard, for adapters that make
 * their own HTTP requests (webhooks, the requests of Actions destinations): host names resolve through
 * the guard's `lookup`, so a socket connects only to a checked address, and IP literals, which are
 * connected to without a lookup, are checked before the socket is made. Redirects are never followed
 * (no redirect interceptor).
 *
 * It also answers whether what a host answered may be shown to the tenant (`mayShowResponseOf`). undici
 * hands a response no socket, so the address is checked when a connection opens and the answer kept by
 * host name, for good: a name that ever reached a loopback or private address keeps its responses hidden
 * even after it resolves to a public one, so a rebinding name cannot get an internal answer shown
 * through a connection it opened earlier.
 */
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { EgressGuard } from './egress-guard';
import { normalizeHostName } from './egress-policy';

/** What a request's answer is reported to (undici's handler), for adapters, which do not import undici. */
export type GuardedRequestHandler = Dispatcher.DispatchHandler;
export type GuardedRequestController = Dispatcher.DispatchController;

export interface GuardedDispatcherOptions {
  /** Connecting, and waiting for the answer's headers and each of its body's chunks. */
  readonly timeoutMs: number;
  /** CAs trusted besides the system's (tests: the CA of a fake vendor). */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** See `EgressAgentsOptions.portMap`: tests only. */
  readonly portMap?: Readonly<Record<number, number>>;
}

export class GuardedDispatcher {
  private agent: Agent;
  private readonly hostsWithHiddenResponses = new Set<string>();

  constructor(
    private readonly guard: EgressGuard,
    private readonly options: GuardedDispatcherOptions,
  ) {
    this.agent = this.createAgent();
  }

  /** Sends a request (`Dispatcher.dispatch`): connections are kept alive per origin. */
  dispatch(request: Dispatcher.DispatchOptions, handler: GuardedRequestHandler): void {
    this.agent.dispatch(request, handler);
  }

  /** Whether `hostName`'s answers may appear in a reason (`EgressGuard.mayShowResponseOf`, see above). */
  mayShowResponseOf(hostName: string): boolean {
    return !this.hostsWithHiddenResponses.has(normalizeHostName(hostName));
  }

  /** Ends every connection, busy ones too; later requests open new ones. */
  async close(): Promise<void> {
    const closing = this.agent;
    this.agent = this.createAgent();
    await closing.destroy();
  }

  private createAgent(): Agent {
    const { ca, portMap } = this.options;
    const connect = buildConnector({
      lookup: this.guard.lookup,
      timeout: this.options.timeoutMs,
      ...(ca !== undefined && { ca: ca as string | Buffer | (string | Buffer)[] }),
    });
    return new Agent({
      connect: (connectOptions, callback) => {
        const refusal = this.guard.refusalOfLiteral(connectOptions.hostname);
        if (refusal) {
          callback(refusal, null);
          return;
        }
        // An origin's default port comes as '' (the URL's `port`).
        const port = connectOptions.port || (connectOptions.protocol === 'https:' ? '443' : '80');
        const mapped = portMap?.[Number(port)];
        const options = mapped === undefined ? connectOptions : { ...connectOptions, port: String(mapped) };
        connect(options, (error, socket) => {
          if (socket) this.noteConnection(connectOptions.hostname, socket.remoteAddress);
          (callback as (...args: unknown[]) => void)(error, socket);
        });
      },
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
    });
  }

  private noteConnection(hostName: string, address: string | undefined): void {
    if (!this.guard.mayShowResponseOf(address, hostName)) {
      this.hostsWithHiddenResponses.add(normalizeHostName(hostName));
    }
  }
}
