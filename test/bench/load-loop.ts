/**
 * Closed-loop load: `concurrency` workers each send one request, wait for its answer and send the
 * next, until the deadline. Requests that start during the warm-up are sent but not counted.
 */

export interface PhaseResult {
  /** Measured wall time in seconds (from the end of the warm-up to the last answer). */
  seconds: number;
  requests: number;
  /** Messages the target acknowledged as stored. */
  acceptedMessages: number;
  failedRequests: number;
  /** Failure descriptions (`HTTP 503`, `TimeoutError ...`) with how often each happened. */
  failures: Record<string, number>;
  messagesPerSecond: number;
  latencyMs: { p50: number; p90: number; p95: number; p99: number; max: number; mean: number };
}

/** One request: resolves to the number of messages accepted, or throws to count a failure. */
export type SendOne = () => Promise<number>;

export async function runClosedLoop(options: {
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
  send: SendOne;
}): Promise<PhaseResult> {
  const { concurrency, send } = options;
  const startedAt = performance.now();
  const measureFrom = startedAt + options.warmupSeconds * 1000;
  const stopAt = measureFrom + options.seconds * 1000;

  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  let acceptedMessages = 0;
  let failedRequests = 0;
  let lastAnswerAt = measureFrom;

  const worker = async () => {
    while (performance.now() < stopAt) {
      const sentAt = performance.now();
      const counted = sentAt >= measureFrom;
      try {
        const accepted = await send();
        const answeredAt = performance.now();
        if (counted) {
          latencies.push(answeredAt - sentAt);
          acceptedMessages += accepted;
          lastAnswerAt = Math.max(lastAnswerAt, answeredAt);
        }
      } catch (error) {
        if (counted) {
          failedRequests += 1;
          const reason = describeFailure(error);
          failures[reason] = (failures[reason] ?? 0) + 1;
        }
        // Do not spin on a target that refuses at once.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));

  const seconds = (lastAnswerAt - measureFrom) / 1000;
  return {
    seconds: round(seconds, 3),
    requests: latencies.length + failedRequests,
    acceptedMessages,
    failedRequests,
    failures,
    messagesPerSecond: Math.round(acceptedMessages / seconds),
    latencyMs: summarizeLatencies(latencies),
  };
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 200);
  return String(error).slice(0, 200);
}

/** Nearest-rank percentiles, maximum and mean of some latencies in ms, rounded to 0.01 ms. */
export function summarizeLatencies(latencies: readonly number[]): PhaseResult['latencyMs'] {
  if (latencies.length === 0) return { p50: NaN, p90: NaN, p95: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(latencies).sort();
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return {
    p50: round(quantile(0.5), 2),
    p90: round(quantile(0.9), 2),
    p95: round(quantile(0.95), 2),
    p99: round(quantile(0.99), 2),
    max: round(sorted[sorted.length - 1], 2),
    mean: round(mean, 2),
  };
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The entry with the median value (the upper one of an even count), as the rounds are reported. */
export function medianBy<T>(entries: readonly T[], value: (entry: T) => number): T {
  return [...entries].sort((a, b) => value(a) - value(b))[Math.floor(entries.length / 2)];
}
