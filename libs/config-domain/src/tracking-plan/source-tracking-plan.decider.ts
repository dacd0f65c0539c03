import { sourceName } from '@tributary/contracts';
import { alreadyExists, Decider, notFound } from '../shared/decider';
import { TrackingPlanEvent } from './tracking-plan.events';

/**
 * "A source is connected to at most one tracking plan" spans one stream per plan, so no plan's
 * stream can hold it. It is held by one stream per source instead: every connection or
 * disconnection of the source is appended there with the revision the decision was based on, so of
 * two writers (two requests, two Config API replicas) deciding on the same revision only one
 * succeeds; the other decides again on what the winner wrote.
 *
 * The decision itself reads the facts from the read model, not from this stream's fold: the read
 * model also holds connections recorded in plans' streams before these streams existed, and drops
 * those of plans and sources deleted since. The command handler catches the read model up to this
 * stream's last event before the facts are taken, so they are never older than the stream.
 */
export type SourceTrackingPlanState = null;

/** What the read model knows when the command is decided. */
export interface SourceTrackingPlanFacts {
  workspaceSlug: string;
  sourceSlug: string;
  sourceExists: boolean;
  planActive: boolean;
  /** The plan the source is connected to now, if any. */
  connectedPlanId?: string;
}

export type SourceTrackingPlanCommand =
  | ({ type: 'ConnectTrackingPlan'; planId: string } & SourceTrackingPlanFacts)
  | ({ type: 'DisconnectTrackingPlan'; planId: string } & SourceTrackingPlanFacts);

type ConnectionEvent = Extract<
  TrackingPlanEvent,
  { type: 'TrackingPlanSourceConnected' | 'TrackingPlanSourceDisconnected' }
>;

export const sourceTrackingPlanDecider: Decider<
  SourceTrackingPlanState,
  SourceTrackingPlanCommand,
  ConnectionEvent
> = {
  initialState: null,

  decide(_state, command) {
    const { workspaceSlug, sourceSlug, planId } = command;
    if (!command.planActive) throw notFound('tracking plan not found');
    switch (command.type) {
      case 'ConnectTrackingPlan':
        if (!command.sourceExists) throw notFound(`${sourceName({ workspaceSlug, sourceSlug })} not found`);
        if (command.connectedPlanId && command.connectedPlanId !== planId) {
          throw alreadyExists(
            `${sourceName({ workspaceSlug, sourceSlug })} is already connected to tracking plan ${command.connectedPlanId}`,
          );
        }
        // Connecting twice is not an error: the connection exists, which is what was asked.
        if (command.connectedPlanId === planId) return [];
        return [{ type: 'TrackingPlanSourceConnected', data: { workspaceSlug, planId, sourceSlug } }];
      case 'DisconnectTrackingPlan':
        if (command.connectedPlanId !== planId) {
          throw notFound(`source ${sourceSlug} is not connected to tracking plan ${planId}`);
        }
        return [{ type: 'TrackingPlanSourceDisconnected', data: { workspaceSlug, planId, sourceSlug } }];
    }
  },

  evolve: (state) => state,
};
