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
  /** When the token stops working (ISO 8601); absent: never. */
  expireTime?: string;
}

/** Whether the token has expired at `nowMs`: it is then refused like a deleted one (401). */
export function accessTokenExpired(token: Pick<AccessTokenRecord, 'expireTime'>, nowMs: number): boolean {
  return token.expireTime !== undefined && Date.parse(token.expireTime) <= nowMs;
}

export type AccessTokenEvent =
  | { type: 'AccessTokenCreated'; data: AccessTokenRecord }
  | { type: 'AccessTokenDeleted'; data: { number: number; workspaceSlugs: string[] } };
