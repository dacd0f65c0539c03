import { destinationName } from '@tributary/contracts';
import { DestinationRecord, ReplayRecord } from '@tributary/config-domain';
import { withMilliseconds } from '../shared/timestamps';

export function presentReplay(destination: DestinationRecord, replay: ReplayRecord) {
  return {
    name: `${destinationName(destination)}/replays/${replay.replayId}`,
    start_time: withMilliseconds(replay.startTime),
    end_time: replay.endTime === null ? null : withMilliseconds(replay.endTime),
    state: replay.state,
    counts: replay.counts ?? null,
    failure_reason: replay.failureReason,
    create_time: withMilliseconds(replay.createTime),
    finish_time: replay.finishTime === null ? null : withMilliseconds(replay.finishTime),
  };
}
