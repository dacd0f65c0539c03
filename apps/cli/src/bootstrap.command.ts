import { Command } from 'commander';
import { workspaceName } from '@tributary/contracts';
import type { CliContext } from './shared/cli-context';
import { ConfigApiClient, ConfigApiRequestError } from './shared/config-api.client';
import { Connection, resolveConnection } from './shared/connection-options';
import { withExamples } from './shared/help';
import { print, renderRecord } from './shared/output';
import { createSource, sourcePath } from './sources.command';

/** gRPC code 6 on a 409: the resource exists already, which a rerun of bootstrap may meet. */
function isAlreadyExists(error: unknown): boolean {
  return error instanceof ConfigApiRequestError && error.status === 409 && error.grpcCode === 6;
}

function firstSteps(connection: Connection): string {
  return `Tributary first steps (server: ${connection.baseUrl})

1. Start the server once; on an empty store it prints an instance-admin token
   (or set TRIBUTARY_BOOTSTRAP_TOKEN to choose it). Then:
     export TRIBUTARY_URL=${connection.baseUrl}
     export TRIBUTARY_TOKEN=<the admin token>
2. Create a workspace, a token for it and a source in one go:
     tributary bootstrap --workspace acme --source web
   It prints a workspace token and the source's write key.
3. Send messages with the write key from any Segment library (point its host at the server),
   or import a history file:
     TRIBUTARY_WRITE_KEY=<write key> tributary import events.ndjson
4. See what exists:
     tributary workspaces list
     tributary sources list acme
     tributary tokens list
`;
}

interface BootstrapOptions {
  workspace?: string;
  displayName?: string;
  source: string;
  catalog: string;
  accessToken: boolean;
}

/**
 * `tributary bootstrap`: without `--workspace`, the first steps; with it, and an instance-admin token,
 * the workspace, a workspace-scoped token and a source. Rerunning it reuses the workspace and the
 * source that exist already (and mints another token unless `--no-access-token`).
 */
export function bootstrapCommand(context: CliContext): Command {
  const bootstrap = new Command('bootstrap')
    .description('Print the first steps, or create a workspace, a workspace token and a source')
    .option('--workspace <slug>', 'create (or reuse) this workspace and set it up')
    .option('--display-name <name>', "the workspace's display name")
    .option('--source <slug>', 'the source to create (or reuse) in it', 'default')
    .option('--catalog <slug>', 'catalog entry of the source', 'node')
    .option('--no-access-token', 'do not mint a workspace-scoped token')
    .action(async (options: BootstrapOptions, command: Command) => {
      const connection = resolveConnection(command, context);
      if (!options.workspace) {
        print(context, connection, { steps: firstSteps(connection) }, () => firstSteps(connection));
        return;
      }
      const client = new ConfigApiClient(connection);
      const slug = options.workspace;
      let workspaceCreated = true;
      let workspace: any;
      try {
        workspace = await client.request('POST', 'workspaces', {
          workspace: { name: workspaceName(slug), display_name: options.displayName ?? slug },
        });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        workspaceCreated = false;
        workspace = await client.request('GET', workspaceName(encodeURIComponent(slug)));
      }
      const token = options.accessToken
        ? await client.request('POST', 'access-tokens', {
            access_token: {
              description: `bootstrap of ${slug}`,
              scopes: 'workspace',
              workspace_names: [workspaceName(slug)],
            },
          })
        : undefined;
      let sourceCreated = true;
      let source: any;
      try {
        source = await createSource(client, slug, options.source, { catalog: options.catalog });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        sourceCreated = false;
        source = await client.request('GET', sourcePath(slug, options.source));
      }
      const result = {
        workspace,
        workspace_created: workspaceCreated,
        access_token: token,
        source,
        source_created: sourceCreated,
        write_key: source.write_keys[0],
      };
      print(context, connection, result, () =>
        [
          renderRecord([
            [
              'workspace',
              `${workspace.name} (${workspaceCreated ? 'created' : 'existed'}, id ${workspace.id})`,
            ],
            ['source', `${source.name} (${sourceCreated ? 'created' : 'existed'}, id ${source.id})`],
            ['write key', result.write_key],
            ...(token
              ? ([['workspace token', `${token.token} (${token.name}, shown only once)`]] as Array<
                  [string, unknown]
                >)
              : []),
          ]),
          '\nNext:\n',
          ...(token ? [`  export TRIBUTARY_TOKEN=${token.token}\n`] : []),
          `  TRIBUTARY_WRITE_KEY=${result.write_key} tributary import events.ndjson\n`,
          `  curl -u '${result.write_key}:' ${connection.baseUrl}/v1/track -H 'content-type: application/json' \\\n`,
          `    -d '{"userId":"u1","event":"Signed Up"}'\n`,
        ].join(''),
      );
    });
  return withExamples(bootstrap, 'tributary bootstrap', 'tributary bootstrap --workspace acme --source web');
}
