import type { HourBucketedStore } from './hour-bucketed.store';

/**
 * Runs the store's merges in the idle time of the thread that owns it: one bounded step per turn of
 * the event loop (`setImmediate`), so the requests that arrive meanwhile are served between steps.
 */
export class BackgroundMergeScheduler {
  private nextStep: NodeJS.Immediate | undefined;
  private failure: Error | undefined;

  constructor(private readonly store: HourBucketedStore) {}

  /**
   * Called after each write to the store: starts stepping if merges are due. A step that failed is
   * reported here, on the write that follows it, as a failed group commit would be; merging then
   * starts over from the next call.
   */
  schedule(): void {
    const failure = this.failure;
    if (failure) {
      this.failure = undefined;
      throw new Error(`merging the dedupe index's runs failed: ${failure.message}`);
    }
    if (this.nextStep || !this.store.hasMergeWork) return;
    this.nextStep = setImmediate(() => this.step());
  }

  stop(): void {
    if (this.nextStep) clearImmediate(this.nextStep);
    this.nextStep = undefined;
  }

  private step(): void {
    this.nextStep = undefined;
    try {
      if (this.store.mergeStep()) this.nextStep = setImmediate(() => this.step());
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
  }
}
