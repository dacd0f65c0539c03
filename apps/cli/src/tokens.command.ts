import { Command, Option } from 'commander';
import { workspaceName } from '@tributary/contracts';
import { CliError, type CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { collect, withSubcommandExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';

const columns: Column<any>[] = [
  { header: 'number', value: (token) => slugOf(token.name) },
  { header: 'scope', value: (token) => token.scopes },
  { header: 'workspaces', value: (token) => (token.workspace_names ?? []).map(slugOf) },
  { header: 'created', value: (token) => token.create_time },
  { header: 'description', value: (token) => token.description },
];

/** `tributary tokens create|list|delete`: access tokens, managed with an instance-admin token. */
export function tokensCommand(context: CliContext): Command {
  const tokens = new Command('tokens')
    .alias('token')
    .description('Create, list and delete access tokens (instance-admin token)');

  tokens
    .command('create')
    .description('Create a workspace-scoped token; its secret is printed once')
    .requiredOption('-w, --workspace <slug>', 'a workspace the token may reach (repeatable)', collect)
    .addOption(
      new Option('--scope <scope>', 'what the token may do')
        .choices(['workspace', 'workspace:read'])
        .default('workspace'),
    )
    .option('--description <text>', 'what the token is for', '')
    .action(
      async (options: { workspace: string[]; scope: string; description: string }, command: Command) => {
        const connection = resolveConnection(command, context);
        const token = await new ConfigApiClient(connection).request('POST', 'access-tokens', {
          access_token: {
            description: options.description,
            scopes: options.scope,
            workspace_names: options.workspace.map(workspaceName),
          },
        });
        print(
          context,
          connection,
          token,
          () =>
            renderRecord([
              ['name', token.name],
              ['scope', token.scopes],
              ['workspaces', (token.workspace_names ?? []).map(slugOf)],
              ['description', token.description],
              ['token', token.token],
            ]) + 'The token is shown only once: store it now.\n',
        );
      },
    );

  tokens
    .command('list')
    .description('List tokens (their secrets are never shown again)')
    .action(async (_options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const list = await new ConfigApiClient(connection).listAll('access-tokens', 'access_tokens');
      print(context, connection, list, () => renderTable(list, columns));
    });

  tokens
    .command('delete')
    .description('Delete a token by its number (or access-tokens/<number>)')
    .argument('<number>', 'the token number, as `tokens list` shows it')
    .action(async (number: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const tokenNumber = slugOf(number);
      if (!/^\d+$/.test(tokenNumber)) throw new CliError(`not a token number: ${number}`);
      await new ConfigApiClient(connection).request('DELETE', `access-tokens/${tokenNumber}`);
      print(
        context,
        connection,
        { deleted: `access-tokens/${tokenNumber}` },
        () => `Deleted access-tokens/${tokenNumber}\n`,
      );
    });

  return withSubcommandExamples(tokens, {
    create: ['tributary tokens create -w acme --scope workspace:read --description "dashboards"'],
    list: ['tributary tokens list'],
    delete: ['tributary tokens delete 7'],
  });
}
