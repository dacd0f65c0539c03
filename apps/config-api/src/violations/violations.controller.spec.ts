// The violations summary reads a bounded number of outcomes, on a real SQLite message log.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SourceView } from '@tributary/config-projections';
import { SqliteEventLog } from '@tributary/event-log';
import { MAX_OUTCOMES_SUMMARIZED, MAX_VIOLATIONS_PER_MESSAGE } from '@tributary/protocols';
import { ViolationsController } from './violations.controller';

describe('ViolationsController', () => {
  let directory: string;
  let log: SqliteEventLog;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-violations-'));
    log = await SqliteEventLog.open({
      file: join(directory, 'event-log.sqlite'),
      dedupeWindowMs: 60_000,
      retentionMs: 3_600_000,
    });
  });

  afterAll(async () => {
    await log.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const source = {
    source: { workspaceSlug: 'ws', sourceSlug: 'web', sourceId: 'src_web' },
  } as unknown as SourceView;

  it('counts the newest outcomes only, says so, and holds a bounded amount in memory over 20,000 outcomes of 100 violations', async () => {
    const sample = {
      type: 'track',
      event: 'Order',
      messageId: 'x',
      properties: { padding: 'p'.repeat(2_000) },
    };
    const violations = Array.from({ length: MAX_VIOLATIONS_PER_MESSAGE }, (_, index) => ({
      type: 'Invalid Type',
      field: `properties.a.${index}`,
      description: 'Invalid type. Expected: string, given: integer',
    }));
    for (let batch = 0; batch < 20; batch += 1) {
      await log.recordProtocolsOutcomes(
        Array.from({ length: 1_000 }, (_, index) => ({
          workspaceId: 'ws1',
          sourceId: 'src_web',
          messageId: `m${batch * 1_000 + index}`,
          outcome: { messageType: 'track', eventName: 'Order', violations, violationsTruncated: 5, sample },
        })),
      );
    }
    const controller = new ViolationsController(log);
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();

    const summary = await controller.summary(source, { window: '24h' });

    const elapsed = performance.now() - started;
    const grown = process.memoryUsage().heapUsed - before;
    expect(summary).toMatchObject({
      outcomes_counted: MAX_OUTCOMES_SUMMARIZED,
      truncated: true,
      total_violations: MAX_OUTCOMES_SUMMARIZED * (MAX_VIOLATIONS_PER_MESSAGE + 5),
    });
    expect(summary.violations).toHaveLength(100);
    expect(summary.violations[0]).toMatchObject({ count: MAX_OUTCOMES_SUMMARIZED });
    expect(summary.violations[0].samples).toHaveLength(3);
    // 20,000 outcomes of ~14 KB would be ~280 MB as objects; the newest 1,000 stay well under this.
    expect(grown).toBeLessThan(100 * 1024 * 1024);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('answers 400 for an unknown window', async () => {
    await expect(new ViolationsController(log).summary(source, { window: '2d' })).rejects.toMatchObject({
      status: 400,
      code: 3,
    });
  });
});
