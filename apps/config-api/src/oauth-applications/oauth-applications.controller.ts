import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import {
  oauthApplicationAggregate,
  OAuthApplicationRecord,
  OAuthPublicKey,
  resolveUpdateMask,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  CreateOAuthApplicationRequestSchema,
  UpdateOAuthApplicationRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { importSPKI } from 'jose';
import { createZodDto } from 'nestjs-zod';
import type { KeyObject } from 'node:crypto';
import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  ResourceLookup,
} from '@tributary/config-api-access';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment } from '../shared/resource-names';
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
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(@Param('workspace') workspaceSlug: string, @Query() query: PageRequest) {
    this.lookup.workspace(workspaceSlug);
    const applications = this.readModel
      .listOAuthApplications(workspaceSlug)
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
    return presentOAuthApplication(this.requireApplication(workspaceSlug, applicationId));
  }

  @Get(':application')
  get(@Param('workspace') workspaceSlug: string, @Param('application') applicationId: string) {
    return presentOAuthApplication(this.requireApplication(workspaceSlug, applicationId));
  }

  @Patch(':application')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Param('application') applicationId: string,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const current = this.requireApplication(workspaceSlug, applicationId);
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
    return presentOAuthApplication(this.requireApplication(workspaceSlug, applicationId));
  }

  @Put(':application')
  replace(
    @Param('workspace') workspaceSlug: string,
    @Param('application') applicationId: string,
    @Body() body: UpdateOAuthApplicationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, applicationId, body, metadata);
  }

  @Delete(':application')
  async delete(
    @Param('workspace') workspaceSlug: string,
    @Param('application') application: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const applicationId = lastSegment(application);
    this.requireApplication(workspaceSlug, applicationId);
    await this.commands.handle(
      oauthApplicationAggregate,
      { workspaceSlug, applicationId },
      { type: 'DeleteOAuthApplication' },
      metadata,
    );
    return {};
  }

  private requireApplication(workspaceSlug: string, applicationId: string): OAuthApplicationRecord {
    this.lookup.workspace(workspaceSlug);
    const application = this.readModel.oauthApplication(workspaceSlug, applicationId);
    if (!application) {
      throw ConfigApiError.notFound(
        `workspaces/${workspaceSlug}/oauth-applications/${applicationId} not found`,
      );
    }
    return application;
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
