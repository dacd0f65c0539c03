import { parentPort, workerData } from 'node:worker_threads';
import type { DedupeIndexSettings } from './dedupe-index.port';
import { HourBucketedStore } from './hour-bucketed.store';

/**
 * Ids cross the thread boundary as one string joined by a line break, which no message id contains
 * (the log refuses it: it would end the `Nats-Msg-Id` header): cloning one string is a copy, cloning
 * an array of strings costs a structured-clone step per string.
 */
export const ID_SEPARATOR = '\n';

/** One request to the worker; `id` pairs it with its answer. */
export type DedupeWorkerRequest =
  | { id: number; operation: 'lookup'; messageIds: string; now: number }
  | {
      id: number;
      operation: 'record';
      messageIds: string;
      sequences: Float64Array;
      checkpointSequence: number;
      logIdentity: string;
      now: number;
    }
  | { id: number; operation: 'checkpoint' | 'stats' | 'close' }
  | { id: number; operation: 'reset'; checkpointSequence: number; logIdentity: string }
  | { id: number; operation: 'expire'; now: number };

export type DedupeWorkerAnswer = { id: number; result?: unknown; error?: string };

export interface DedupeWorkerData {
  file: string;
  settings: DedupeIndexSettings;
}

/**
 * The worker thread that owns the dedupe index's store. Requests are served one at a time in arrival
 * order, so a lookup sent after a record always sees it.
 */
function serve(): void {
  const port = parentPort;
  if (!port) return;
  const { file, settings } = workerData as DedupeWorkerData;
  let store: HourBucketedStore;
  try {
    store = new HourBucketedStore(file, settings);
  } catch (error) {
    port.postMessage({ id: 0, error: error instanceof Error ? error.message : String(error) });
    return;
  }
  port.postMessage({ id: 0, result: 'ready' });
  port.on('message', (request: DedupeWorkerRequest) => {
    try {
      switch (request.operation) {
        case 'lookup': {
          const sequences = store.lookup(splitIds(request.messageIds), request.now);
          port.postMessage({ id: request.id, result: sequences }, [sequences.buffer as ArrayBuffer]);
          return;
        }
        case 'record':
          store.record(
            splitIds(request.messageIds),
            request.sequences,
            { sequence: request.checkpointSequence, logIdentity: request.logIdentity },
            request.now,
          );
          break;
        case 'checkpoint':
          port.postMessage({ id: request.id, result: store.checkpoint() });
          return;
        case 'reset':
          store.reset({ sequence: request.checkpointSequence, logIdentity: request.logIdentity });
          break;
        case 'expire':
          store.expire(request.now);
          break;
        case 'stats':
          port.postMessage({ id: request.id, result: store.stats() });
          return;
        case 'close':
          store.close();
          port.postMessage({ id: request.id });
          port.close();
          return;
      }
      port.postMessage({ id: request.id });
    } catch (error) {
      port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
}

function splitIds(joined: string): string[] {
  return joined === '' ? [] : joined.split(ID_SEPARATOR);
}

serve();
