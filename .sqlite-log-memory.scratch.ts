import { SqliteEventLog } from '@tributary/event-log';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function rss(): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
}

async function main() {
  const file = join(mkdtempSync(join(tmpdir(), 'sqlite-log-mem-')), 'event-log.sqlite');
  const log = await SqliteEventLog.open({ file, dedupeWindowMs: 86_400_000, retentionMs: 7 * 86_400_000 });
  const total = Number(process.argv[2] ?? 2_000_000);
  const batch = 500;
  let n = 0;
  const payload = { type: 'track', event: 'x', properties: { a: 1 } };
  const publishSome = async (count: number) => {
    for (let i = 0; i < count; i += batch * 8) {
      await Promise.all(Array.from({ length: 8 }, () => log.publishBatch(Array.from({ length: batch }, () => ({ workspaceId: 'ws', sourceId: 'src', messageId: `id-${++n}-${Math.random().toString(36).slice(2)}`, payload })))));
    }
  };
  await publishSome(100_000);
  global.gc?.();
  const before = rss();
  const started = Date.now();
  await publishSome(total);
  global.gc?.();
  await new Promise((r) => setTimeout(r, 1000));
  const after = rss();
  console.log(JSON.stringify({ ids: total, seconds: (Date.now() - started) / 1000, rssBeforeMb: before / 1048576, rssAfterMb: after / 1048576, bytesPerId: (after - before) / total }));
  await log.close();
}
void main();
