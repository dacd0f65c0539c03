import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import {
  oauthApplicationAggregate,
  OAuthApplicationRecord,
  OAuthPublicKey,
  resolveUpdateMask,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import type { CreateOAuthApplicationRequest, UpdateOAuthApplicationRequest } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { importSPKI } from 'jose';
import type { KeyObject } from 'node:crypto';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

const DEFAULT_TOKEN_LIFETIME_SECONDS = 3600;
/** jose refuses shorter RSA keys for RS256. */
const MIN_RSA_MODULUS_BITS = 2048;
const OAUTH_APPLICATION_ZERO_VALUES = { display_name: '', public_keys: [], token_lifetime_seconds: 0 };

interface PublicKeyInput {
  key_id: string;
  pem?: string | null;
}

/**
 * The OAuth-application use cases of the Config API, apart from HTTP: the application and client
 * ids, the public keys checked (RSA, usable for RS256) before they are stored, and what an update
 * mask changes, a key already registered named by its `key_id` alone. Each ends in one command of
 * the application's aggregate; its caller reads the result back from the read model.
 */
@Injectable()
export class OAuthApplicationCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  /** Registers an application in the workspace and answers its id (`oa_` and a KSUID). */
  async create(
    workspaceSlug: string,
    request: CreateOAuthApplicationRequest['oauth_application'],
    metadata: EventMetadata,
  ): Promise<string> {
    const applicationId = `oa_${generateKsuid()}`;
    this.quotas.assertCanAddOAuthApplication(workspaceSlug);
    await this.commands.handle(
      oauthApplicationAggregate,
      { workspaceSlug, applicationId },
      {
        type: 'CreateOAuthApplication',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        application: {
          workspaceSlug,
          applicationId,
          clientId: generateKsuid(),
          displayName: request.display_name,
          publicKeys: await resolvePublicKeys(request.public_keys, []),
          tokenLifetimeSeconds: request.token_lifetime_seconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS,
          createTime: metadata.time,
        },
      },
      metadata,
    );
    return applicationId;
  }

  async update(
    current: OAuthApplicationRecord,
    body: UpdateOAuthApplicationRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const { workspaceSlug, applicationId } = current;
    const changes = resolveUpdateMask(
      'oauth_application',
      body.oauth_application,
      body.update_mask?.paths ?? undefined,
      OAUTH_APPLICATION_ZERO_VALUES,
    );
    await this.commands.handle(
      oauthApplicationAggregate,
      { workspaceSlug, applicationId },
      {
        type: 'UpdateOAuthApplication',
        changes: {
          displayName: changes.display_name as string | undefined,
          tokenLifetimeSeconds: changes.token_lifetime_seconds as number | undefined,
          publicKeys:
            changes.public_keys === undefined
              ? undefined
              : await resolvePublicKeys(changes.public_keys as PublicKeyInput[], current.publicKeys),
        },
      },
      metadata,
    );
  }

  async delete(application: OAuthApplicationRecord, metadata: EventMetadata): Promise<void> {
    const { workspaceSlug, applicationId } = application;
    await this.commands.handle(
      oauthApplicationAggregate,
      { workspaceSlug, applicationId },
      { type: 'DeleteOAuthApplication' },
      metadata,
    );
  }
}

/** New keys must be RSA public keys usable for RS256; known ones keep their stored PEM. */
async function resolvePublicKeys(requested: readonly PublicKeyInput[], known: readonly OAuthPublicKey[]) {
  const keys: OAuthPublicKey[] = [];
  for (const [index, key] of requested.entries()) {
    const pem = key.pem ?? known.find((candidate) => candidate.keyId === key.key_id)?.pem;
    if (!pem) {
      throw ConfigApiError.invalidArgument(
        `oauth_application.public_keys[${index}]: key "${key.key_id}" needs a pem`,
      );
    }
    try {
      // jose parses any SPKI key here, an EC one too; /token's RS256 check would then refuse every
      // assertion, so check the key type and the 2048-bit minimum jose enforces for RS256 now.
      const key = (await importSPKI(pem.trim(), 'RS256')) as KeyObject;
      if (
        key.asymmetricKeyType !== 'rsa' ||
        (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS
      ) {
        throw new Error('not an RSA key of at least 2048 bits');
      }
    } catch {
      throw ConfigApiError.invalidArgument(
        `oauth_application.public_keys[${index}].pem is not an RSA public key of at least ${MIN_RSA_MODULUS_BITS} bits in SPKI PEM form`,
      );
    }
    keys.push({ keyId: key.key_id, pem: pem.trim() });
  }
  return keys;
}
