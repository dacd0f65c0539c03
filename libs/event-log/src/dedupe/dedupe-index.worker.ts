import { parentPort, workerData } from 'node:worker_threads';
import type { DedupeIndexSettings } from './dedupe-index.port';
import { HourBucketedStore } from './hour-bucketed.store';

/** One request to the worker; `id` pairs it with its answer. */
export type DedupeWorkerRequest =
  | { id: number; operation: 'lookup'; messageIds: string[]; now: number }
  | {
      id: number;
      operation: 'record';
      messageIds: string[];
      sequences: number[];
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
          const sequences = store.lookup(request.messageIds, request.now);
          port.postMessage({ id: request.id, result: sequences }, [sequences.buffer as ArrayBuffer]);
          return;
        }
        case 'record':
          store.record(
            request.messageIds,
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

serve();
