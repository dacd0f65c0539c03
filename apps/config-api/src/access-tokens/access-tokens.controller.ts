import {
  ConfigApiController,
  ConfigApiError,
  AllowBasicAuth,
  ChangeMetadata,
  CurrentPrincipal,
  isInstanceAdmin,
  Principal,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateAccessTokenSecret, hashAccessToken } from '@tributary/auth';
import { accessTokenAggregate, DomainError } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import { CreateAccessTokenRequestSchema } from '@tributary/contracts';
import { EventMetadata, WrongExpectedRevisionError } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment } from '../shared/resource-names';
import { presentAccessToken } from './access-token.presenter';

class CreateAccessTokenDto extends createZodDto(CreateAccessTokenRequestSchema) {}

/**
 * Personal access tokens. Managed with a user's Basic credentials (docs/config-api.md §2.1) or an instance-admin
 * token; a workspace token cannot mint further tokens.
 */
@ApiTags('access-tokens')
@ConfigApiController('v1beta/access-tokens')
@AllowBasicAuth()
export class AccessTokensController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
  ) {}

  @Post()
  async create(
    @Body() body: CreateAccessTokenDto,
    @CurrentPrincipal() principal: Principal,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.requireTokenManager(principal);
    const workspaceSlugs = [...new Set((body.access_token.workspace_names ?? []).map(lastSegment))];
    const unknown = workspaceSlugs.filter((slug) => !this.readModel.workspace(slug));
    if (unknown.length > 0)
      throw ConfigApiError.notFound(`workspaces/${unknown.join(', workspaces/')} not found`);
    const plaintext = generateAccessTokenSecret();
    // Two creates may pick the same number; the loser's append fails on its expected revision and
    // it takes the next number instead.
    for (let attempt = 0; ; attempt++) {
      const number = this.readModel.nextTokenNumber() + attempt;
      const record = {
        number,
        description: body.access_token.description ?? '',
        scope: body.access_token.scopes,
        workspaceSlugs,
        instanceAdmin: false,
        tokenHash: hashAccessToken(plaintext),
        createTime: metadata.time,
      };
      try {
        await this.commands.handle(
          accessTokenAggregate,
          number,
          { type: 'CreateAccessToken', token: record },
          metadata,
        );
        return presentAccessToken(record, plaintext);
      } catch (error) {
        if (attempt >= 20 || !isNumberTaken(error)) throw error;
      }
    }
  }

  @Get()
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageRequest) {
    this.requireTokenManager(principal);
    const tokens = this.readModel
      .listAccessTokens()
      .filter((token) => !token.instanceAdmin)
      .sort((a, b) => a.number - b.number);
    const { page, nextPageToken } = paginate(tokens, query);
    return { access_tokens: page.map((token) => presentAccessToken(token)), next_page_token: nextPageToken };
  }

  @Delete(':number')
  async delete(
    @Param('number') number: string,
    @CurrentPrincipal() principal: Principal,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.requireTokenManager(principal);
    const tokenNumber = Number(lastSegment(number));
    if (!Number.isInteger(tokenNumber) || !this.readModel.accessToken(tokenNumber)) {
      throw ConfigApiError.notFound(`access-tokens/${number} not found`);
    }
    await this.commands.handle(accessTokenAggregate, tokenNumber, { type: 'DeleteAccessToken' }, metadata);
    return {};
  }

  private requireTokenManager(principal: Principal): void {
    if (!isInstanceAdmin(principal)) {
      throw ConfigApiError.permissionDenied(
        "insufficient scope: manage tokens with a user's Basic credentials or an instance-admin token",
      );
    }
  }
}

function isNumberTaken(error: unknown): boolean {
  return (
    error instanceof WrongExpectedRevisionError ||
    (error instanceof DomainError && error.kind === 'already_exists')
  );
}
