// The access-token use cases without HTTP, on a real SQLite event store and read model.
import { hashAccessToken } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import { streamNames } from '@tributary/config-domain';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { AccessTokenCommands } from './access-token.commands';

describe('AccessTokenCommands', () => {
  let harness: CommandHarness;
  let accessTokens: AccessTokenCommands;

  beforeEach(async () => {
    harness = await startCommandHarness();
    accessTokens = new AccessTokenCommands(harness.readModel, harness.commands);
    await harness.seedWorkspace('ws');
    await harness.seedWorkspace('other');
  });

  afterEach(() => harness.stop());

  it('mints a token for the workspaces named, each once, and stores only the hash of its secret', async () => {
    const { token, plaintext } = await accessTokens.create(
      { scopes: 'workspace', workspace_names: ['workspaces/ws', 'workspaces/other', 'workspaces/ws'] },
      metadata,
    );

    expect(token).toMatchObject({ description: '', scope: 'workspace', workspaceSlugs: ['ws', 'other'] });
    expect(harness.readModel.accessTokenByHash(hashAccessToken(plaintext))?.number).toBe(token.number);
    const stored = await harness.store.readStream(streamNames.accessToken(token.number));
    expect(stored.map((event) => event.type)).toEqual(['AccessTokenCreated']);
    expect(JSON.stringify(stored.map((event) => event.data))).not.toContain(plaintext);
  });

  it('refuses a token for workspaces that do not exist, naming every one, and mints nothing', async () => {
    await expect(
      accessTokens.create(
        { scopes: 'workspace', workspace_names: ['workspaces/ws', 'workspaces/gone', 'workspaces/lost'] },
        metadata,
      ),
    ).rejects.toEqual(ConfigApiError.notFound('workspaces/gone, workspaces/lost not found'));
    expect(harness.readModel.listAccessTokens().length).toBe(0);
  });

  it('gives tokens minted at once a number each', async () => {
    const minted = await Promise.all(
      Array.from({ length: 5 }, () =>
        accessTokens.create({ scopes: 'workspace:read', workspace_names: ['workspaces/ws'] }, metadata),
      ),
    );

    expect(new Set(minted.map(({ token }) => token.number)).size).toBe(5);
    expect(harness.readModel.listAccessTokens().length).toBe(5);
  });

  it('deletes a token named by number or full name, and answers 404 for one that does not exist', async () => {
    const { token, plaintext } = await accessTokens.create(
      { scopes: 'workspace', workspace_names: ['workspaces/ws'] },
      metadata,
    );

    await accessTokens.delete(`access-tokens/${token.number}`, metadata);
    expect(harness.readModel.accessTokenByHash(hashAccessToken(plaintext))).toBeUndefined();
    await expect(accessTokens.delete(String(token.number), metadata)).rejects.toEqual(
      ConfigApiError.notFound(`access-tokens/${token.number} not found`),
    );
    await expect(accessTokens.delete('abc', metadata)).rejects.toMatchObject({ status: 404, code: 5 });
  });
});
