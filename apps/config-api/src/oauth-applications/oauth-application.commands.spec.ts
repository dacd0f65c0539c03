// The OAuth-application use cases without HTTP, on a real SQLite event store and read model.
import { DomainError } from '@tributary/config-domain';
import { generateKeyPairSync } from 'node:crypto';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { OAuthApplicationCommands } from './oauth-application.commands';

const publicPem = (type: 'rsa' | 'ec', modulusLength = 2048) =>
  (type === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  ).publicKey
    .export({ type: 'spki', format: 'pem' })
    .toString();

describe('OAuthApplicationCommands', () => {
  let harness: CommandHarness;
  let applications: OAuthApplicationCommands;
  const first = publicPem('rsa');
  const second = publicPem('rsa');

  const application = (applicationId: string) => harness.readModel.oauthApplication('ws', applicationId);

  beforeEach(async () => {
    harness = await startCommandHarness({ oauthApplications: 1 });
    applications = new OAuthApplicationCommands(harness.readModel, harness.commands, harness.quotas);
    await harness.seedWorkspace('ws');
  });

  afterEach(() => harness.stop());

  it('registers an application with fresh ids, its keys trimmed, a one-hour token lifetime by default', async () => {
    const applicationId = await applications.create(
      'ws',
      { display_name: 'Backend', public_keys: [{ key_id: 'k1', pem: `\n${first}\n` }] },
      metadata,
    );

    expect(applicationId).toMatch(/^oa_[0-9A-Za-z]{27}$/);
    expect(application(applicationId)).toMatchObject({
      displayName: 'Backend',
      clientId: expect.stringMatching(/^[0-9A-Za-z]{27}$/),
      publicKeys: [{ keyId: 'k1', pem: first.trim() }],
      tokenLifetimeSeconds: 3600,
    });
    await expect(
      applications.create(
        'nope',
        { display_name: 'x', public_keys: [{ key_id: 'k', pem: first }] },
        metadata,
      ),
    ).rejects.toEqual(new DomainError('not_found', 'workspaces/nope not found'));
  });

  it('refuses a key that is not RSA of at least 2048 bits, or a new key without a pem', async () => {
    for (const pem of [publicPem('ec'), publicPem('rsa', 1024), 'not a key']) {
      await expect(
        applications.create('ws', { display_name: 'x', public_keys: [{ key_id: 'k', pem }] }, metadata),
      ).rejects.toMatchObject({
        status: 400,
        code: 3,
        message: expect.stringMatching(/public_keys\[0\]\.pem/),
      });
    }
    await expect(
      applications.create('ws', { display_name: 'x', public_keys: [{ key_id: 'k' }] }, metadata),
    ).rejects.toMatchObject({
      status: 400,
      message: 'oauth_application.public_keys[0]: key "k" needs a pem',
    });
    expect(harness.readModel.listOAuthApplications('ws')).toEqual([]);
  });

  it('refuses an application past the workspace quota with 429, code 8', async () => {
    await applications.create(
      'ws',
      { display_name: 'a', public_keys: [{ key_id: 'k', pem: first }] },
      metadata,
    );

    await expect(
      applications.create('ws', { display_name: 'b', public_keys: [{ key_id: 'k', pem: first }] }, metadata),
    ).rejects.toMatchObject({ status: 429, code: 8 });
  });

  it('rotates keys through the mask, a kept key named by its key_id alone, and deletes the application', async () => {
    const applicationId = await applications.create(
      'ws',
      { display_name: 'Backend', public_keys: [{ key_id: 'k1', pem: first }] },
      metadata,
    );

    await applications.update(
      application(applicationId)!,
      {
        oauth_application: {
          display_name: 'ignored',
          public_keys: [{ key_id: 'k1' }, { key_id: 'k2', pem: second }],
        },
        update_mask: { paths: ['oauth_application.public_keys'] },
      },
      metadata,
    );
    expect(application(applicationId)).toMatchObject({
      displayName: 'Backend',
      publicKeys: [
        { keyId: 'k1', pem: first.trim() },
        { keyId: 'k2', pem: second.trim() },
      ],
    });

    await applications.delete(application(applicationId)!, metadata);
    expect(application(applicationId)).toBeUndefined();
  });
});
