import { ConfigEvent, RegulationRecord } from '@tributary/config-domain';
import {
  destinationName,
  ENCRYPTED_VALUE_PREFIX,
  functionName,
  MASKED_SECRET,
  oauthApplicationName,
  regulationName,
  sourceName,
  trackingPlanName,
  workspaceName,
} from '@tributary/contracts';
import { EventStore, EventStoreUnavailableError, RecordedEvent } from '@tributary/event-store';

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
/**
 * Values the trail shows masked: a source's write keys let anyone holding them ingest, and the trail
 * is readable with a `workspace:read` token.
 */
const MASKED_KEYS = new Set(['writeKey', 'writeKeys']);

export interface AuditPageQuery {
  workspaceSlug: string;
  /** Only entries whose resource name starts with this ('' for all). */
  resourceNamePrefix: string;
  /** Only entries older than this position (the previous page's `nextBefore`); absent: the newest. */
  before?: bigint;
  pageSize: number;
  /** Most events read for one page, matching or not (default `DEFAULT_AUDIT_SCAN_LIMIT`). */
  scanLimit?: number;
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[];
  /** True when older entries may match the query: the next page reads on from `nextBefore`. */
  more: boolean;
  /** Where the next page starts (its `before`) when `more`. */
  nextBefore?: bigint;
}

/** Events read from the store per round trip while a page is collected. */
const AUDIT_SCAN_BATCH = 500;
/** Events one page reads at most by default (`AUDIT_SCAN_LIMIT`). */
export const DEFAULT_AUDIT_SCAN_LIMIT = 5_000;

/**
 * One page of a workspace's audit trail, read from the event store (the trail grows with every change
 * and is not kept in memory). Events are read newest first in batches until the page is full and one
 * more matching entry proves there is a next page, or the store has no older events. Memory is bounded
 * by the batch and the page, whatever the size of the store.
 *
 * The store holds every workspace's changes, so a query that matches little (another tenant's busy
 * workspaces, a prefix naming nothing) would read the whole store for one page. Reading stops after
 * `scanLimit` events instead: the page may then hold fewer entries than asked (even none) and says
 * where the next one goes on, so the cost of one request is bounded and the client pages on.
 *
 * @throws EventStoreUnavailableError when the store cannot be read.
 */
export async function readAuditPage(store: EventStore, query: AuditPageQuery): Promise<AuditPage> {
  const entries: AuditEntry[] = [];
  const scanLimit = query.scanLimit ?? DEFAULT_AUDIT_SCAN_LIMIT;
  let cursor = query.before;
  let scanned = 0;
  for (;;) {
    const maxCount = Math.min(AUDIT_SCAN_BATCH, scanLimit - scanned);
    let batch: RecordedEvent[];
    try {
      batch = await store.readAllBackwards({ before: cursor, maxCount });
    } catch (error) {
      throw new EventStoreUnavailableError(error);
    }
    for (const recorded of batch) {
      const target = auditTargetOf(recorded);
      if (!target || !target.workspaceSlugs.includes(query.workspaceSlug)) continue;
      if (!target.resourceName.startsWith(query.resourceNamePrefix)) continue;
      if (entries.length === query.pageSize) {
        return { entries, more: true, nextBefore: entries[entries.length - 1].position };
      }
      entries.push(toAuditEntry(recorded, target.resourceName));
    }
    if (batch.length < maxCount) return { entries, more: false };
    cursor = batch[batch.length - 1].position;
    scanned += batch.length;
    if (scanned >= scanLimit) return { entries, more: true, nextBefore: cursor };
  }
}

/**
 * Which workspaces and resource an event belongs to; undefined for events the trail does not show and
 * for events whose data does not have the shape of their type (stored by an older version, say):
 * the trail skips what it cannot name rather than failing every page that reaches it.
 */
function auditTargetOf(
  recorded: RecordedEvent,
): { workspaceSlugs: string[]; resourceName: string } | undefined {
  try {
    const target = auditTarget({ type: recorded.type, data: recorded.data } as ConfigEvent);
    if (!target || !Array.isArray(target.workspaceSlugs)) return undefined;
    return target;
  } catch {
    return undefined;
  }
}

function toAuditEntry(recorded: RecordedEvent, resourceName: string): AuditEntry {
  return {
    position: recorded.position,
    type: recorded.type,
    resourceName,
    actor: recorded.metadata.actor,
    requestId: recorded.metadata.requestId,
    time: recorded.metadata.time,
    data: auditData(recorded),
  };
}

/**
 * The event's data as the trail shows it. A regulation's request is shown in the Config API's words
 * (docs/regulations.md §5): who asked for what, never anything of the users' messages.
 */
function auditData(recorded: RecordedEvent): Record<string, unknown> {
  if (recorded.type === 'RegulationCreated' || recorded.type === 'RegulationDeleted') {
    const regulation = recorded.data as unknown as RegulationRecord;
    return {
      regulation_type: regulation.regulationType,
      subject_type: regulation.subjectType,
      subject_ids: regulation.subjectIds,
      source_name: regulation.source
        ? sourceName({ workspaceSlug: regulation.workspaceSlug, sourceSlug: regulation.source.sourceSlug })
        : '',
    };
  }
  return maskSecrets(recorded.data) as Record<string, unknown>;
}

function auditTarget(event: ConfigEvent): { workspaceSlugs: string[]; resourceName: string } | undefined {
  switch (event.type) {
    case 'WorkspaceCreated':
    case 'WorkspaceUpdated':
      return { workspaceSlugs: [event.data.slug], resourceName: workspaceName(event.data.slug) };
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
    case 'DestinationInsertFunctionCreated':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/insert-functions/${event.data.insertFunction.functionId}`,
      };
    case 'DestinationInsertFunctionUpdated':
    case 'DestinationInsertFunctionDeleted':
      return {
        workspaceSlugs,
        resourceName: `${destinationName(event.data)}/insert-functions/${event.data.functionId}`,
      };
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
    case 'DestinationReplayCancelRequested':
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
        resourceName: oauthApplicationName(event.data),
      };
    case 'RegulationCreated':
    case 'RegulationDeleted':
    case 'RegulationStarted':
    case 'RegulationDestinationSettled':
    case 'RegulationFinished':
      return { workspaceSlugs, resourceName: regulationName(event.data) };
    // Code and setting declarations are shown as written: neither is secret (values are the instances').
    case 'FunctionCreated':
    case 'FunctionUpdated':
    case 'FunctionDeployed':
    case 'FunctionDeleted':
      return { workspaceSlugs, resourceName: functionName(event.data) };
    case 'TrackingPlanCreated':
    case 'TrackingPlanUpdated':
    case 'TrackingPlanDeleted':
      return { workspaceSlugs, resourceName: trackingPlanName(event.data) };
    case 'TrackingPlanSourceConnected':
    case 'TrackingPlanSourceDisconnected':
      return {
        workspaceSlugs,
        resourceName: `${trackingPlanName(event.data)}/source-connections/${event.data.sourceSlug}`,
      };
  }
}

/**
 * How deep a stored value is shown: far deeper than the Config API accepts (32), so nothing written
 * through it is cut, while a value stored before that cap cannot exhaust the stack of whatever
 * serializes the answer.
 */
export const MAX_PRESENTED_DEPTH = 64;

/** What stands in for a container nested deeper than `MAX_PRESENTED_DEPTH`. */
export const TOO_DEEP_MARKER = `[nested deeper than ${MAX_PRESENTED_DEPTH} levels]`;

/**
 * Drops hashes, masks write keys and encrypted setting values, at any depth, and cuts containers
 * nested deeper than `MAX_PRESENTED_DEPTH` (see `limitDepth`).
 */
export function maskSecrets(value: unknown): unknown {
  return copyJson(value, {
    skipKey: (key) => SECRET_KEYS.has(key),
    maskKey: (key) => MASKED_KEYS.has(key),
    mapScalar: maskScalar,
  });
}

/** A copy of a stored JSON value whose containers nested deeper than `MAX_PRESENTED_DEPTH` are cut. */
export function limitDepth(value: unknown): unknown {
  return copyJson(value, {});
}

/**
 * Copies a JSON value with an explicit stack, never recursion: stored config values are tenant input,
 * and a recursive walk over one nested thousands deep would end its caller with a stack overflow.
 */
function copyJson(
  value: unknown,
  options: {
    skipKey?: (key: string) => boolean;
    /** Keys whose strings (or arrays of strings) are shown as the mask. */
    maskKey?: (key: string) => boolean;
    mapScalar?: (value: unknown) => unknown;
  },
): unknown {
  const mapScalar = options.mapScalar ?? ((scalar: unknown) => scalar);
  if (!isContainer(value)) return mapScalar(value);
  const root = emptyLike(value);
  const pending: [source: Container, copy: Container, depth: number][] = [[value, root, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [source, copy, depth] = next;
    const copyOf = (inner: unknown): unknown => {
      if (!isContainer(inner)) return mapScalar(inner);
      if (depth >= MAX_PRESENTED_DEPTH) return TOO_DEEP_MARKER;
      const innerCopy = emptyLike(inner);
      pending.push([inner, innerCopy, depth + 1]);
      return innerCopy;
    };
    if (Array.isArray(source)) {
      for (const inner of source) (copy as unknown[]).push(copyOf(inner));
      continue;
    }
    for (const [key, inner] of Object.entries(source)) {
      if (options.skipKey?.(key)) continue;
      const masked = options.maskKey?.(key) ? maskedValue(inner) : undefined;
      // Defined, not assigned: a stored key named `__proto__` stays a key of the copy.
      Object.defineProperty(copy, key, {
        value: masked ?? copyOf(inner),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return root;
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

function emptyLike(value: Container): Container {
  return Array.isArray(value) ? [] : {};
}

/** A string, or an array of strings, as the mask; undefined for anything else (copied as it is). */
function maskedValue(value: unknown): unknown {
  if (typeof value === 'string') return MASKED_SECRET;
  if (Array.isArray(value) && value.every((inner) => typeof inner === 'string')) {
    return value.map(() => MASKED_SECRET);
  }
  return undefined;
}

function maskScalar(value: unknown): unknown {
  return typeof value === 'string' && value.startsWith(ENCRYPTED_VALUE_PREFIX) ? MASKED_SECRET : value;
}
