import { verifyPassword } from '@tributary/auth';
import type { UserRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  addressRateKey,
  ConcurrencyLimiter,
  ConcurrencyLimitError,
  Environment,
  RateLimiter,
} from '@tributary/platform';
import { ConfigApiError, GrpcCode } from './config-api.error';

/**
 * Checks HTTP Basic `email:password` (token management, docs/tracking-api.md §2.1) without letting the route become
 * a password oracle or a CPU sink:
 * - attempts are counted per client address, then per email, before any hashing (429, code 8);
 * - an unknown email costs the same scrypt work as a known one, so timing does not reveal accounts;
 * - at most `PASSWORD_HASH_CONCURRENCY` hashes run at once, as many wait, the rest get 503 (code 14).
 */
export class BasicCredentialsChecker {
  private readonly perAddress: RateLimiter;
  private readonly perEmail: RateLimiter;
  private readonly hashing: ConcurrencyLimiter;

  constructor(
    private readonly readModel: ConfigReadModel,
    environment: Pick<
      Environment,
      'BASIC_AUTH_RATE_LIMIT_PER_ADDRESS' | 'BASIC_AUTH_RATE_LIMIT_PER_EMAIL' | 'PASSWORD_HASH_CONCURRENCY'
    >,
  ) {
    this.perAddress = new RateLimiter(environment.BASIC_AUTH_RATE_LIMIT_PER_ADDRESS);
    this.perEmail = new RateLimiter(environment.BASIC_AUTH_RATE_LIMIT_PER_EMAIL);
    this.hashing = new ConcurrencyLimiter(
      environment.PASSWORD_HASH_CONCURRENCY,
      environment.PASSWORD_HASH_CONCURRENCY,
    );
  }

  /** The user these credentials (base64 `email:password`) belong to; throws the API's error otherwise. */
  async check(encodedCredentials: string, clientAddress: string): Promise<UserRecord> {
    this.throttle(this.perAddress, addressRateKey(clientAddress));
    const decoded = Buffer.from(encodedCredentials, 'base64').toString('utf8');
    const separator = decoded.indexOf(':');
    const email = (separator < 0 ? decoded : decoded.slice(0, separator)).toLowerCase();
    const password = separator < 0 ? '' : decoded.slice(separator + 1);
    this.throttle(this.perEmail, email);
    const user = this.readModel.user(email);
    let matches: boolean;
    try {
      matches = await this.hashing.run(() => verifyPassword(password, user?.passwordHash));
    } catch (error) {
      if (!(error instanceof ConcurrencyLimitError)) throw error;
      throw new ConfigApiError(
        503,
        GrpcCode.UNAVAILABLE,
        'too many password checks at once; retry after the Retry-After delay',
        { 'retry-after': String(error.retryAfterSeconds) },
      );
    }
    if (!user || !matches) throw ConfigApiError.unauthenticated('wrong email or password');
    return user;
  }

  private throttle(limiter: RateLimiter, key: string): void {
    const limit = limiter.take(key);
    if (limit.allowed) return;
    throw new ConfigApiError(
      429,
      GrpcCode.RESOURCE_EXHAUSTED,
      'too many sign-in attempts; retry after the Retry-After delay',
      { 'retry-after': String(limit.retryAfterSeconds) },
    );
  }
}
