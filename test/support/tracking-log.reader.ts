import { JetStreamMessageIdFeed } from '@tributary/dedupe';

/** Every message id stored in TRACKING, in sequence order, read back headers-only from the server. */
export async function storedTrackingMessageIds(natsUrl: string): Promise<string[]> {
  const feed = await JetStreamMessageIdFeed.connect(natsUrl);
  try {
    const { lastSequence } = await feed.describe();
    if (lastSequence === 0) return [];
    const messageIds: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const subscription = await feed.follow(1, async (batch) => {
      messageIds.push(...batch.messageIds);
      if (batch.sequences[batch.sequences.length - 1] >= lastSequence) done();
    });
    await finished;
    await subscription.stop();
    return messageIds;
  } finally {
    await feed.close();
  }
}

/** How many times each id was stored. */
export function copiesOf(stored: string[], messageIds: string[]): number[] {
  const counts = new Map<string, number>();
  for (const id of stored) counts.set(id, (counts.get(id) ?? 0) + 1);
  return messageIds.map((id) => counts.get(id) ?? 0);
}
