import { oauthApplicationName } from '@tributary/contracts';
import { OAuthApplicationRecord } from '@tributary/config-domain';
import { withMilliseconds } from '../shared/timestamps';

/** Public keys are listed by id only: the PEM was given by the client and is not echoed back. */
export function presentOAuthApplication(application: OAuthApplicationRecord) {
  return {
    name: oauthApplicationName(application),
    client_id: application.clientId,
    display_name: application.displayName,
    public_keys: application.publicKeys.map((key) => ({ key_id: key.keyId })),
    token_lifetime_seconds: application.tokenLifetimeSeconds,
    create_time: withMilliseconds(application.createTime),
  };
}
