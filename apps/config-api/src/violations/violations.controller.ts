import { sourceName } from '@tributary/contracts';
import { Get, Inject, Query } from '@nestjs/common';
import type { SourceView } from '@tributary/config-projections';
import { ApiTags } from '@nestjs/swagger';
import {
  EventLogUnavailableError,
  PROTOCOLS_OUTCOMES,
  type ProtocolsOutcomeStore,
} from '@tributary/event-log';
import {
  MAX_OUTCOMES_SUMMARIZED,
  summarizeViolations,
  VIOLATION_WINDOWS,
  type ProtocolsOutcome,
  type ViolationWindow,
} from '@tributary/protocols';
import { ConfigApiController, ConfigApiError, SourceInPath } from '@tributary/config-api-access';

/**
 * Tracking-plan violations of a source over the last hour, day or week (docs/protocols.md R13), a
 * Tributary extension: Segment shows these only in its UI. Counted from the outcomes every tracking
 * API replica records in the message log's store, so every replica's messages are in the answer.
 * Only the newest `MAX_OUTCOMES_SUMMARIZED` outcomes of the window are read (`truncated` says so).
 */
@ApiTags('tracking plans')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/violations')
export class ViolationsController {
  constructor(@Inject(PROTOCOLS_OUTCOMES) private readonly outcomes: ProtocolsOutcomeStore) {}

  @Get()
  async summary(@SourceInPath() { source }: SourceView, @Query() query: { window?: string }) {
    const window = query.window ?? '24h';
    if (typeof window !== 'string' || !Object.hasOwn(VIOLATION_WINDOWS, window)) {
      throw ConfigApiError.invalidArgument(
        `window must be one of ${Object.keys(VIOLATION_WINDOWS).join(', ')}; got ${JSON.stringify(window)}`,
      );
    }
    const now = new Date();
    const since = new Date(now.getTime() - VIOLATION_WINDOWS[window as ViolationWindow]);
    let recorded;
    try {
      // One more than is counted tells whether the window held more.
      recorded = await this.outcomes.readProtocolsOutcomes(
        source.sourceId,
        since,
        MAX_OUTCOMES_SUMMARIZED + 1,
      );
    } catch (error) {
      if (error instanceof EventLogUnavailableError) {
        throw ConfigApiError.unavailable('the message log is unavailable; retry later');
      }
      throw error;
    }
    const readAll = recorded.length <= MAX_OUTCOMES_SUMMARIZED;
    const summary = summarizeViolations(
      recorded.slice(-MAX_OUTCOMES_SUMMARIZED).map((record) => ({
        outcome: record.outcome as unknown as ProtocolsOutcome,
        recordedAt: record.recordedAt,
      })),
      window as ViolationWindow,
      now,
      readAll,
    );
    return { name: `${sourceName(source)}/violations`, ...summary };
  }
}
