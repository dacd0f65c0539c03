/**
 * The one way out for destination adapters (`docs/egress.md`): a host is resolved, every address it
 * resolves to is checked against the egress policy, and the connection is made to an address that was
 * checked, never to the name again. Resolving twice (once to check, once to connect) would let a DNS
 * server with a short TTL answer a public address to the check and an internal one to the connection.
 *
 * HTTP adapters use `lookup` as their agents' lookup hook (Node calls it only for host names, so IP
 * literals are checked with `refusalOfLiteral` before the request); other clients call `resolve` and
 * connect to the address it answers, keeping the name for TLS (servername) and the Host header.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import {
  decideEgress,
  normalizeHostName,
  OPEN_EGRESS_POLICY,
  type EgressDecision,
  type EgressPolicy,
} from './egress-policy';

/** Decisions remembered per guard; past this many the memory starts over. */
const MAX_REMEMBERED_DECISIONS = 4_096;

export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Every address of a host name (the system resolver by default; tests inject their own). */
export type HostResolver = (hostName: string) => Promise<readonly ResolvedAddress[]>;

export const systemHostResolver: HostResolver = (hostName) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostName, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/** A target the policy refuses. Adapters turn it into a discard with reason `egress_denied`. */
export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED';
  constructor(
    readonly hostName: string,
    readonly detail: string,
  ) {
    super(`egress to ${hostName} refused: ${detail}`);
    this.name = 'EgressDeniedError';
  }
}

export function isEgressDenied(error: unknown): error is EgressDeniedError {
  return error instanceof EgressDeniedError;
}

export class EgressGuard {
  /**
   * Decisions by address and host name. A delivery asks twice per request (the target, then whether its
   * response may be shown) about the same few addresses, and a range check costs microseconds.
   */
  private readonly decisions = new Map<string, EgressDecision>();

  constructor(
    readonly policy: EgressPolicy = OPEN_EGRESS_POLICY,
    /** Public so that a worker thread's guard can resolve through this one's (the lanes' `resolveHost`). */
    readonly resolver: HostResolver = systemHostResolver,
  ) {}

  /**
   * The addresses to connect to for `host` (a name or an IP literal, brackets allowed): all of them
   * checked. Rejects with `EgressDeniedError` when any address is refused: a name that answers both a
   * public and an internal address is not trusted with either. Resolution errors pass through.
   */
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const hostName = normalizeHostName(host);
    const literalFamily = isIP(hostName);
    if (literalFamily !== 0) {
      const refusal = this.refusalOfLiteral(hostName);
      if (refusal) throw refusal;
      return [{ address: hostName, family: literalFamily }];
    }
    const addresses = await this.resolver(hostName);
    if (addresses.length === 0) throw new EgressDeniedError(hostName, 'the name resolves to no address');
    for (const { address } of addresses) {
      const decision = this.decide(address, hostName);
      if (!decision.allowed) throw new EgressDeniedError(hostName, decision.reason);
    }
    return addresses.map(({ address, family }) => ({ address, family }));
  }

  /** For an IP literal host: the refusal, or `undefined` when the policy allows it. Names answer `undefined`. */
  refusalOfLiteral(host: string): EgressDeniedError | undefined {
    const address = normalizeHostName(host);
    if (isIP(address) === 0) return undefined;
    const decision = this.decide(address);
    return decision.allowed ? undefined : new EgressDeniedError(address, decision.reason);
  }

  /**
   * Whether what `address` answered may be shown to the tenant (in a delivery's reason, dead letters,
   * metrics): only for public addresses and those the allow-list vouches for, never for the loopback
   * and private services the `open` mode lets through.
   */
  mayShowResponseOf(address: string | undefined, hostName?: string): boolean {
    if (address === undefined) return false;
    const decision = this.decide(address, hostName);
    return decision.allowed && !decision.internal;
  }

  private decide(address: string, hostName?: string): EgressDecision {
    const key = hostName === undefined ? address : `${address} ${hostName}`;
    let decision = this.decisions.get(key);
    if (decision === undefined) {
      decision = decideEgress(this.policy, address, hostName);
      if (this.decisions.size >= MAX_REMEMBERED_DECISIONS) this.decisions.clear();
      this.decisions.set(key, decision);
    }
    return decision;
  }

  /**
   * A `lookup` hook for `net.connect`, `tls.connect` and http(s) agents: answers only checked addresses,
   * in the resolver's order, so the socket connects to what was checked.
   */
  readonly lookup: LookupFunction = (hostName, options, callback) => {
    const wantsAll = typeof options === 'object' && options !== null && options.all === true;
    const family = typeof options === 'object' && options !== null ? options.family : undefined;
    const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
    this.resolve(hostName).then(
      (addresses) => {
        const usable = wanted === 0 ? addresses : addresses.filter((address) => address.family === wanted);
        if (usable.length === 0) {
          const error = Object.assign(new Error(`no IPv${wanted} address for ${hostName}`), {
            code: 'ENOTFOUND',
          });
          callback(error, wantsAll ? [] : '', 0 as never);
          return;
        }
        if (wantsAll) (callback as (error: null, addresses: ResolvedAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, wantsAll ? [] : '', 0 as never),
    );
  };
}
