/**
 * Phase 6 (`dedupe`): what the long dedupe window costs in RAM. After a run-in of half as many, it
 * sends BENCH_DEDUPE_IDS (2,000,000) messages with unique messageIds to `/v1/batch`; at both ends it
 * waits until the server's dedupe index has read them all and JetStream's guard window has passed
 * over them, and it divides the growth of resident memory (nats-server plus the Tributary server,
 * worker threads included) by the number of ids: the bytes each id of the window costs. Resident
 * memory is the lowest of the samples taken every 500 ms over BENCH_DEDUPE_REST_SECONDS (10) of
 * rest, since V8 and Go heaps breathe. nats-server's part is its Go heap in use right after a
 * collection the bench forces through its profiling port, where it has one: its resident memory
 * moved with the heap Go returned to the system between the two ends, which once made the figure
 * negative (-32.4 bytes per id, 2026-11-28).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BatchPoster } from './batch-poster';
import type { BenchMessages } from './bench-messages';
import { round } from './load-loop';

export interface DedupeMemoryResult {
  ids: number;
  seconds: number;
  messagesPerSecond: number;
  guardWindow: string;
  /** `nats`: its heap in use after a forced collection, or its resident memory (`natsMemory`). */
  rssBeforeMb: { nats: number; tributary: number };
  rssAfterMb: { nats: number; tributary: number };
  natsMemory: 'heap in use after a collection' | 'resident';
  bytesPerId: number;
  /** The index file with its write-ahead log (every id the bench sent, earlier phases included). */
  indexFileMb: number | null;
  failedRequests: number;
}

export function residentBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The floor of resident memory over a few seconds of rest: a V8 or Go heap that has not collected
 * its garbage yet only ever adds to a sample, so the lowest one is the memory actually held.
 */
async function restingResident(
  pids: {
    nats?: number;
    tributary: number;
  },
  restSeconds: number,
  natsProfileUrl: string | undefined,
): Promise<{ nats: number; tributary: number }> {
  let nats = Number.POSITIVE_INFINITY;
  let tributary = Number.POSITIVE_INFINITY;
  for (let sample = 0; sample < Math.max(1, restSeconds * 2); sample += 1) {
    if (!natsProfileUrl) nats = Math.min(nats, residentBytes(pids.nats));
    tributary = Math.min(tributary, residentBytes(pids.tributary));
    await sleep(500);
  }
  if (natsProfileUrl) nats = await natsHeapInUse(natsProfileUrl);
  return { nats, tributary };
}

/**
 * nats-server's Go heap in use, read right after a collection: its heap profile endpoint runs one
 * first (`gc=1`) and prints the runtime's memory statistics with it (`debug=1`).
 */
async function natsHeapInUse(profileUrl: string): Promise<number> {
  const response = await fetch(`${profileUrl}/debug/pprof/heap?gc=1&debug=1`);
  const text = await response.text();
  const match = /^# HeapInuse = (\d+)$/m.exec(text);
  if (!response.ok || !match)
    throw new Error(`nats-server's heap profile answered ${response.status} without HeapInuse`);
  return Number(match[1]);
}

/** Waits until `/health/ready` answers 200: the dedupe index has caught up with the log. */
async function untilReady(baseUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await fetch(`${baseUrl}/health/ready`).catch(() => undefined);
    if (response?.status === 200) return;
    await sleep(200);
  }
  throw new Error(`the server was not ready within ${timeoutMs} ms after the dedupe phase`);
}

export async function measureDedupeMemory(options: {
  baseUrl: string;
  writeKey: string;
  messages: BenchMessages;
  pids: { nats?: number; tributary: number };
  ids: number;
  concurrency: number;
  batchSize: number;
  guardWindowMs: number;
  guardWindowText: string;
  /** The server's DATA_DIR, where `dedupe-index.sqlite` lives. */
  dataDirectory: string;
  /** Seconds of rest sampled at each end. */
  restSeconds: number;
  /** nats-server's profiling listener (`--profile`), `http://host:port`; absent: its resident memory. */
  natsProfileUrl?: string;
}): Promise<DedupeMemoryResult> {
  const poster = new BatchPoster(options.baseUrl, options.writeKey, options.concurrency);
  try {
    // Run in first (half the ids), so one-time growth (JIT, buffers, page tables, the guard window's
    // map at its full size, heaps grown to their working size) is in the baseline: the figure is
    // what each further id of the window adds, measured the same way at both ends.
    await sendUnique(poster, options, Math.round(options.ids / 2));
    await untilReady(options.baseUrl, 120_000);
    await sleep(options.guardWindowMs + 3_000);
    const before = await restingResident(options.pids, options.restSeconds, options.natsProfileUrl);
    const startedAt = performance.now();
    const { accepted, failedRequests } = await sendUnique(poster, options, options.ids);
    const seconds = (performance.now() - startedAt) / 1000;
    await untilReady(options.baseUrl, 120_000);
    // JetStream forgets the guard window's ids once it has passed; the index keeps them.
    await sleep(options.guardWindowMs + 3_000);
    const after = await restingResident(options.pids, options.restSeconds, options.natsProfileUrl);
    const growth = after.nats + after.tributary - (before.nats + before.tributary);
    return {
      ids: accepted,
      seconds: round(seconds, 1),
      messagesPerSecond: Math.round(accepted / seconds),
      guardWindow: options.guardWindowText,
      rssBeforeMb: { nats: megabytes(before.nats), tributary: megabytes(before.tributary) },
      rssAfterMb: { nats: megabytes(after.nats), tributary: megabytes(after.tributary) },
      natsMemory: options.natsProfileUrl ? 'heap in use after a collection' : 'resident',
      bytesPerId: round(growth / accepted, 1),
      indexFileMb: indexFileMegabytes(options.dataDirectory),
      failedRequests,
    };
  } finally {
    poster.close();
  }
}

async function sendUnique(
  poster: BatchPoster,
  options: { messages: BenchMessages; concurrency: number; batchSize: number },
  count: number,
): Promise<{ accepted: number; failedRequests: number }> {
  let sent = 0;
  let accepted = 0;
  let failedRequests = 0;
  const worker = async () => {
    while (sent < count) {
      sent += options.batchSize;
      try {
        const stored = await poster.send(options.messages.batchBody(options.batchSize), options.batchSize);
        accepted += stored;
      } catch {
        failedRequests += 1;
        sent -= options.batchSize;
        await sleep(50);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { accepted, failedRequests };
}

function indexFileMegabytes(dataDirectory: string): number | null {
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(join(dataDirectory, `dedupe-index.sqlite${suffix}`)).size;
    } catch {
      // no write-ahead log right now
    }
  }
  return total > 0 ? megabytes(total) : null;
}

function perId(growthMb: number, ids: number): number {
  return round((growthMb * 1024 * 1024) / ids, 1);
}

function megabytes(bytes: number): number {
  return round(bytes / 1024 / 1024, 1);
}

export function printDedupeMemory(result: DedupeMemoryResult): void {
  console.log(
    `dedupe phase: ${result.ids} unique ids in ${result.seconds} s (${result.messagesPerSecond} msg/s), ` +
      `guard window ${result.guardWindow}; MB before nats ${result.rssBeforeMb.nats} + tributary ` +
      `${result.rssBeforeMb.tributary}, after nats ${result.rssAfterMb.nats} + tributary ${result.rssAfterMb.tributary} ` +
      `(nats-server: ${result.natsMemory}; tributary: resident)` +
      (result.failedRequests > 0 ? `; ${result.failedRequests} requests failed and were sent again` : ''),
  );
  console.log(
    `dedupe memory per id: ${result.bytesPerId} bytes (goal: at most 16; nats-server ` +
      `${perId(result.rssAfterMb.nats - result.rssBeforeMb.nats, result.ids)}, tributary ` +
      `${perId(result.rssAfterMb.tributary - result.rssBeforeMb.tributary, result.ids)}); index file ` +
      `${result.indexFileMb ?? '?'} MB (every id the bench sent, earlier phases and warm-up included)`,
  );
}
