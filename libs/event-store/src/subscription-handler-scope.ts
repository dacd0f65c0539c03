import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Remembers which subscription's handler the current async call chain runs in.
 *
 * `Subscription.stop()` waits for the running handler call to return. A handler that stops its own
 * subscription would then wait for itself forever; with this scope `stop()` can tell that case apart
 * and return without waiting.
 */
const runningHandler = new AsyncLocalStorage<object>();

export function runInHandlerScope<T>(subscription: object, call: () => T): T {
  return runningHandler.run(subscription, call);
}

export function isInsideHandlerOf(subscription: object): boolean {
  return runningHandler.getStore() === subscription;
}

/** Last resort for a dying subscription that nobody asked to be told about. */
export function reportUnobservedSubscriptionError(adapterName: string, error: Error): void {
  console.error(`${adapterName}: subscription stopped after an error and no onError was given`, error);
}

export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
