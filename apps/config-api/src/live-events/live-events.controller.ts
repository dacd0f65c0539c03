import { sourceName } from '@tributary/contracts';
import { Get, Headers, Inject, Logger, Res } from '@nestjs/common';
import type { SourceView } from '@tributary/config-projections';
import { ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import {
  EventLogUnavailableError,
  TRACKING_LOG,
  type TailSubscription,
  type TrackingLog,
} from '@tributary/event-log';
import type { FastifyReply } from 'fastify';
import {
  ConfigApiController,
  ConfigApiError,
  CurrentPrincipal,
  GrpcCode,
  type Principal,
  SourceInPath,
} from '@tributary/config-api-access';
import { parseLastEventId } from './last-event-id';
import { type LiveEventRefusal, OpenLiveEventStreams } from './open-live-event-streams';

/** What a reader refused for the process's total waits before trying again. */
const STREAMS_FULL_RETRY_AFTER_SECONDS = 10;
import { LiveEventLimits, ServerSentEventStream } from './server-sent-events';

/**
 * The live feed of one source: every message as it is stored, as server-sent events (`id:` its
 * position in the log, `data:` the message as stored). Read-only, so a `workspace:read` token may
 * read it. Browsers should read it with `fetch`, which can send the token in `Authorization`;
 * `EventSource` cannot, and a token in a URL ends up in logs.
 */
@ApiTags('live events')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/live-events')
export class LiveEventsController {
  private readonly logger = new Logger('LiveEvents');

  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    private readonly limits: LiveEventLimits,
    private readonly openStreams: OpenLiveEventStreams,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Stream the messages of a source as they are stored (text/event-stream)',
    description:
      'Starts at the messages stored from now on, or after the position in `Last-Event-ID`. A comment ' +
      'every 15 s keeps the connection open; a reader that stops reading is disconnected and resumes ' +
      'with `Last-Event-ID`.',
  })
  @ApiProduces('text/event-stream')
  async stream(
    @SourceInPath() { source }: SourceView,
    @CurrentPrincipal() principal: Principal,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const afterSequence = parseLastEventId(lastEventId);
    if (afterSequence === null) {
      throw ConfigApiError.invalidArgument('Last-Event-ID must be the id of an event this stream sent');
    }
    const claim = this.openStreams.claim({ actor: principal.actor, workspaceSlug: source.workspaceSlug });
    if (typeof claim === 'string') throw this.refusal(claim);
    const events = new ServerSentEventStream(reply.raw, this.limits);
    let opened: () => void = () => undefined;
    const streamOpened = new Promise<void>((resolve) => (opened = resolve));
    let tail: TailSubscription;
    try {
      tail = await this.trackingLog.tail({ sourceId: source.sourceId, afterSequence }, async (message) => {
        await streamOpened;
        await events.send(message.sequence, JSON.stringify(message.payload));
      });
    } catch (error) {
      claim.release();
      if (error instanceof EventLogUnavailableError) {
        throw ConfigApiError.unavailable('the message log is unavailable; retry shortly');
      }
      throw error;
    }
    if (!claim.attach(events)) {
      await tail.stop();
      throw this.refusal('stopping');
    }
    // From here on the response is ours, not Nest's: its head and every event are written as they come.
    reply.hijack();
    events.onEnd((reason) => {
      if (reason === 'reader-too-slow') {
        this.logger.warn(`dropped a live-events reader of ${sourceName(source)}: it fell behind`);
      }
      void tail.stop();
    });
    void tail.ended.then((end) => {
      if (end.reason === 'failed') {
        this.logger.warn(`live events of ${source.sourceSlug} ended: ${String(end.error)}`);
      }
      events.end();
    });
    events.open({ 'x-request-id': String(reply.request.id) });
    opened();
  }

  private refusal(reason: LiveEventRefusal): ConfigApiError {
    switch (reason) {
      case 'stopping':
        return ConfigApiError.unavailable('the server is stopping; reconnect in a moment');
      case 'reader-full':
        return new ConfigApiError(
          429,
          GrpcCode.RESOURCE_EXHAUSTED,
          `this token already has ${this.limits.maxStreamsPerReader} live-events streams open ` +
            '(LIVE_EVENTS_MAX_STREAMS_PER_TOKEN); close one first',
        );
      case 'workspace-full':
        return new ConfigApiError(
          429,
          GrpcCode.RESOURCE_EXHAUSTED,
          `this workspace already has ${this.limits.maxStreamsPerWorkspace} live-events streams open ` +
            '(LIVE_EVENTS_MAX_STREAMS_PER_WORKSPACE); close one first',
        );
      case 'process-full':
        return new ConfigApiError(
          503,
          GrpcCode.UNAVAILABLE,
          'too many live-events streams are open on this server; retry after the Retry-After delay',
          { 'retry-after': String(STREAMS_FULL_RETRY_AFTER_SECONDS) },
        );
    }
  }
}
