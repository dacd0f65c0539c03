import { Command } from 'commander';
import { sourceName, workspaceName } from '@tributary/contracts';
import type { CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { withSubcommandExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';

const columns: Column<any>[] = [
  { header: 'slug', value: (source) => slugOf(source.name) },
  { header: 'id', value: (source) => source.id },
  { header: 'catalog', value: (source) => slugOf(source.catalog_name) },
  { header: 'write key', value: (source) => source.write_keys },
  { header: 'display name', value: (source) => source.display_name },
];

export function describeSource(source: any): string {
  return renderRecord([
    ['name', source.name],
    ['id', source.id],
    ['catalog', source.catalog_name],
    ['display name', source.display_name],
    ['write key', source.write_keys?.[0]],
    ['created', source.create_time],
  ]);
}

/** A source's URL path is its name (docs/config-api.md §1.3), each slug encoded as a path segment. */
export function sourcePath(workspace: string, source?: string): string {
  const workspaceSlug = encodeURIComponent(workspace);
  return source === undefined
    ? `${workspaceName(workspaceSlug)}/sources`
    : sourceName({ workspaceSlug, sourceSlug: encodeURIComponent(source) });
}

export async function createSource(
  client: ConfigApiClient,
  workspace: string,
  slug: string,
  options: { catalog: string; displayName?: string },
): Promise<any> {
  return client.request('POST', sourcePath(workspace), {
    source: {
      name: sourceName({ workspaceSlug: workspace, sourceSlug: slug }),
      catalog_name: options.catalog.includes('/') ? options.catalog : `catalog/sources/${options.catalog}`,
      ...(options.displayName !== undefined && { display_name: options.displayName }),
    },
  });
}

/** `tributary sources create|list|get|delete <workspace> ...`: each source carries its write key. */
export function sourcesCommand(context: CliContext): Command {
  const sources = new Command('sources').alias('source').description('Create, list, show and delete sources');

  sources
    .command('create')
    .description('Create a source and print its write key')
    .argument('<workspace>', 'the workspace slug')
    .argument('<slug>', 'the source slug')
    .option('--catalog <slug>', 'the catalog entry: javascript, node, python, http-api, ...', 'node')
    .option('--display-name <name>', 'a human-readable name (default: the slug)')
    .action(
      async (
        workspace: string,
        slug: string,
        options: { catalog: string; displayName?: string },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const source = await createSource(new ConfigApiClient(connection), workspace, slug, options);
        print(context, connection, source, () => describeSource(source));
      },
    );

  sources
    .command('list')
    .description("A workspace's sources with their write keys")
    .argument('<workspace>', 'the workspace slug')
    .action(async (workspace: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const list = await new ConfigApiClient(connection).listAll(sourcePath(workspace), 'sources');
      print(context, connection, list, () => renderTable(list, columns));
    });

  sources
    .command('get')
    .description('Show one source')
    .argument('<workspace>', 'the workspace slug')
    .argument('<slug>', 'the source slug')
    .action(async (workspace: string, slug: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const source = await new ConfigApiClient(connection).request('GET', sourcePath(workspace, slug));
      print(context, connection, source, () => describeSource(source));
    });

  sources
    .command('delete')
    .description('Delete a source; its write key stops working at once')
    .argument('<workspace>', 'the workspace slug')
    .argument('<slug>', 'the source slug')
    .action(async (workspace: string, slug: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      await new ConfigApiClient(connection).request('DELETE', sourcePath(workspace, slug));
      const name = sourceName({ workspaceSlug: workspace, sourceSlug: slug });
      print(context, connection, { deleted: name }, () => `Deleted ${name}\n`);
    });

  return withSubcommandExamples(sources, {
    create: ['tributary sources create acme web --catalog javascript --display-name "Web site"'],
    list: ['tributary sources list acme'],
    get: ['tributary sources get acme web --json'],
    delete: ['tributary sources delete acme web'],
  });
}
