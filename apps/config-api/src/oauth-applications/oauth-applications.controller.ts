import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import {
  oauthApplicationDecider,
  OAuthApplicationRecord,
  OAuthPublicKey,
  resolveUpdateMask,
  streamNames,
  WorkspaceRecord,
} from '@tributary/config-domain';
import { CommandRunner, ConfigReadModel } from '@tributary/config-projections';
import {
  CreateOAuthApplicationRequestSchema,
  UpdateOAuthApplicationRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { importSPKI } from 'jose';
import { createZodDto } from 'nestjs-zod';
import type { KeyObject } from 'node:crypto';
import {
  ChangeMetadata,
  ConfigApiController,
  ConfigApiError,
  OAuthApplicationInPath,
  ResourceLookup,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { paginate, PageRequest } from '../shared/pagination';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { presentOAuthApplication } from './oauth-application.presenter';

class CreateOAuthApplicationDto extends createZodDto(CreateOAuthApplicationRequestSchema) {}
class UpdateOAuthApplicationDto extends createZodDto(UpdateOAuthApplicationRequestSchema) {}

const DEFAULT_TOKEN_LIFETIME_SECONDS = 3600;
/** jose refuses shorter RSA keys for RS256. */
const MIN_RSA_MODULUS_BITS = 2048;
const OAUTH_APPLICATION_ZERO_VALUES = { display_name: '', public_keys: [], token_lifetime_seconds: 0 };

interface PublicKeyInput {
  key_id: string;
  pem?: string | null;
}

/**
 * OAuth applications of a workspace: each holds the public keys that verify its client assertions
 * at the tracking API's `/token`. Keys are added or removed by updating `public_keys` with a mask;
 * a key already registered may be named by its `key_id` alone.
 */
@ApiTags('oauth applications')
@ConfigApiController('v1beta/workspaces/:workspace/oauth-applications')
export class OAuthApplicationsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: CommandRunner,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: PageRequest) {
    const applications = this.readModel
      .listOAuthApplications(workspace.slug)
      .sort((a, b) => a.createTime.localeCompare(b.createTime));
    const { page, nextPageToken } = paginate(applications, query);
    return { oauth_applications: page.map(presentOAuthApplication), next_page_token: nextPageToken };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Body() body: CreateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const applicationId = `oa_${generateKsuid()}`;
    const request = body.oauth_application;
    this.quotas.assertCanAddOAuthApplication(workspaceSlug);
    await this.commands.execute(
      streamNames.oauthApplication(workspaceSlug, applicationId),
      oauthApplicationDecider,
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
    return presentOAuthApplication(this.lookup.oauthApplication(workspaceSlug, applicationId));
  }

  @Get(':application')
  get(@OAuthApplicationInPath() application: OAuthApplicationRecord) {
    return presentOAuthApplication(application);
  }

  @Patch(':application')
  async update(
    @OAuthApplicationInPath() current: OAuthApplicationRecord,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { workspaceSlug, applicationId } = current;
    const changes = resolveUpdateMask(
      'oauth_application',
      body.oauth_application,
      body.update_mask?.paths ?? undefined,
      OAUTH_APPLICATION_ZERO_VALUES,
    );
    await this.commands.execute(
      streamNames.oauthApplication(workspaceSlug, applicationId),
      oauthApplicationDecider,
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
    return presentOAuthApplication(this.lookup.oauthApplication(workspaceSlug, applicationId));
  }

  @Put(':application')
  replace(
    @OAuthApplicationInPath() current: OAuthApplicationRecord,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(current, body, metadata);
  }

  @Delete(':application')
  async delete(
    @OAuthApplicationInPath({ acceptFullName: true })
    { workspaceSlug, applicationId }: OAuthApplicationRecord,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.commands.execute(
      streamNames.oauthApplication(workspaceSlug, applicationId),
      oauthApplicationDecider,
      { type: 'DeleteOAuthApplication' },
      metadata,
    );
    return {};
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
