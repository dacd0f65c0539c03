import { ConfigEvent } from '@tributary/config-domain';
import { ENCRYPTED_VALUE_PREFIX, MASKED_SECRET } from '@tributary/contracts';
import type { RecordedEvent } from '@tributary/event-store';

/** One change as the audit trail shows it: what changed, on which resource, by whom, when, in which request. */
export interface AuditEntry {
  /** Global position of the event: orders entries and serves as the page cursor. */
  position: bigint;
  type: string;
  resourceName: string;
  actor: string;
  requestId: string;
  time: string;
  /** The event's data with secrets masked. */
  data: Record<string, unknown>;
}

const SECRET_KEYS = new Set(['tokenHash', 'passwordHash']);

export function auditEntryFor(
  recorded: RecordedEvent,
): { workspaceSlugs: string[]; entry: AuditEntry } | undefined {
  const event = { type: recorded.type, data: recorded.data } as ConfigEvent;
  const target = auditTarget(event);
  if (!target) return undefined;
  return {
    workspaceSlugs: target.workspaceSlugs,
    entry: {
      position: recorded.position,
      type: recorded.type,
      resourceName: target.resourceName,
      actor: recorded.metadata.actor,
      requestId: recorded.metadata.requestId,
      time: recorded.metadata.time,
      data: maskSecrets(recorded.data) as Record<string, unknown>,
    },
  };
}

function auditTarget(event: ConfigEvent): { workspaceSlugs: string[]; resourceName: string } | undefined {
  switch (event.type) {
    case 'WorkspaceCreated':
    case 'WorkspaceUpdated':
      return { workspaceSlugs: [event.data.slug], resourceName: `workspaces/${event.data.slug}` };
    case 'UserRegistered':
      return undefined;
    case 'AccessTokenCreated':
      return {
        workspaceSlugs: event.data.workspaceSlugs,
        resourceName: `access-tokens/${event.data.number}`,
      };
    case 'AccessTokenDeleted':
      return {
        workspaceSlugs: event.data.workspaceSlugs,
        resourceName: `access-tokens/${event.data.number}`,
      };
  }
  const workspaceSlugs = [event.data.workspaceSlug];
  switch (event.type) {
    case 'SourceCreated':
    case 'SourceUpdated':
    case 'SourceDeleted':
      return { workspaceSlugs, resourceName: sourceName(event.data) };
    case 'SchemaConfigUpdated':
      return { workspaceSlugs, resourceName: `${sourceName(event.data)}/schema-config` };
    case 'DestinationCreated':
    case 'DestinationUpdated':
    case 'DestinationDeleted':
      return { workspaceSlugs, resourceName: destinationName(event.data) };
    case 'DestinationFilterCreated':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/filters/${event.data.filter.filterId}`,
      };
    case 'DestinationFilterUpdated':
    case 'DestinationFilterDeleted':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/filters/${event.data.filterId}`,
      };
    case 'DestinationReplayRequested':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/replays/${event.data.replay.replayId}`,
      };
    case 'DestinationReplayFinished':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/replays/${event.data.replayId}`,
      };
    case 'DestinationDeadLettersRedriveRequested':
    case 'DestinationDeadLettersRedriven':
      return { workspaceSlugs, resourceName: `${destinationName(event.data)}/dead-letters` };
    case 'OAuthApplicationCreated':
    case 'OAuthApplicationUpdated':
    case 'OAuthApplicationDeleted':
      return {
        workspaceSlugs,
        resourceName: `workspaces/${event.data.workspaceSlug}/oauth-applications/${event.data.applicationId}`,
      };
    case 'TrackingPlanCreated':
    case 'TrackingPlanUpdated':
    case 'TrackingPlanDeleted':
      return { workspaceSlugs, resourceName: planName(event.data) };
    case 'TrackingPlanSourceConnected':
    case 'TrackingPlanSourceDisconnected':
      return {
        workspaceSlugs,
        resourceName: `${planName(event.data)}/source-connections/${event.data.sourceSlug}`,
      };
  }
}

const sourceName = (data: { workspaceSlug: string; sourceSlug: string }) =>
  `workspaces/${data.workspaceSlug}/sources/${data.sourceSlug}`;
const destinationName = (data: { workspaceSlug: string; sourceSlug: string; destinationSlug: string }) =>
  `${sourceName(data)}/destinations/${data.destinationSlug}`;
const planName = (data: { workspaceSlug: string; planId: string }) =>
  `workspaces/${data.workspaceSlug}/tracking-plans/${data.planId}`;

/** Drops hashes and replaces encrypted setting values by a mask, at any depth. */
export function maskSecrets(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith(ENCRYPTED_VALUE_PREFIX) ? MASKED_SECRET : value;
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !SECRET_KEYS.has(key))
      .map(([key, inner]) => [key, maskSecrets(inner)]),
  );
}
