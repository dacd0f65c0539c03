// What the Config API's end-to-end suites check besides HTTP (the client is test/support's): the
// shapes of ids and timestamps, and the events a request left in the instance's own event store.
import { EVENT_STORE, EventStore, RecordedEvent } from '@tributary/event-store';
import type { TributaryTestInstance } from '../../../../test/support/tributary-test-instance';

export const RFC3339_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const WRITE_KEY = /^[A-Za-z0-9]{32}$/;
export const ACCESS_TOKEN = /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/;
export const KSUID = /^[0-9A-Za-z]{27}$/;

export function eventStoreOf(instance: TributaryTestInstance): EventStore {
  return instance.app.get<EventStore>(EVENT_STORE);
}

/** Every event in the store, in position order: a catch-up subscription stopped once caught up. */
export async function readAllEvents(store: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let subscription: { stop(): Promise<void> } | undefined;
  await new Promise<void>((resolve, reject) => {
    subscription = store.subscribeToAll((event) => void events.push(event), {
      onCaughtUp: resolve,
      onError: reject,
    });
  });
  await subscription?.stop();
  return events;
}
