import { Command, Option } from 'commander';
import { workspaceName } from '@tributary/contracts';
import type { CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { withSubcommandExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';

const columns: Column<any>[] = [
  { header: 'slug', value: (workspace) => slugOf(workspace.name) },
  { header: 'id', value: (workspace) => workspace.id },
  { header: 'region', value: (workspace) => workspace.region },
  { header: 'oauth', value: (workspace) => (workspace.oauth_required ? 'required' : 'no') },
  { header: 'display name', value: (workspace) => workspace.display_name },
];

function describeWorkspace(workspace: any): string {
  return renderRecord([
    ['name', workspace.name],
    ['id', workspace.id],
    ['display name', workspace.display_name],
    ['region', workspace.region],
    ['oauth required', workspace.oauth_required ? 'yes' : 'no'],
    ['created', workspace.create_time],
  ]);
}

/** `tributary workspaces create|list|get`: creating one takes an instance-admin token. */
export function workspacesCommand(context: CliContext): Command {
  const workspaces = new Command('workspaces')
    .alias('workspace')
    .description('Create, list and show workspaces');

  workspaces
    .command('create')
    .description('Create a workspace (instance-admin token)')
    .argument('<slug>', 'the workspace slug: letters, digits, "-" and "_"')
    .option('--display-name <name>', 'a human-readable name (default: the slug)')
    .addOption(
      new Option('--region <region>', "where its tracking data is served (default: the server's)").choices([
        'us',
        'eu',
      ]),
    )
    .action(async (slug: string, options: { displayName?: string; region?: string }, command: Command) => {
      const connection = resolveConnection(command, context);
      const workspace = await new ConfigApiClient(connection).request('POST', 'workspaces', {
        workspace: {
          name: workspaceName(slug),
          ...(options.displayName !== undefined && { display_name: options.displayName }),
          ...(options.region !== undefined && { region: options.region }),
        },
      });
      print(context, connection, workspace, () => describeWorkspace(workspace));
    });

  workspaces
    .command('list')
    .description('The workspaces this token can reach')
    .action(async (_options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const list = await new ConfigApiClient(connection).listAll('workspaces', 'workspaces');
      print(context, connection, list, () => renderTable(list, columns));
    });

  workspaces
    .command('get')
    .description('Show one workspace')
    .argument('<slug>', 'the workspace slug')
    .action(async (slug: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const workspace = await new ConfigApiClient(connection).request(
        'GET',
        workspaceName(encodeURIComponent(slug)),
      );
      print(context, connection, workspace, () => describeWorkspace(workspace));
    });

  return withSubcommandExamples(workspaces, {
    create: ['tributary workspaces create acme --display-name "Acme Inc" --region eu'],
    list: ['tributary workspaces list --json'],
    get: ['tributary workspaces get acme'],
  });
}
