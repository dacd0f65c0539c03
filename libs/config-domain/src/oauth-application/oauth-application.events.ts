export interface OAuthPublicKey {
  keyId: string;
  /** SPKI PEM of an RSA public key; public by nature, so it may live in events. */
  pem: string;
}

export interface OAuthApplicationRecord {
  workspaceSlug: string;
  applicationId: string;
  /** What clients send as `sub` (and usually `iss`) of their client assertion. */
  clientId: string;
  displayName: string;
  publicKeys: OAuthPublicKey[];
  tokenLifetimeSeconds: number;
  createTime: string;
}

export type OAuthApplicationChanges = Partial<
  Pick<OAuthApplicationRecord, 'displayName' | 'publicKeys' | 'tokenLifetimeSeconds'>
>;

type ApplicationIdentity = { workspaceSlug: string; applicationId: string };

export type OAuthApplicationEvent =
  | { type: 'OAuthApplicationCreated'; data: OAuthApplicationRecord }
  | { type: 'OAuthApplicationUpdated'; data: ApplicationIdentity & { changes: OAuthApplicationChanges } }
  | { type: 'OAuthApplicationDeleted'; data: ApplicationIdentity };
