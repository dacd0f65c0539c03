/**
 * How the PostgreSQL destination reaches a tenant's database: the connection string is checked, its host
 * goes through the egress guard, and the pool connects to the checked address (host = the IP) while TLS
 * still verifies the certificate against the name (servername).
 *
 * Refused in a tenant's connection string, at Config API write time and again at delivery:
 * - `sslcert`, `sslkey`, `sslrootcert`: the driver reads these paths from the router's disk, so a tenant
 *   could have the router present the operator's client certificate or probe its files;
 * - a Unix socket host (`/path`, `%2Fpath`, `host=/path`, `socket:`): a local socket is the operator's own
 *   database, out of the egress policy's reach;
 * - anything but a `postgres://` or `postgresql://` URI.
 */
import { isIP } from 'node:net';
import type { PoolConfig } from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import type { DeliveryResult } from '../delivery/delivery-adapter.port';
import { EgressDeniedError, type EgressGuard } from '../delivery/egress/egress-guard';

const CERTIFICATE_FILE_PARAMETERS = ['sslcert', 'sslkey', 'sslrootcert'];

/** The driver's default, used when the connection string names no host (never `PGHOST`). */
const DEFAULT_HOST = 'localhost';
const DEFAULT_PORT = 5432;

const SOCKET_HOST_REFUSED = 'a Unix socket host is not accepted; name a host reachable over TCP';

/** Why a tenant's connection string cannot be stored or used, or `null`. Never quotes the string. */
export function problemWithConnectionString(connectionString: string): string | null {
  const text = connectionString.trim();
  if (text === '') return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be a postgres:// or postgresql:// URI';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return 'must be a postgres:// or postgresql:// URI (socket paths are not accepted)';
  }
  for (const name of url.searchParams.keys()) {
    if (CERTIFICATE_FILE_PARAMETERS.includes(name.toLowerCase())) {
      return `the parameter "${name}" names a file on the Tributary host and is not accepted`;
    }
  }
  const hostParameter = url.searchParams.get('host');
  // The driver prefers a non-empty `host` parameter to the URL's host.
  const host = hostParameter || safelyDecoded(url.hostname);
  if (host === undefined || isSocketPath(host)) return SOCKET_HOST_REFUSED;
  return null;
}

export interface PinnedPostgresConnection {
  /** Connection settings with `host` set to the checked address. */
  readonly poolConfig: PoolConfig;
  /**
   * Whether the server's error messages may reach the tenant in delivery reasons: not for a loopback or
   * private database the allow-list does not name, since they tell which databases, users and tables
   * the operator's own servers have.
   */
  readonly serverMessagesShown: boolean;
}

/**
 * The pool settings for `connectionString`: its host resolved and checked by the guard, `host` set to
 * the checked address. Rejects with `EgressDeniedError` for a refused target or connection string (both
 * are discards with reason `egress_denied`); a name that does not resolve rejects with the DNS error.
 */
export async function pinnedPostgresConnection(
  connectionString: string,
  egressGuard: EgressGuard,
): Promise<PinnedPostgresConnection> {
  const problem = problemWithConnectionString(connectionString);
  if (problem !== null) throw new EgressDeniedError('the connection string', problem);
  const parsed = parseConnectionString(connectionString.trim());
  const hostName = parsed.host || DEFAULT_HOST;
  if (isSocketPath(hostName)) throw new EgressDeniedError('the connection string', SOCKET_HOST_REFUSED);
  const port = parsed.port ? Number(parsed.port) : DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new EgressDeniedError(hostName, 'the port is not a TCP port');
  }
  const [address] = await egressGuard.resolve(hostName);
  const password = parsed.password ?? '';
  const poolConfig: PoolConfig = {
    host: address!.address,
    port,
    ...(parsed.user ? { user: parsed.user } : {}),
    ...(parsed.database ? { database: parsed.database } : {}),
    ...(parsed.options ? { options: parsed.options } : {}),
    ...(parsed.application_name ? { application_name: parsed.application_name } : {}),
    ...(parsed.client_encoding ? { client_encoding: parsed.client_encoding } : {}),
    // A function, so that an empty password stays empty: a string '' would make the driver fall back to
    // the router's own PGPASSWORD and send it to the tenant's server.
    password: () => password,
    ssl: withServerName(parsed.ssl, hostName),
  };
  return { poolConfig, serverMessagesShown: egressGuard.mayShowResponseOf(address!.address, hostName) };
}

/**
 * The results with what the server said about a statement left out of their reasons (when
 * `serverMessagesShown` is false): such messages can quote rows of the operator's own tables (a
 * constraint violation names the key it met). The SQLSTATE stays, the code PostgreSQL documents.
 * Connection failures keep their text: it names the failure (refused, unknown database, failed
 * authentication), not data.
 */
export function withoutServerMessages(results: readonly DeliveryResult[]): DeliveryResult[] {
  const prefix = 'PostgreSQL error ';
  return results.map((result) => {
    if (result.outcome === 'delivered') return result;
    const marker = result.reason.indexOf(prefix);
    if (marker < 0) return result;
    const codeEnd = marker + prefix.length + 5;
    return { ...result, reason: `${result.reason.slice(0, codeEnd)} (message hidden: internal address)` };
  });
}

/** TLS settings that verify the certificate against the name, since the socket goes to the address. */
function withServerName(ssl: unknown, hostName: string): PoolConfig['ssl'] {
  if (ssl === undefined || ssl === null || ssl === false) return false;
  const servername = isIP(hostName) === 0 ? { servername: hostName } : {};
  if (typeof ssl === 'object') return { ...(ssl as object), ...servername };
  // `true`, or any other text (`ssl=require`): the driver turns TLS on for those.
  return servername;
}

function isSocketPath(host: string): boolean {
  return host.startsWith('/') || host.startsWith('\\');
}

function safelyDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
