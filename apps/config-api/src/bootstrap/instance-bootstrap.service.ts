import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { generateAccessTokenSecret, hashAccessToken, hashPassword } from '@tributary/auth';
import { accessTokenAggregate, DomainError, userAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import { EventMetadata, WrongExpectedRevisionError } from '@tributary/event-store';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { randomUUID } from 'node:crypto';

/**
 * First-start setup of an instance, idempotent across restarts:
 * - `TRIBUTARY_ADMIN_EMAIL` + `TRIBUTARY_ADMIN_PASSWORD`: an instance-admin user (Basic auth on
 *   /access-tokens);
 * - `TRIBUTARY_BOOTSTRAP_TOKEN`: an instance-admin token with exactly that value;
 * - neither, on an empty store: one admin token, generated and printed once.
 */
@Injectable()
export class InstanceBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { TRIBUTARY_ADMIN_EMAIL: email, TRIBUTARY_ADMIN_PASSWORD: password } = this.environment;
    const bootstrapToken = this.environment.TRIBUTARY_BOOTSTRAP_TOKEN;
    const storeWasEmpty = this.readModel.currentPosition < 0n;
    if (email && password && !this.readModel.user(email)) {
      const passwordHash = await hashPassword(password);
      await this.ignoringRaces(() =>
        this.commands.handle(
          userAggregate,
          email,
          { type: 'RegisterUser', user: { email: email.toLowerCase(), passwordHash, instanceAdmin: true } },
          this.metadata(),
        ),
      );
    }
    if (bootstrapToken && !this.readModel.accessTokenByHash(hashAccessToken(bootstrapToken))) {
      await this.createAdminToken(bootstrapToken, 'bootstrap token (TRIBUTARY_BOOTSTRAP_TOKEN)');
    }
    if (!email && !bootstrapToken && storeWasEmpty) {
      const token = generateAccessTokenSecret();
      await this.createAdminToken(token, 'generated at first start');
      // Printed once, on stdout, and nowhere else: only its hash is stored.
      process.stdout.write(
        `\nTributary instance-admin token (shown once, store it now):\n\n  ${token}\n\n` +
          `Use it as "Authorization: Bearer <token>" on /v1beta.\n\n`,
      );
    }
  }

  private async createAdminToken(token: string, description: string): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const number = this.readModel.nextTokenNumber() + attempt;
      try {
        await this.commands.handle(
          accessTokenAggregate,
          number,
          {
            type: 'CreateAccessToken',
            token: {
              number,
              description,
              scope: 'workspace',
              workspaceSlugs: [],
              instanceAdmin: true,
              tokenHash: hashAccessToken(token),
              createTime: new Date().toISOString(),
            },
          },
          this.metadata(),
        );
        this.logger.log(`instance-admin token access-tokens/${number} created (${description})`);
        return;
      } catch (error) {
        if (!isRace(error)) throw error;
      }
    }
  }

  private async ignoringRaces(operation: () => Promise<unknown>): Promise<void> {
    try {
      await operation();
    } catch (error) {
      if (!isRace(error)) throw error;
    }
  }

  private metadata(): EventMetadata {
    return { actor: 'system', requestId: `bootstrap-${randomUUID()}`, time: new Date().toISOString() };
  }
}

function isRace(error: unknown): boolean {
  return (
    error instanceof WrongExpectedRevisionError ||
    (error instanceof DomainError && error.kind === 'already_exists')
  );
}
