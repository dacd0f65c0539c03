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
import { ConfigReadModel } from '@tributary/config-projections';
import { CreateAccessTokenRequestSchema, lastSegment } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { AccessTokenCommands } from './access-token.commands';
import { presentAccessToken } from './access-token.presenter';

class CreateAccessTokenDto extends createZodDto(CreateAccessTokenRequestSchema) {}

/**
 * Personal access tokens. Managed with a user's Basic credentials (docs/config-api.md §2.1) or an instance-admin
 * token; a workspace token cannot mint further tokens. What a change does is `AccessTokenCommands`'.
 */
@ApiTags('access-tokens')
@ConfigApiController('v1beta/access-tokens')
@AllowBasicAuth()
export class AccessTokensController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly accessTokens: AccessTokenCommands,
  ) {}

  @Post()
  async create(
    @Body() body: CreateAccessTokenDto,
    @CurrentPrincipal() principal: Principal,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.requireTokenManager(principal);
    const { token, plaintext } = await this.accessTokens.create(body.access_token, metadata);
    return presentAccessToken(token, plaintext);
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
    // Any token may revoke itself: the console deletes the token it minted when its user signs out.
    const ownNumber = principal.kind === 'token' ? String(principal.token.number) : undefined;
    if (ownNumber === undefined || lastSegment(number) !== ownNumber) this.requireTokenManager(principal);
    await this.accessTokens.delete(number, metadata);
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
