// The workspace use cases without HTTP, on a real SQLite event store and read model.
import { DomainError } from '@tributary/config-domain';
import { loadEnvironment } from '@tributary/platform';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { WorkspaceCommands } from './workspace.commands';

describe('WorkspaceCommands', () => {
  let harness: CommandHarness;
  let workspaces: WorkspaceCommands;

  beforeEach(async () => {
    harness = await startCommandHarness();
    workspaces = new WorkspaceCommands(
      harness.commands,
      harness.readModel,
      loadEnvironment({ TRIBUTARY_REGION: 'eu' }),
    );
  });

  afterEach(() => harness.stop());

  it("creates a workspace from its name, in the deployment's region unless another is asked for", async () => {
    expect(await workspaces.create({ name: 'workspaces/shop' }, metadata)).toBe('shop');
    expect(await workspaces.create({ name: 'blog', display_name: 'Blog', region: 'us' }, metadata)).toBe(
      'blog',
    );

    expect(harness.readModel.workspace('shop')).toMatchObject({
      displayName: 'shop',
      region: 'eu',
      id: expect.stringMatching(/^[0-9a-z]{10}$/),
    });
    expect(harness.readModel.workspace('blog')).toMatchObject({ displayName: 'Blog', region: 'us' });
    await expect(workspaces.create({ name: 'shop' }, metadata)).rejects.toEqual(
      new DomainError('already_exists', 'workspaces/shop already exists'),
    );
  });

  it('updates what the mask names, and refuses an empty display name', async () => {
    await workspaces.create({ name: 'shop', display_name: 'Shop' }, metadata);

    await workspaces.update(
      'shop',
      {
        workspace: { oauth_required: true, display_name: 'ignored' },
        update_mask: { paths: ['workspace.oauth_required'] },
      },
      metadata,
    );
    expect(harness.readModel.workspace('shop')).toMatchObject({ displayName: 'Shop', oauthRequired: true });

    await expect(
      workspaces.update(
        'shop',
        { workspace: {}, update_mask: { paths: ['workspace.display_name'] } },
        metadata,
      ),
    ).rejects.toMatchObject({ status: 400, code: 3, message: 'workspace.display_name must not be empty' });
  });
});
