export interface WorkspaceRecord {
  slug: string;
  id: string;
  displayName: string;
  region: string;
  /** The tracking API refuses a bare write key for this workspace: OAuth tokens only. */
  oauthRequired?: boolean;
  createTime: string;
}

export type WorkspaceEvent =
  | { type: 'WorkspaceCreated'; data: WorkspaceRecord }
  | {
      type: 'WorkspaceUpdated';
      data: { slug: string; changes: { displayName?: string; oauthRequired?: boolean } };
    };
