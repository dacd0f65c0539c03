import { Inject, Injectable } from '@nestjs/common';
import type { SourceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  PROTOCOLS_OUTCOMES,
  TRACKING_LOG,
  type MessageToPublish,
  type ProtocolsOutcomeStore,
  type PublishOutcome,
  type TrackingLog,
} from '@tributary/event-log';
import {
  blockedForward,
  judgeMessage,
  outcomeFor,
  violationForwards,
  type BlockedReason,
  type ForwardingOrigin,
  type TrackingMessage,
  type Verdict,
  type Violation,
} from '@tributary/protocols';
import { ProtocolsMetrics } from './protocols.metrics';
import { SourceEnforcementRegistry, type SourceEnforcement } from './source-enforcement.registry';

/** The messages of one request after Protocols, and what to do once they are in the log. */
export interface JudgedBatch {
  /** The source's messages to store come first (`sourceMessageCount` of them), then forwarded copies. */
  toPublish: MessageToPublish[];
  sourceMessageCount: number;
  /**
   * Runs after the log stored `toPublish` (outcomes in the same order): forwards violations of
   * first-seen messages, records first-seen outcomes for counting, and counts them in the metrics.
   * Rejects when the log is unavailable, so the request is answered 503 and the client retries;
   * forwards carry deterministic ids and records are deduplicated, so the retry does nothing twice.
   */
  afterStored(outcomes: PublishOutcome[]): Promise<void>;
}

interface Reported {
  original: TrackingMessage;
  violations: readonly Violation[];
  violationsTruncated: number;
  omitted: number;
  omittedOnViolation: number;
  /** Index of the stored message in `toPublish`. */
  position: number;
}

type ForwardOutcome = 'forwarded' | 'dropped' | 'off';

interface Blocked {
  original: TrackingMessage;
  reason: BlockedReason;
  violations: readonly Violation[];
  violationsTruncated: number;
  /** What became of its forwards, counted in the metrics once the message is known first-seen. */
  blockedForward: ForwardOutcome;
  violationForwards: ForwardOutcome;
}

const NOTHING_AFTER_STORED = async () => undefined;

/**
 * Tracking-plan enforcement at ingestion (docs/protocols.md): after request validation, before the
 * log append, each message of the request is judged alone against its source's compiled plan.
 */
@Injectable()
export class ProtocolsEnforcement {
  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    @Inject(PROTOCOLS_OUTCOMES) private readonly outcomes: ProtocolsOutcomeStore,
    private readonly readModel: ConfigReadModel,
    private readonly registry: SourceEnforcementRegistry,
    private readonly metrics: ProtocolsMetrics,
  ) {}

  /**
   * Null when the source has no plan (R0): the caller stores the messages as they are. A promise
   * only while the source's plan has no compiled version yet.
   */
  enforcementFor(source: SourceRecord): SourceEnforcement | null | Promise<SourceEnforcement | null> {
    return this.registry.enforcementFor(source);
  }

  judge(
    enforcement: SourceEnforcement,
    workspaceId: string,
    messages: readonly NormalizedMessage[],
    now: Date,
  ): JudgedBatch {
    const { source, plan, settings } = enforcement;
    const sourceId = source.sourceId;
    const toPublish: MessageToPublish[] = [];
    let reported: Reported[] | undefined;
    let blocked: Blocked[] | undefined;
    for (const message of messages) {
      const original = message as unknown as TrackingMessage;
      const verdict: Verdict = judgeMessage(plan, settings, sourceId, original);
      if (verdict.kind === 'block') {
        (blocked ??= []).push({
          original,
          reason: verdict.reason,
          violations: verdict.violations,
          violationsTruncated: verdict.violationsTruncated ?? 0,
          blockedForward: 'off',
          violationForwards: 'off',
        });
        continue;
      }
      if (verdict.changed) {
        (reported ??= []).push({
          original,
          violations: verdict.violations,
          violationsTruncated: verdict.violationsTruncated ?? 0,
          omitted: verdict.omitted.length,
          omittedOnViolation: verdict.omittedOnViolation.length,
          position: toPublish.length,
        });
      }
      toPublish.push({
        workspaceId,
        sourceId,
        messageId: original.messageId,
        payload: verdict.changed ? verdict.message : original,
      });
    }
    const sourceMessageCount = toPublish.length;
    if (!reported && !blocked) return { toPublish, sourceMessageCount, afterStored: NOTHING_AFTER_STORED };

    const origin = this.originOf(enforcement, now);
    // Blocked messages are first-seen or not only after the outcome store says so, but their
    // forwards have deterministic ids: sent with the request's messages, a retry is a duplicate.
    for (const message of blocked ?? []) {
      toPublish.push(...this.forwardsOfBlocked(enforcement, workspaceId, message, origin));
    }
    return {
      toPublish,
      sourceMessageCount,
      afterStored: (outcomes) =>
        this.afterStored(enforcement, workspaceId, origin, reported ?? [], blocked ?? [], outcomes),
    };
  }

  private async afterStored(
    enforcement: SourceEnforcement,
    workspaceId: string,
    origin: ForwardingOrigin,
    reported: Reported[],
    blocked: Blocked[],
    outcomes: PublishOutcome[],
  ): Promise<void> {
    const sourceId = enforcement.source.sourceId;
    // A message the log already had was judged (and counted, and forwarded) when it first came.
    const firstSeen = reported.filter((message) => !outcomes[message.position].duplicate);
    const violationTarget = this.forwardingTarget(enforcement, enforcement.settings.forwarding_violations_to);
    const forwards: MessageToPublish[] = [];
    for (const message of firstSeen) {
      if (message.violations.length === 0) continue;
      if (violationTarget === null) {
        this.metrics.recordForwards(sourceId, 'violation', 'dropped', 1);
        continue;
      }
      if (violationTarget === undefined) continue;
      for (const payload of violationForwards(
        message.original,
        message.violations,
        origin,
        message.violationsTruncated,
      )) {
        forwards.push({
          workspaceId,
          sourceId: violationTarget.sourceId,
          messageId: payload.messageId,
          payload,
        });
      }
    }
    if (forwards.length > 0) {
      await this.trackingLog.publishBatch(forwards);
      this.metrics.recordForwards(sourceId, 'violation', 'forwarded', forwards.length);
    }

    const toRecord = [
      ...blocked.map((message) => ({
        message: message.original,
        violations: message.violations,
        violationsTruncated: message.violationsTruncated,
        reason: message.reason as BlockedReason | undefined,
      })),
      ...firstSeen
        .filter((message) => message.violations.length > 0)
        .map((message) => ({
          message: message.original,
          violations: message.violations,
          violationsTruncated: message.violationsTruncated,
          reason: undefined,
        })),
    ];
    if (toRecord.length > 0) {
      const recorded = await this.outcomes.recordProtocolsOutcomes(
        toRecord.map(({ message, violations, violationsTruncated, reason }) => ({
          workspaceId,
          sourceId,
          messageId: message.messageId,
          outcome: outcomeFor(message, violations, reason, violationsTruncated) as unknown as Record<
            string,
            unknown
          >,
        })),
      );
      recorded.forEach((result, index) => {
        if (result.duplicate) return;
        const { violations, reason } = toRecord[index];
        this.metrics.recordViolations(sourceId, violations);
        if (reason) this.metrics.recordBlocked(sourceId, reason);
        // The first entries of toRecord are the blocked messages, in order.
        const blockedMessage = index < blocked.length ? blocked[index] : undefined;
        if (blockedMessage) {
          this.countForwards(sourceId, 'blocked', blockedMessage.blockedForward, 1);
          this.countForwards(sourceId, 'violation', blockedMessage.violationForwards, 1);
        }
      });
    }
    for (const message of firstSeen) {
      this.metrics.recordOmitted(sourceId, message.omitted, message.omittedOnViolation);
    }
  }

  private forwardsOfBlocked(
    enforcement: SourceEnforcement,
    workspaceId: string,
    message: Blocked,
    origin: ForwardingOrigin,
  ): MessageToPublish[] {
    const forwards: MessageToPublish[] = [];
    const sourceId = enforcement.source.sourceId;
    const blockedTarget = this.forwardingTarget(
      enforcement,
      enforcement.settings.forwarding_blocked_events_to,
    );
    if (blockedTarget) {
      message.blockedForward = 'forwarded';
      forwards.push({
        workspaceId,
        sourceId: blockedTarget.sourceId,
        messageId: message.original.messageId,
        payload: blockedForward(
          message.original,
          sourceId,
          message.reason,
          message.violations,
          message.violationsTruncated,
        ),
      });
    } else if (blockedTarget === null) {
      message.blockedForward = 'dropped';
    }
    if (message.violations.length > 0) {
      const violationTarget = this.forwardingTarget(
        enforcement,
        enforcement.settings.forwarding_violations_to,
      );
      if (violationTarget) {
        for (const payload of violationForwards(
          message.original,
          message.violations,
          origin,
          message.violationsTruncated,
        )) {
          forwards.push({
            workspaceId,
            sourceId: violationTarget.sourceId,
            messageId: payload.messageId,
            payload,
          });
        }
        message.violationForwards = 'forwarded';
      } else if (violationTarget === null) {
        message.violationForwards = 'dropped';
      }
    }
    return forwards;
  }

  private countForwards(
    sourceId: string,
    kind: 'blocked' | 'violation',
    outcome: ForwardOutcome,
    count: number,
  ): void {
    if (outcome !== 'off') this.metrics.recordForwards(sourceId, kind, outcome, count);
  }

  /**
   * The source a forwarding setting names: undefined when the setting is off, null when it names no
   * existing other source of the workspace (deleted since it was set: R18, forwards are dropped).
   */
  private forwardingTarget(enforcement: SourceEnforcement, slug: string): SourceRecord | null | undefined {
    if (!slug) return undefined;
    const target = this.readModel.source(enforcement.source.workspaceSlug, slug)?.source;
    return target && target.sourceId !== enforcement.source.sourceId ? target : null;
  }

  private originOf(enforcement: SourceEnforcement, now: Date): ForwardingOrigin {
    const { source, plan } = enforcement;
    return {
      source: { id: source.sourceId, slug: source.sourceSlug, name: source.displayName },
      plan: { id: plan.planId, name: plan.planName },
      now: now.toISOString(),
    };
  }
}
