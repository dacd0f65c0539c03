import { Injectable } from '@nestjs/common';
import {
  DomainError,
  invalidArgument,
  notFound,
  SourceTrackingPlanCommand,
  sourceTrackingPlanAggregate,
  sourceTrackingPlanDecider,
} from '@tributary/config-domain';
import { ConfigCommandHandler, RETRY_ON_CONFLICT } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import { sourceName } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';

/**
 * Connects sources to a tracking plan and disconnects them. "A source is connected to at most one
 * tracking plan" is held by the event store, in one stream per source (`sourceTrackingPlanDecider`),
 * so it holds across every Config API replica: of two requests racing for one source, the one whose
 * append loses decides again on what the winner wrote, and is refused.
 */
@Injectable()
export class SourceConnectionsHandler {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
  ) {}

  /**
   * Connects every named source, or none: the whole batch is decided against the read model
   * before anything is written, and if a source is lost to a concurrent request midway, the
   * connections this call already made are taken back before the refusal goes to the caller.
   */
  async connect(
    workspaceSlug: string,
    planId: string,
    sourceSlugs: readonly string[],
    metadata: EventMetadata,
  ): Promise<void> {
    if (sourceSlugs.length === 0) throw invalidArgument('source_names must name at least one source');
    // Checked once the read model holds each source's stream as stored, so a connection another
    // replica just took back does not refuse this one.
    for (const sourceSlug of sourceSlugs) {
      const view = this.readModel.source(workspaceSlug, sourceSlug);
      if (view) await this.commands.catchUp(sourceTrackingPlanAggregate, view.source.sourceId);
    }
    for (const sourceSlug of sourceSlugs) {
      sourceTrackingPlanDecider.decide(
        null,
        this.command('ConnectTrackingPlan', workspaceSlug, planId, sourceSlug),
      );
    }
    const connectedHere: string[] = [];
    try {
      for (const sourceSlug of sourceSlugs) {
        const { events } = await this.handle(
          'ConnectTrackingPlan',
          workspaceSlug,
          planId,
          sourceSlug,
          metadata,
        );
        if (events.length > 0) connectedHere.push(sourceSlug);
      }
    } catch (error) {
      for (const sourceSlug of connectedHere.reverse()) {
        // Best effort: the refusal below is the answer whatever happens here.
        await this.handle('DisconnectTrackingPlan', workspaceSlug, planId, sourceSlug, metadata).catch(
          () => undefined,
        );
      }
      throw error;
    }
  }

  async disconnect(
    workspaceSlug: string,
    planId: string,
    sourceSlug: string,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.handle('DisconnectTrackingPlan', workspaceSlug, planId, sourceSlug, metadata);
  }

  private handle(
    type: SourceTrackingPlanCommand['type'],
    workspaceSlug: string,
    planId: string,
    sourceSlug: string,
    metadata: EventMetadata,
  ) {
    const view = this.readModel.source(workspaceSlug, sourceSlug);
    // Without a source there is no stream to decide in; the decider's refusal says why.
    if (!view) return Promise.reject(this.refusalWithoutSource(type, workspaceSlug, planId, sourceSlug));
    return this.commands.handle(
      sourceTrackingPlanAggregate,
      view.source.sourceId,
      // Taken again on every attempt, once the read model holds the source's stream as stored.
      () => this.command(type, workspaceSlug, planId, sourceSlug),
      metadata,
      { retry: RETRY_ON_CONFLICT },
    );
  }

  private command(
    type: SourceTrackingPlanCommand['type'],
    workspaceSlug: string,
    planId: string,
    sourceSlug: string,
  ): SourceTrackingPlanCommand {
    return {
      type,
      planId,
      workspaceSlug,
      sourceSlug,
      sourceExists: Boolean(this.readModel.source(workspaceSlug, sourceSlug)),
      planActive: Boolean(this.readModel.trackingPlan(workspaceSlug, planId)),
      connectedPlanId: this.readModel.trackingPlanIdOfSource(workspaceSlug, sourceSlug),
    };
  }

  private refusalWithoutSource(
    type: SourceTrackingPlanCommand['type'],
    workspaceSlug: string,
    planId: string,
    sourceSlug: string,
  ): DomainError {
    try {
      sourceTrackingPlanDecider.decide(null, this.command(type, workspaceSlug, planId, sourceSlug));
    } catch (error) {
      if (error instanceof DomainError) return error;
      throw error;
    }
    return notFound(`${sourceName({ workspaceSlug, sourceSlug })} not found`);
  }
}
