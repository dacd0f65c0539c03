export type AccessTokenScope = 'workspace' | 'workspace:read';

export interface AccessTokenRecord {
  number: number;
  description: string;
  scope: AccessTokenScope;
  /** Workspace slugs the token reaches; ignored for instance-admin tokens, which reach all. */
  workspaceSlugs: string[];
  instanceAdmin: boolean;
  /** sha256 of the plaintext, hex; the plaintext is shown once and never stored. */
  tokenHash: string;
  createTime: string;
}

export type AccessTokenEvent =
  | { type: 'AccessTokenCreated'; data: AccessTokenRecord }
  | { type: 'AccessTokenDeleted'; data: { number: number; workspaceSlugs: string[] } };
