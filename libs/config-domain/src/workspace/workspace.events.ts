export interface WorkspaceRecord {
  slug: string;
  id: string;
  displayName: string;
  region: string;
  createTime: string;
}

export type WorkspaceEvent =
  | { type: 'WorkspaceCreated'; data: WorkspaceRecord }
  | { type: 'WorkspaceUpdated'; data: { slug: string; changes: { displayName?: string } } };
