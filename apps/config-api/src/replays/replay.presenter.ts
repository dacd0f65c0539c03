import { destinationName } from '@tributary/contracts';
import { DestinationRecord, ReplayRecord } from '@tributary/config-domain';
import type { ReplayProgress } from '@tributary/routing';
import { withMilliseconds } from '../shared/timestamps';

/** `progress` only for one replay read while it runs (docs/config-api.md §7); null otherwise. */
export function presentReplay(
  destination: DestinationRecord,
  replay: ReplayRecord,
  progress: ReplayProgress | null = null,
) {
  return {
    name: `${destinationName(destination)}/replays/${replay.replayId}`,
    start_time: withMilliseconds(replay.startTime),
    end_time: replay.endTime === null ? null : withMilliseconds(replay.endTime),
    state: replay.state,
    counts: replay.counts ?? null,
    failure_reason: replay.failureReason,
    progress,
    cancel_request_time: replay.cancelRequestTime ? withMilliseconds(replay.cancelRequestTime) : null,
    create_time: withMilliseconds(replay.createTime),
    finish_time: replay.finishTime === null ? null : withMilliseconds(replay.finishTime),
  };
}
