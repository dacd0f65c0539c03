export type ConnectionMode = 'UNSPECIFIED' | 'CLOUD' | 'DEVICE';

export interface DestinationIdentity {
  workspaceSlug: string;
  sourceSlug: string;
  sourceId: string;
  destinationSlug: string;
}

export interface DestinationRecord extends DestinationIdentity {
  displayName: string;
  connectionMode: ConnectionMode;
  enabled: boolean;
  /** Setting key -> raw JSON value; `password` values are stored encrypted, never in plaintext. */
  config: Record<string, unknown>;
  createTime: string;
  updateTime: string;
}

export interface FilterAction {
  type: string;
  [key: string]: unknown;
}

export interface FilterRecord {
  filterId: string;
  title: string;
  description: string;
  if: string;
  enabled: boolean;
  actions: FilterAction[];
  createTime: string;
  updateTime: string;
}

export type FilterChanges = Partial<Pick<FilterRecord, 'title' | 'description' | 'if' | 'enabled' | 'actions'>>;

export type DestinationChanges = { enabled?: boolean; connectionMode?: ConnectionMode; config?: Record<string, unknown> };

export type DestinationEvent =
  | { type: 'DestinationCreated'; data: DestinationRecord }
  | { type: 'DestinationUpdated'; data: DestinationIdentity & { changes: DestinationChanges; updateTime: string } }
  | { type: 'DestinationDeleted'; data: DestinationIdentity }
  | { type: 'DestinationFilterCreated'; data: DestinationIdentity & { filter: FilterRecord } }
  | {
      type: 'DestinationFilterUpdated';
      data: DestinationIdentity & { filterId: string; changes: FilterChanges; updateTime: string };
    }
  | { type: 'DestinationFilterDeleted'; data: DestinationIdentity & { filterId: string } };
