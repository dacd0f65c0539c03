import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { BatchSenderOptions, sendBatch, ServerRejection } from './batch-sender';
import { readLines } from './ndjson-lines';
import { FileIdentity, identifyFile, loadResumePoint, ResumePoint, saveResumePoint } from './resume-point';

/** The tracking API refuses a whole request holding a message over 32 KiB (docs/tracking-api.md §8.3). */
export const MAX_MESSAGE_BYTES = 32 * 1024;
/** Under the 512 KiB body limit, with room for the envelope. */
export const DEFAULT_MAX_BATCH_BYTES = 480 * 1024;
/** The server keeps the first 2,500 messages of a batch and rejects the rest. */
export const MAX_BATCH_SIZE = 2500;
/** How many bad lines and rejections are kept with their details; the rest are only counted. */
const DETAIL_LIMIT = 100;

export interface ImportOptions extends Omit<BatchSenderOptions, 'onRetry'> {
  file: string;
  resumeFile: string;
  /** Ignore (and overwrite) an existing resume point. */
  restart: boolean;
  batchSize: number;
  maxBatchBytes?: number;
  progress?: ImportProgressListener;
}

export interface ImportProgressListener {
  start(state: ImportState): void;
  update(state: ImportState): void;
  badLine(line: BadLine): void;
  retry(attempt: number, reason: string, waitMs: number, firstLine: number, lastLine: number): void;
  stop(state: ImportState): void;
}

export interface BadLine {
  line: number;
  reason: string;
}

export interface RejectedMessage {
  line: number;
  messageId?: string;
  code: string;
  message: string;
}

export interface RefusedBatch {
  firstLine: number;
  lastLine: number;
  messages: number;
  status: number;
  code: string;
  message: string;
}

export interface ImportState {
  fileSize: number;
  bytesRead: number;
  linesRead: number;
  accepted: number;
  badLines: number;
  retriedBatches: number;
}

export interface ImportSummary {
  status: 'completed' | 'interrupted' | 'aborted';
  /** Why an aborted import stopped. */
  reason?: string;
  /** Who stopped an aborted import: the server refused the write key, or gave no answer through every retry. */
  abortedBy?: 'refused' | 'unreachable';
  file: string;
  resumeFile: string;
  /** Lines up to this one were done in an earlier run and were not read again. */
  resumedAfterLine: number;
  /** The resume point now: rerunning continues after this line. */
  lastAcceptedLine: number;
  /** Lines read in this run (blank ones included), after the resume point. */
  linesRead: number;
  blankLines: number;
  badLines: number;
  badLineDetails: BadLine[];
  /** Messages in batches the server answered (accepted or refused) in this run, each counted once. */
  sent: number;
  accepted: number;
  rejected: number;
  rejectedByCode: Record<string, number>;
  rejectedDetails: RejectedMessage[];
  refusedBatches: RefusedBatch[];
  /** Messages in refused batches. */
  refusedMessages: number;
  batches: number;
  retriedBatches: number;
  retries: number;
  durationMs: number;
}

interface PendingMessage {
  line: number;
  message: Record<string, unknown>;
  bytes: number;
}

/**
 * A historical import: reads the file line by line after the resume point, sends batches to
 * `/v1/import` one at a time, and moves the resume point after every batch the server answered for
 * good. Lines that are not JSON objects, or too large for the server, are reported and skipped.
 */
export async function importNdjson(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const identity: FileIdentity = identifyFile(options.file);
  const earlier = options.restart ? undefined : loadResumePoint(options.resumeFile, identity);
  const resumedAfterLine = earlier?.lastAcceptedLine ?? 0;
  const maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  const summary: ImportSummary = {
    status: 'completed',
    file: identity.file,
    resumeFile: options.resumeFile,
    resumedAfterLine,
    lastAcceptedLine: resumedAfterLine,
    linesRead: 0,
    blankLines: 0,
    badLines: 0,
    badLineDetails: [],
    sent: 0,
    accepted: 0,
    rejected: 0,
    rejectedByCode: {},
    rejectedDetails: [],
    refusedBatches: [],
    refusedMessages: 0,
    batches: 0,
    retriedBatches: 0,
    retries: 0,
    durationMs: 0,
  };
  const state: ImportState = {
    fileSize: identity.size,
    bytesRead: 0,
    linesRead: 0,
    accepted: 0,
    badLines: 0,
    retriedBatches: 0,
  };
  let acceptedOverall = earlier?.acceptedMessages ?? 0;
  const persist = (completed: boolean) =>
    saveResumePoint(options.resumeFile, {
      version: 1,
      ...identity,
      lastAcceptedLine: summary.lastAcceptedLine,
      acceptedMessages: acceptedOverall,
      completed,
      updatedAt: new Date().toISOString(),
    } satisfies ResumePoint);

  options.progress?.start(state);
  let batch: PendingMessage[] = [];
  let batchBytes = 0;
  /** The last line read so far, so that a batch ending in bad or blank lines still moves the point past them. */
  let lastLineRead = resumedAfterLine;

  /** Sends the pending batch; false when the import must stop. */
  const flush = async (): Promise<boolean> => {
    const lastLine = lastLineRead;
    if (batch.length === 0) {
      if (lastLine > summary.lastAcceptedLine) {
        summary.lastAcceptedLine = lastLine;
        persist(false);
      }
      return true;
    }
    const sending = batch;
    batch = [];
    batchBytes = 0;
    const firstLine = sending[0].line;
    const outcome = await sendBatch(
      sending.map((pending) => pending.message),
      {
        ...options,
        onRetry: (attempt, reason, waitMs) =>
          options.progress?.retry(attempt, reason, waitMs, firstLine, lastLine),
      },
    );
    if (outcome.attempts > 1) {
      summary.retriedBatches += 1;
      summary.retries += outcome.attempts - 1;
      state.retriedBatches = summary.retriedBatches;
    }
    if (outcome.kind === 'gave-up') {
      summary.status = outcome.interrupted ? 'interrupted' : 'aborted';
      if (!outcome.interrupted) summary.abortedBy = 'unreachable';
      summary.reason = `batch of lines ${firstLine}-${lastLine}: ${outcome.reason}`;
      return false;
    }
    summary.batches += 1;
    summary.sent += sending.length;
    if (outcome.kind === 'refused') {
      // A wrong or deleted write key fails every batch the same way: stop instead of refusing them all.
      if (outcome.status === 401 || outcome.status === 403) {
        summary.sent -= sending.length;
        summary.batches -= 1;
        summary.status = 'aborted';
        summary.abortedBy = 'refused';
        summary.reason = `the server refused the write key: HTTP ${outcome.status} ${outcome.code}: ${outcome.message}`;
        return false;
      }
      summary.refusedBatches.push({
        firstLine,
        lastLine,
        messages: sending.length,
        status: outcome.status,
        code: outcome.code,
        message: outcome.message,
      });
      summary.refusedMessages += sending.length;
    } else {
      for (const rejection of outcome.rejected) recordRejection(summary, sending, rejection);
      const accepted = sending.length - outcome.rejected.length;
      summary.accepted += accepted;
      acceptedOverall += accepted;
      state.accepted = summary.accepted;
    }
    summary.lastAcceptedLine = lastLine;
    persist(false);
    options.progress?.update(state);
    return true;
  };

  /** Set when a batch could not be sent: the lines read after the resume point stay unsent. */
  let sendFailed = false;
  // The bar's redraw timer must stop even when reading fails, or the process would not exit.
  try {
    if (!earlier?.completed) {
      const stream = createReadStream(options.file, { highWaterMark: 256 * 1024 });
      try {
        for await (const line of readLines(stream)) {
          state.bytesRead = line.bytesRead;
          if (line.lineNumber <= resumedAfterLine) continue;
          lastLineRead = line.lineNumber;
          summary.linesRead += 1;
          state.linesRead = summary.linesRead;
          const parsed = parseLine(line.text, line.lineNumber, options.writeKey);
          if (parsed === 'blank') {
            summary.blankLines += 1;
          } else if ('reason' in parsed) {
            summary.badLines += 1;
            state.badLines = summary.badLines;
            if (summary.badLineDetails.length < DETAIL_LIMIT) summary.badLineDetails.push(parsed);
            options.progress?.badLine(parsed);
          } else {
            if (batch.length > 0 && batchBytes + parsed.bytes + 1 > maxBatchBytes) {
              // The line just read belongs to the next batch: this one ends on the line before.
              lastLineRead = line.lineNumber - 1;
              const carried = parsed;
              if (!(await flush())) {
                sendFailed = true;
                break;
              }
              lastLineRead = line.lineNumber;
              batch.push(carried);
              batchBytes += carried.bytes + 1;
            } else {
              batch.push(parsed);
              batchBytes += parsed.bytes + 1;
            }
            if (batch.length >= options.batchSize) {
              if (!(await flush())) {
                sendFailed = true;
                break;
              }
            }
          }
          if (options.interrupt?.aborted) {
            summary.status = 'interrupted';
            break;
          }
        }
      } finally {
        stream.destroy();
      }
      // An interrupt still sends what was read (less than one batch), and the resume point then covers it.
      if (!sendFailed && !(await flush())) sendFailed = true;
      if (!sendFailed && summary.status === 'completed') persist(true);
    }
  } finally {
    options.progress?.stop(state);
  }
  summary.durationMs = Date.now() - started;
  return summary;
}

function recordRejection(
  summary: ImportSummary,
  batch: readonly PendingMessage[],
  rejection: ServerRejection,
): void {
  summary.rejected += 1;
  summary.rejectedByCode[rejection.code] = (summary.rejectedByCode[rejection.code] ?? 0) + 1;
  if (summary.rejectedDetails.length < DETAIL_LIMIT) {
    summary.rejectedDetails.push({
      line: batch[rejection.index]?.line ?? -1,
      messageId: rejection.messageId,
      code: rejection.code,
      message: rejection.message,
    });
  }
}

/** One line as a message to send, a bad line with its reason, or a blank line (skipped silently). */
export function parseLine(
  text: string,
  lineNumber: number,
  idSeed: string,
): PendingMessage | BadLine | 'blank' {
  if (text.trim() === '') return 'blank';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { line: lineNumber, reason: `not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      line: lineNumber,
      reason: `not a JSON object (${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})`,
    };
  }
  const message = value as Record<string, unknown>;
  // Historical import: each message keeps its own `timestamp`; a `sentAt` would make the server
  // correct it for clock skew against today's clock.
  delete message.sentAt;
  // A stable id for lines without one: a retried or rerun batch is then deduplicated by the server
  // instead of being stored twice under two generated ids. The write key is part of it because
  // deduplication is global: the same line of two files for two sources must stay two messages.
  if (message.messageId === undefined || message.messageId === null || message.messageId === '') {
    const seed = `${idSeed}\n${lineNumber}\n${text}`;
    message.messageId = `import-${createHash('sha256').update(seed).digest('hex').slice(0, 40)}`;
  }
  const bytes = Buffer.byteLength(JSON.stringify(message));
  if (bytes > MAX_MESSAGE_BYTES) {
    return { line: lineNumber, reason: `message of ${bytes} bytes is larger than the server's 32 KiB limit` };
  }
  return { line: lineNumber, message, bytes };
}
