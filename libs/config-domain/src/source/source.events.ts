import { SchemaConfig } from './schema-config';

export interface SourceRecord {
  workspaceSlug: string;
  sourceSlug: string;
  /** Differs between a deleted source and a later one of the same slug; destinations hang off it. */
  sourceId: string;
  catalogName: string;
  displayName: string;
  /** The oldest live write key. */
  writeKey: string;
  /** Write keys added later (Public API), oldest first; each authenticates like `writeKey`. */
  additionalWriteKeys?: string[];
  createTime: string;
  /** Web origins whose pages may send events (normalized, see allowed-origins.ts); absent or empty: any.
   *  Sources created before this setting existed have none. */
  allowedOrigins?: string[];
  /** Public API `enabled`; absent (every source before it existed) is enabled. */
  enabled?: boolean;
  /** Public API `settings`, a flat map stored verbatim; absent is none. */
  settings?: Record<string, unknown>;
  /** Labels of the workspace the source carries (Public API); absent is none. */
  labels?: { key: string; value: string }[];
  /**
   * The workspace's `SOURCE` function this source runs on each POST to its webhook URL (its catalog
   * name is `catalog/sources/<functionId>`); absent for every other source.
   */
  functionId?: string;
  /** Values of the function's declared settings; sensitive ones stored encrypted, as passwords are. */
  functionConfig?: Record<string, unknown>;
}

/** What a source update may change. */
export interface SourceChanges {
  allowedOrigins?: string[];
  displayName?: string;
  enabled?: boolean;
  /** The whole settings map after the update (a Public API PATCH merges before it decides). */
  settings?: Record<string, unknown>;
  /** The whole list of labels after the update. */
  labels?: { key: string; value: string }[];
  /** The whole function config after the update (merged with the stored values before it decides). */
  functionConfig?: Record<string, unknown>;
  /** Write keys after a key was added or removed (never set by an update request). */
  writeKey?: string;
  additionalWriteKeys?: string[];
}

export type SourceEvent =
  | { type: 'SourceCreated'; data: SourceRecord & { schemaConfig: SchemaConfig } }
  | {
      type: 'SchemaConfigUpdated';
      data: { workspaceSlug: string; sourceSlug: string; sourceId: string; changes: Partial<SchemaConfig> };
    }
  | {
      type: 'SourceUpdated';
      data: { workspaceSlug: string; sourceSlug: string; sourceId: string; changes: SourceChanges };
    }
  | { type: 'SourceDeleted'; data: { workspaceSlug: string; sourceSlug: string; sourceId: string } };

/** Every live write key of the source, oldest first. */
export function writeKeysOf(source: Pick<SourceRecord, 'writeKey' | 'additionalWriteKeys'>): string[] {
  return [source.writeKey, ...(source.additionalWriteKeys ?? [])];
}
