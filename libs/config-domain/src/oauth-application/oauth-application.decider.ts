import { workspaceName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import {
  OAuthApplicationChanges,
  OAuthApplicationEvent,
  OAuthApplicationRecord,
  OAuthPublicKey,
} from './oauth-application.events';

export type OAuthApplicationState =
  { status: 'absent' } | { status: 'active'; application: OAuthApplicationRecord } | { status: 'deleted' };

export type OAuthApplicationCommand =
  | { type: 'CreateOAuthApplication'; application: OAuthApplicationRecord; workspaceExists: boolean }
  | { type: 'UpdateOAuthApplication'; changes: OAuthApplicationChanges }
  | { type: 'DeleteOAuthApplication' };

/** Segment lets a token live from an hour up to 30 days; Tributary allows from a minute. */
export const MIN_TOKEN_LIFETIME_SECONDS = 60;
export const MAX_TOKEN_LIFETIME_SECONDS = 30 * 86_400;

export const oauthApplicationDecider: Decider<
  OAuthApplicationState,
  OAuthApplicationCommand,
  OAuthApplicationEvent
> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateOAuthApplication': {
        const { application } = command;
        if (!command.workspaceExists) throw notFound(`${workspaceName(application.workspaceSlug)} not found`);
        if (state.status !== 'absent')
          throw alreadyExists(`OAuth application ${application.applicationId} already exists`);
        if (!application.displayName.trim())
          throw invalidArgument('oauth_application.display_name is required');
        validatePublicKeys(application.publicKeys);
        validateLifetime(application.tokenLifetimeSeconds);
        return [{ type: 'OAuthApplicationCreated', data: application }];
      }
      case 'UpdateOAuthApplication': {
        const application = requireActive(state);
        const { changes } = command;
        if (changes.displayName !== undefined && !changes.displayName.trim()) {
          throw invalidArgument('oauth_application.display_name must not be empty');
        }
        if (changes.publicKeys !== undefined) validatePublicKeys(changes.publicKeys);
        if (changes.tokenLifetimeSeconds !== undefined) validateLifetime(changes.tokenLifetimeSeconds);
        return [{ type: 'OAuthApplicationUpdated', data: identity(application, changes) }];
      }
      case 'DeleteOAuthApplication': {
        const application = requireActive(state);
        return [
          {
            type: 'OAuthApplicationDeleted',
            data: { workspaceSlug: application.workspaceSlug, applicationId: application.applicationId },
          },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthApplicationCreated':
        return { status: 'active', application: event.data };
      case 'OAuthApplicationUpdated':
        return state.status === 'active'
          ? { status: 'active', application: { ...state.application, ...event.data.changes } }
          : state;
      case 'OAuthApplicationDeleted':
        return { status: 'deleted' };
    }
  },
};

/** Keys are checked for shape here; whether a PEM really is an RSA public key is checked at the edge (jose). */
function validatePublicKeys(keys: OAuthPublicKey[]): void {
  if (keys.length === 0) throw invalidArgument('oauth_application.public_keys must hold at least one key');
  const seen = new Set<string>();
  keys.forEach((key, index) => {
    if (!key.keyId?.trim())
      throw invalidArgument(`oauth_application.public_keys[${index}].key_id is required`);
    if (seen.has(key.keyId))
      throw invalidArgument(`oauth_application.public_keys: key_id "${key.keyId}" appears twice`);
    seen.add(key.keyId);
    if (!/-----BEGIN PUBLIC KEY-----/.test(key.pem ?? '')) {
      throw invalidArgument(
        `oauth_application.public_keys[${index}].pem must be a PEM "-----BEGIN PUBLIC KEY-----" block`,
      );
    }
  });
}

function validateLifetime(seconds: number): void {
  if (
    !Number.isInteger(seconds) ||
    seconds < MIN_TOKEN_LIFETIME_SECONDS ||
    seconds > MAX_TOKEN_LIFETIME_SECONDS
  ) {
    throw invalidArgument(
      `oauth_application.token_lifetime_seconds must be an integer from ${MIN_TOKEN_LIFETIME_SECONDS} to ${MAX_TOKEN_LIFETIME_SECONDS}`,
    );
  }
}

function requireActive(state: OAuthApplicationState): OAuthApplicationRecord {
  if (state.status !== 'active') throw notFound('OAuth application not found');
  return state.application;
}

function identity(application: OAuthApplicationRecord, changes: OAuthApplicationChanges) {
  return { workspaceSlug: application.workspaceSlug, applicationId: application.applicationId, changes };
}
