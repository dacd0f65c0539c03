import { isIPv6 } from 'node:net';

type Window = { startedAt: number; count: number };

export interface RateLimitCount {
  allowed: boolean;
  /** Requests counted in the current window, this one included. */
  consumed: number;
  remaining: number;
  /** When the current window ends, in epoch milliseconds. */
  resetAt: number;
  retryAfterSeconds: number;
}

/**
 * Fixed windows (a minute by default) per caller. Coarser than a sliding window, but O(1) memory per caller
 * and exact enough for a limit whose purpose is to stop runaway scripts.
 *
 * Windows live in two generations swapped once per window length: a caller seen in the last two
 * generations is found there, and a whole generation is dropped at once when it can only hold
 * expired windows. So each `take` is O(1) however many distinct callers there are (callers the
 * network chooses, such as client addresses, must not make each new one cost a scan of the others).
 */
export class RateLimiter {
  private current = new Map<string, Window>();
  private previous = new Map<string, Window>();
  private generationStartedAt: number;

  constructor(
    private readonly limitPerWindow: number,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.generationStartedAt = now();
  }

  /** Counts one request; returns the seconds to wait when the caller is over its limit. */
  take(callerKey: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const { allowed, retryAfterSeconds } = this.count(callerKey);
    return allowed ? { allowed } : { allowed, retryAfterSeconds };
  }

  /** Counts one request and tells where the caller's window stands (for rate-limit headers). */
  count(callerKey: string): RateLimitCount {
    const now = this.now();
    this.rotate(now);
    let window = this.current.get(callerKey);
    if (!window) {
      window = this.previous.get(callerKey);
      if (window) {
        this.previous.delete(callerKey);
        this.current.set(callerKey, window);
      }
    }
    if (!window || now - window.startedAt >= this.windowMs) {
      window = { startedAt: now, count: 0 };
      this.current.set(callerKey, window);
    }
    window.count += 1;
    const resetAt = window.startedAt + this.windowMs;
    return {
      allowed: window.count <= this.limitPerWindow,
      consumed: window.count,
      remaining: Math.max(0, this.limitPerWindow - window.count),
      resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
    };
  }

  /** Callers with a window kept (at most those seen in the last two window lengths). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /**
   * Every window in `current` started before the generation ends, so one generation later all of
   * them have expired: the older generation can be dropped whole.
   */
  private rotate(now: number): void {
    const elapsed = now - this.generationStartedAt;
    if (elapsed < this.windowMs) return;
    this.previous = elapsed < 2 * this.windowMs ? this.current : new Map();
    this.current = new Map();
    this.generationStartedAt = now;
  }
}

/**
 * The key a client address is counted under: an IPv6 address by its /64 (one subscriber's
 * network hands out a whole /64, so counting each address would give one client 2^64 budgets),
 * an IPv4 address (or IPv4-mapped IPv6) as itself.
 */
export function addressRateKey(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail = ''] = address.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  // A dotted IPv4 tail (`64:ff9b::1.2.3.4`) stands for two groups.
  const tailGroups =
    tail === '' ? [] : tail.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
