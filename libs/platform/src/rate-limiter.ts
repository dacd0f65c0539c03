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
 */
export class RateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly limitPerWindow: number,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request; returns the seconds to wait when the caller is over its limit. */
  take(callerKey: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const { allowed, retryAfterSeconds } = this.count(callerKey);
    return allowed ? { allowed } : { allowed, retryAfterSeconds };
  }

  /** Counts one request and tells where the caller's window stands (for rate-limit headers). */
  count(callerKey: string): RateLimitCount {
    const now = this.now();
    let window = this.windows.get(callerKey);
    if (!window || now - window.startedAt >= this.windowMs) {
      window = { startedAt: now, count: 0 };
      this.windows.set(callerKey, window);
      if (this.windows.size > 10_000) this.forgetExpired(now);
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

  private forgetExpired(now: number): void {
    for (const [key, window] of this.windows) {
      if (now - window.startedAt >= this.windowMs) this.windows.delete(key);
    }
  }
}
