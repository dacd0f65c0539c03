import { Injectable } from '@nestjs/common';
import { generateAccessTokenSecret, hashAccessToken } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import { accessTokenAggregate, AccessTokenRecord, DomainError } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import { type CreateAccessTokenRequest, lastSegment, workspaceName } from '@tributary/contracts';
import { EventMetadata, WrongExpectedRevisionError } from '@tributary/event-store';

/**
 * The access-token use cases of the Config API, apart from HTTP (and from who may call them, the
 * controller's check): the workspaces a token reaches checked to exist, its secret made and only
 * its hash stored, and the next free token number. Each ends in one command of the token's aggregate.
 */
@Injectable()
export class AccessTokenCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
  ) {}

  /** Mints a token and answers what was stored with the plaintext, shown this once. */
  async create(
    request: CreateAccessTokenRequest['access_token'],
    metadata: EventMetadata,
  ): Promise<{ token: AccessTokenRecord; plaintext: string }> {
    const workspaceSlugs = [...new Set((request.workspace_names ?? []).map(lastSegment))];
    const unknown = workspaceSlugs.filter((slug) => !this.readModel.workspace(slug));
    if (unknown.length > 0)
      throw ConfigApiError.notFound(`${unknown.map(workspaceName).join(', ')} not found`);
    const expireTime =
      request.expire_time === undefined || request.expire_time === null
        ? undefined
        : new Date(request.expire_time).toISOString();
    if (expireTime !== undefined && Date.parse(expireTime) <= Date.parse(metadata.time)) {
      throw ConfigApiError.invalidArgument('access_token.expire_time: must be in the future');
    }
    const plaintext = generateAccessTokenSecret();
    // Two creates may pick the same number; the loser's append fails on its expected revision and
    // it takes the next number instead.
    for (let attempt = 0; ; attempt++) {
      const number = this.readModel.nextTokenNumber() + attempt;
      const record = {
        number,
        description: request.description ?? '',
        scope: request.scopes,
        workspaceSlugs,
        instanceAdmin: false,
        tokenHash: hashAccessToken(plaintext),
        createTime: metadata.time,
        ...(expireTime === undefined ? {} : { expireTime }),
      };
      try {
        await this.commands.handle(
          accessTokenAggregate,
          number,
          { type: 'CreateAccessToken', token: record },
          metadata,
        );
        return { token: record, plaintext };
      } catch (error) {
        if (attempt >= 20 || !isNumberTaken(error)) throw error;
      }
    }
  }

  /** `number` may be the token's full name, `access-tokens/<n>`. */
  async delete(number: string, metadata: EventMetadata): Promise<void> {
    const tokenNumber = Number(lastSegment(number));
    if (!Number.isInteger(tokenNumber) || !this.readModel.accessToken(tokenNumber)) {
      throw ConfigApiError.notFound(`access-tokens/${number} not found`);
    }
    await this.commands.handle(accessTokenAggregate, tokenNumber, { type: 'DeleteAccessToken' }, metadata);
  }
}

function isNumberTaken(error: unknown): boolean {
  return (
    error instanceof WrongExpectedRevisionError ||
    (error instanceof DomainError && error.kind === 'already_exists')
  );
}
