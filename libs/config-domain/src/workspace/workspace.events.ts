export interface WorkspaceRecord {
  slug: string;
  id: string;
  displayName: string;
  region: string;
  /** The tracking API refuses a bare write key for this workspace: OAuth tokens only. */
  oauthRequired?: boolean;
  /** Labels sources may carry (Public API); absent is none. */
  labels?: LabelRecord[];
  createTime: string;
}

/** A workspace label: a key and value pair, `env:prod`. */
export interface LabelRecord {
  key: string;
  value: string;
  description?: string;
}

export type WorkspaceChanges = { displayName?: string; oauthRequired?: boolean; labels?: LabelRecord[] };

export type WorkspaceEvent =
  | { type: 'WorkspaceCreated'; data: WorkspaceRecord }
  | {
      type: 'WorkspaceUpdated';
      data: { slug: string; changes: WorkspaceChanges };
    };
