import { SchemaConfig } from './schema-config';

export interface SourceRecord {
  workspaceSlug: string;
  sourceSlug: string;
  /** Differs between a deleted source and a later one of the same slug; destinations hang off it. */
  sourceId: string;
  catalogName: string;
  displayName: string;
  writeKey: string;
  createTime: string;
}

export type SourceEvent =
  | { type: 'SourceCreated'; data: SourceRecord & { schemaConfig: SchemaConfig } }
  | {
      type: 'SchemaConfigUpdated';
      data: { workspaceSlug: string; sourceSlug: string; sourceId: string; changes: Partial<SchemaConfig> };
    }
  | { type: 'SourceDeleted'; data: { workspaceSlug: string; sourceSlug: string; sourceId: string } };
