import { Inject, Injectable, Logger } from '@nestjs/common';
import { ACCESS_TOKEN_KEY_PURPOSE, readAccessToken, SecretBox, TRACKING_WRITE_SCOPE } from '@tributary/auth';
import { isOriginAllowed } from '@tributary/config-domain';
import { ConfigReadModel, isSuppressedUser, WorkspaceSuppressions } from '@tributary/config-projections';
import { TrackingRoute, trackingSuccessBody, TrackingSuccessBody } from '@tributary/contracts';
import { EventLogUnavailableError, TRACKING_LOG, type TrackingLog } from '@tributary/event-log';
import {
  inflateBody,
  IngestResult,
  maxBodyBytesFor,
  normalizeRequest,
  parseTrackingBody,
  resolveWriteKey,
  TrackingRequestError,
} from '@tributary/ingest';
import { Environment, ENVIRONMENT, RateLimiter } from '@tributary/platform';
import { randomUUID } from 'node:crypto';
import { ProtocolsEnforcement } from '../protocols-enforcement/protocols-enforcement.service';
import { TrackingApiError } from '../shared/tracking-api.error';
import { TrackingCounters } from '../shared/tracking-counters';
import { TrackingMetrics } from '../shared/tracking-metrics';

export const TRACKING_RATE_LIMITER = Symbol('TrackingRateLimiter');

/** Seconds a client should wait before retrying when the log cannot take messages. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
/** At most one warning this often about batches the log did not store: an outage's 503s are one line per interval. */
const UNAVAILABLE_WARNING_INTERVAL_MS = 10_000;

export interface IngestRequest {
  route: TrackingRoute;
  body: unknown;
  contentEncoding?: string;
  authorization?: string;
  /** The `Origin` header: browsers only; checked against the source's `allowed_origins`. */
  origin?: string;
  /** Client-side requests only (browser, mobile): the device's address, for `context.ip`. */
  clientIp?: string;
  /**
   * The messages a source function emitted (docs/functions.md §2): stored all or none, so one the
   * batch path refuses fails the whole request naming it; and the function's webhook URL is their
   * credential, so a workspace's OAuth requirement (meant for clients that can sign) does not apply.
   */
  fromSourceFunction?: boolean;
}

/**
 * One tracking request, from raw bytes to a durable log: inflate, parse, find the source of the
 * write key, normalize, publish every accepted message with all publishes in flight at once, and
 * answer 200 only when the log has acknowledged every one of them (docs/architecture.md, invariant 1).
 */
@Injectable()
export class IngestMessagesHandler {
  private readonly accessTokenKey: Uint8Array;
  private readonly logger = new Logger('TrackingApi');
  private unavailableWarnedAt = Number.NEGATIVE_INFINITY;
  /** Answers of 503 since the last warning about them. */
  private unavailableSinceWarning = 0;

  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    @Inject(TRACKING_RATE_LIMITER) private readonly rateLimiter: RateLimiter | null,
    private readonly readModel: ConfigReadModel,
    private readonly counters: TrackingCounters,
    private readonly metrics: TrackingMetrics,
    private readonly protocols: ProtocolsEnforcement,
    secretBox: SecretBox,
  ) {
    this.accessTokenKey = secretBox.deriveKey(ACCESS_TOKEN_KEY_PURPOSE);
  }

  async ingest(request: IngestRequest): Promise<TrackingSuccessBody> {
    const receivedAt = new Date();
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const inflated = orFail(inflateBody(rawBody, request.contentEncoding, maxBodyBytesFor(request.route)));
    const parsed = orFail(parseTrackingBody(request.route, inflated));
    const credentials = orFail(resolveWriteKey(request.authorization, parsed.body));

    const source = this.readModel.sourceByWriteKey(credentials.writeKey);
    const workspace = source && this.readModel.workspace(source.workspaceSlug);
    if (!source || !workspace) {
      this.counters.refusedWriteKeys += 1;
      throw new TrackingApiError('invalid_write_key', 'the write key is unknown or its source was deleted');
    }
    if (request.origin !== undefined && !isOriginAllowed(source.allowedOrigins, request.origin)) {
      throw new TrackingApiError(
        'origin_not_allowed',
        `the source does not accept events from pages on ${request.origin}; add it to the source's allowed_origins`,
      );
    }
    if (credentials.scheme === 'bearer') {
      await this.requireValidAccessToken(credentials.bearerToken, workspace.slug);
    } else if (workspace.oauthRequired && !request.fromSourceFunction) {
      throw new TrackingApiError(
        'unauthorized',
        `workspace ${workspace.slug} requires OAuth: send Authorization: Bearer <access token> with the write key`,
      );
    }
    if (workspace.region !== this.environment.TRIBUTARY_REGION) {
      throw new TrackingApiError(
        'wrong_region',
        `workspace ${workspace.slug} is served by region "${workspace.region}", not "${this.environment.TRIBUTARY_REGION}": ` +
          `send its messages to the ${workspace.region} endpoint`,
      );
    }
    this.enforceRateLimit(workspace.id);

    const normalized = orFail(
      normalizeRequest({
        route: request.route,
        body: parsed,
        receivedAt,
        generateId: randomUUID,
        clientIp: request.clientIp,
      }),
    );
    if (request.fromSourceFunction && normalized.rejected.length > 0) {
      const [first] = normalized.rejected;
      throw new TrackingApiError(
        'invalid_request',
        `message ${first.index}${first.messageId === undefined ? '' : ` (${first.messageId})`} was refused: ` +
          `${first.code}: ${first.message}; nothing was stored`,
      );
    }
    // Suppressed users' messages are answered as accepted and go no further: not to the log, the
    // dedupe index, Protocols or any destination (docs/regulations.md §3). A workspace that
    // suppresses nobody costs one map lookup.
    const suppressions = this.readModel.suppressions(workspace.slug);
    const accepted = suppressions
      ? this.withoutSuppressed(normalized.accepted, suppressions, workspace.slug, source.sourceId)
      : normalized.accepted;
    if (accepted.length > 0) {
      // Tracking-plan enforcement sits between validation and the append (docs/protocols.md R1).
      const found = this.protocols.enforcementFor(source);
      // Awaited only while the source's plan is first compiled; otherwise no extra turn per request.
      const enforcement = found instanceof Promise ? await found : found;
      const judged = enforcement
        ? this.protocols.judge(
            enforcement,
            workspace.id,
            accepted.map(({ message }) => message),
            receivedAt,
          )
        : undefined;
      const toPublish =
        judged?.toPublish ??
        accepted.map(({ message }) => ({
          workspaceId: workspace.id,
          sourceId: source.sourceId,
          messageId: message.messageId,
          payload: message,
        }));
      const sourceMessageCount = judged ? judged.sourceMessageCount : toPublish.length;
      const publishStarted = performance.now();
      try {
        const outcomes = toPublish.length > 0 ? await this.trackingLog.publishBatch(toPublish) : [];
        this.metrics.publishDuration.observe((performance.now() - publishStarted) / 1000);
        let duplicates = 0;
        for (let index = 0; index < sourceMessageCount; index += 1)
          if (outcomes[index].duplicate) duplicates += 1;
        this.counters.duplicates += duplicates;
        this.counters.accepted += sourceMessageCount - duplicates;
        if (judged) await judged.afterStored(outcomes);
      } catch (error) {
        this.counters.unavailable += 1;
        this.warnUnavailable(error);
        throw new TrackingApiError(
          'unavailable',
          error instanceof EventLogUnavailableError
            ? 'the message log is unavailable; nothing was stored, retry later'
            : 'the messages could not be stored; nothing was acknowledged, retry later',
          { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
        );
      }
    }
    this.counters.rejected += normalized.rejected.length;
    return trackingSuccessBody(normalized.rejected);
  }

  /**
   * Says why the log did not store a batch (no leader, the dedupe index lagging, a timeout): the
   * client only sees a 503 and retries, so without this line an outage leaves the operator nothing
   * to read. Throttled, with a count of the answers since the last line.
   */
  private warnUnavailable(error: unknown): void {
    this.unavailableSinceWarning += 1;
    const now = Date.now();
    if (now - this.unavailableWarnedAt < UNAVAILABLE_WARNING_INTERVAL_MS) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(
      `requests answered 503 since the last such warning: ${this.unavailableSinceWarning}; ` +
        `the latest because the message log did not store its batch: ${reason}`,
    );
    this.unavailableWarnedAt = now;
    this.unavailableSinceWarning = 0;
  }

  private withoutSuppressed<Accepted extends { message: { userId?: unknown } }>(
    accepted: Accepted[],
    suppressions: WorkspaceSuppressions,
    workspaceSlug: string,
    sourceId: string,
  ): Accepted[] {
    const kept = accepted.filter(({ message }) => !isSuppressedUser(suppressions, sourceId, message.userId));
    const dropped = accepted.length - kept.length;
    if (dropped > 0) {
      const counts = this.counters.suppressedByWorkspace;
      counts.set(workspaceSlug, (counts.get(workspaceSlug) ?? 0) + dropped);
    }
    return kept;
  }

  /** Valid, unexpired, scoped for tracking, and issued to an application of the source's workspace (docs/tracking-api.md §11.6). */
  private async requireValidAccessToken(token: string, workspaceSlug: string): Promise<void> {
    const claims = await readAccessToken(token, this.accessTokenKey);
    const application = claims && this.readModel.oauthApplication(claims.workspaceSlug, claims.applicationId);
    if (!claims || !application) {
      throw new TrackingApiError(
        'unauthorized',
        'the bearer token is invalid or expired, or its OAuth application was deleted',
      );
    }
    if (!claims.scope.split(/\s+/).includes(TRACKING_WRITE_SCOPE)) {
      throw new TrackingApiError('unauthorized', `the bearer token lacks the ${TRACKING_WRITE_SCOPE} scope`);
    }
    if (claims.workspaceSlug !== workspaceSlug) {
      throw new TrackingApiError(
        'unauthorized',
        "the bearer token's OAuth application belongs to another workspace than the write key's source",
      );
    }
  }

  private enforceRateLimit(workspaceId: string): void {
    const limit = this.rateLimiter?.take(workspaceId);
    if (limit && !limit.allowed) {
      const seconds = String(limit.retryAfterSeconds);
      throw new TrackingApiError(
        'rate_limited',
        `rate limit of the workspace exceeded; retry in ${seconds} s`,
        {
          'retry-after': seconds,
          'x-ratelimit-reset': seconds,
        },
      );
    }
  }
}

function orFail<T>(result: IngestResult<T>): T {
  if (result.ok) return result.value;
  const error: TrackingRequestError = result.error;
  throw new TrackingApiError(error.code, error.message);
}
