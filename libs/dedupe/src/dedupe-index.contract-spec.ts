import { describeDedupeIndexContract } from './dedupe-index.contract';
import { SqliteDedupeIndex } from './sqlite-dedupe-index.adapter';
import { WorkerDedupeIndex } from './worker-dedupe-index.adapter';

describeDedupeIndexContract('sqlite, on the calling thread', {
  open: async (file, settings) => new SqliteDedupeIndex(file, settings),
});

describeDedupeIndexContract('sqlite, on a worker thread', {
  open: (file, settings) => WorkerDedupeIndex.start(file, settings),
});
