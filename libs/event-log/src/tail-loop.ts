import type { TailEnd, TailHandler, TailSubscription } from './event-log.port';

/**
 * The part of a tail both adapters share: one handler call at a time, `stop()` that waits for the
 * call in progress, and `ended` that says why it ended. The adapter supplies `run`, which reads
 * messages and hands each one to `deliver` until `isStopped()` is true.
 */
export function startTail(
  run: (deliver: TailHandler, isStopped: () => boolean) => Promise<void>,
  handler: TailHandler,
  onStop: () => Promise<void> | void,
): TailSubscription {
  let stopped = false;
  const isStopped = () => stopped;
  const ended: Promise<TailEnd> = run(async (message) => {
    if (!stopped) await handler(message);
  }, isStopped).then(
    (): TailEnd => ({ reason: 'stopped' }),
    (error: unknown): TailEnd => (stopped ? { reason: 'stopped' } : { reason: 'failed', error }),
  );
  let stopping: Promise<void> | undefined;
  return {
    ended,
    stop() {
      stopping ??= (async () => {
        stopped = true;
        await onStop();
        await ended;
      })();
      return stopping;
    },
  };
}
