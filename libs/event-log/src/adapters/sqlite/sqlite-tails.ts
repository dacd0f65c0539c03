import type { Database, Statement } from '@tributary/sqlite';
import { assertTailOptions } from '../../event-log.validation';
import type {
  TailedMessage,
  TailHandler,
  TailOptions,
  TailSubscription,
} from '../../ports/tracking-log.port';
import { startTail } from '../../tail-loop';
import type { MessageRow } from './sqlite-event-log.schema';

/** Messages a tail reads per query; it reads the next page once the handler took these. */
const TAIL_PAGE = 256;

/**
 * Tails of one source in the embedded log: each reads the `messages` table page by page and, at its
 * end, waits to be woken by a commit that stored messages (or for the poll interval, which catches
 * another process's writes on the same file).
 */
export class SqliteTails {
  /** Running tails, each with the function that wakes it when messages were stored. */
  private readonly running = new Map<TailSubscription, () => void>();
  private readonly statements: { selectLastSequence: Statement; selectOfSource: Statement };

  constructor(
    database: Database,
    private readonly pollIntervalMs: number,
    private readonly isClosed: () => boolean,
    private readonly assertOpen: () => void,
  ) {
    this.statements = {
      selectLastSequence: database.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'messages'`),
      selectOfSource: database.prepare(
        `SELECT sequence, workspace_id, source_id, message_id, payload, published_at FROM messages
         WHERE source_id = ? AND sequence >= ? ORDER BY sequence LIMIT ?`,
      ),
    };
  }

  tail(options: TailOptions, handler: TailHandler): TailSubscription {
    assertTailOptions(options);
    this.assertOpen();
    const lastSequence = (this.statements.selectLastSequence.get() as { seq: number } | undefined)?.seq ?? 0;
    const after = options.afterSequence;
    let nextSequence = after === undefined || after > lastSequence ? lastSequence + 1 : after + 1;
    // A wake-up that arrives while a page is being read must not be lost: it is remembered in `woken`.
    let woken = false;
    let wakeWaiter: (() => void) | undefined;
    const wake = () => {
      woken = true;
      wakeWaiter?.();
    };
    const untilWokenOrPolled = () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollIntervalMs);
        timer.unref();
        wakeWaiter = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => (wakeWaiter = undefined));
    const subscription = startTail(
      async (deliver, isStopped) => {
        while (!isStopped() && !this.isClosed()) {
          woken = false;
          const rows = this.statements.selectOfSource.all(
            options.sourceId,
            nextSequence,
            TAIL_PAGE,
          ) as MessageRow[];
          for (const row of rows) {
            if (isStopped()) return;
            await deliver(toTailedMessage(row));
            nextSequence = row.sequence + 1;
          }
          if (rows.length < TAIL_PAGE && !woken && !isStopped()) await untilWokenOrPolled();
        }
      },
      handler,
      wake,
    );
    this.running.set(subscription, wake);
    void subscription.ended.then(() => this.running.delete(subscription));
    return subscription;
  }

  /** Messages were stored: every tail reads on. */
  wakeAll(): void {
    this.running.forEach((wake) => wake());
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.keys()].map((subscription) => subscription.stop()));
  }
}

function toTailedMessage(row: MessageRow): TailedMessage {
  return {
    workspaceId: row.workspace_id,
    sourceId: row.source_id,
    messageId: row.message_id,
    sequence: row.sequence,
    publishedAt: new Date(row.published_at),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}
