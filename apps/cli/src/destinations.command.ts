import { Command } from 'commander';
import { destinationName } from '@tributary/contracts';
import type { CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { Connection, resolveConnection } from './shared/connection-options';
import { collect, withExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';
import { sourcePath } from './sources.command';
import { CatalogSetting, readDestinationSettings, withoutSecrets } from './destinations/destination-settings';

const columns: Column<any>[] = [
  { header: 'slug', value: (destination) => slugOf(destination.name) },
  { header: 'catalog', value: (destination) => slugOf(destination.catalog_name) },
  { header: 'enabled', value: (destination) => (destination.enabled ? 'yes' : 'no') },
  { header: 'display name', value: (destination) => destination.display_name },
];

/** One destination and its settings; secret values come from the server already masked. */
function describeDestination(destination: any): string {
  const settings: any[] = destination.config ?? [];
  return (
    renderRecord([
      ['name', destination.name],
      ['catalog', destination.catalog_name],
      ['display name', destination.display_name],
      ['enabled', destination.enabled ? 'yes' : 'no'],
      ['connection mode', destination.connection_mode],
      ['created', destination.create_time],
      ['updated', destination.update_time],
    ]) +
    (settings.length === 0
      ? ''
      : '\n' +
        renderTable(settings, [
          { header: 'setting', value: (setting) => slugOf(setting.name) },
          { header: 'type', value: (setting) => setting.type },
          { header: 'value', value: (setting) => setting.value },
        ]))
  );
}

/** A destination's URL path is its name (docs/config-api.md §1.3), each slug encoded as a path segment. */
export function destinationPath(workspace: string, source: string, destination?: string): string {
  const collection = `${sourcePath(workspace, source)}/destinations`;
  return destination === undefined ? collection : `${collection}/${encodeURIComponent(destination)}`;
}

function nameOf(workspace: string, source: string, destination: string): string {
  return destinationName({ workspaceSlug: workspace, sourceSlug: source, destinationSlug: destination });
}

interface CreateOptions {
  catalog?: string;
  setting?: string[];
  settingsFile?: string;
  enable?: boolean;
}

async function createDestination(
  context: CliContext,
  connection: Connection,
  [workspace, source, slug]: [string, string, string],
  options: CreateOptions,
): Promise<any> {
  const client = new ConfigApiClient(connection);
  const catalogSlug = slugOf(options.catalog ?? slug);
  const catalogEntry = await client.request<{ settings?: CatalogSetting[] }>(
    'GET',
    `catalog/destinations/${encodeURIComponent(catalogSlug)}`,
  );
  const settings = readDestinationSettings(
    options.setting ?? [],
    options.settingsFile,
    catalogSlug,
    catalogEntry.settings ?? [],
  );
  for (const key of settings.secretsOnCommandLine) {
    context.stderr.write(
      `warning: --setting ${key}=... shows a secret to other users (ps) and keeps it in shell history; ` +
        'prefer --settings-file\n',
    );
  }
  const name = nameOf(workspace, source, slug);
  try {
    return await client.request('POST', destinationPath(workspace, source), {
      destination: {
        name,
        catalog_name: `catalog/destinations/${catalogSlug}`,
        connection_mode: 'CLOUD',
        enabled: Boolean(options.enable),
        config: Object.entries(settings.values).map(([key, value]) => ({
          name: `${name}/config/${key}`,
          value,
        })),
      },
    });
  } catch (error) {
    // An error may quote the value it refused: never the secret the operator sent.
    if (error instanceof Error) error.message = withoutSecrets(error.message, settings.secretValues);
    throw error;
  }
}

/** `tributary destinations list|get|create|enable|disable|delete <workspace> <source> ...`. */
export function destinationsCommand(context: CliContext): Command {
  const destinations = new Command('destinations')
    .alias('destination')
    .description("Create, list, show, enable, disable and delete a source's destinations");

  withExamples(
    destinations
      .command('list')
      .description("A source's destinations")
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .action(async (workspace: string, source: string, _options: unknown, command: Command) => {
        const connection = resolveConnection(command, context);
        const list = await new ConfigApiClient(connection).listAll(
          destinationPath(workspace, source),
          'destinations',
        );
        print(context, connection, list, () => renderTable(list, columns));
      }),
    'tributary destinations list acme web',
  );

  withExamples(
    destinations
      .command('get')
      .description('Show one destination and its settings (secrets masked)')
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .argument('<slug>', 'the destination slug')
      .action(
        async (workspace: string, source: string, slug: string, _options: unknown, command: Command) => {
          const connection = resolveConnection(command, context);
          const destination = await new ConfigApiClient(connection).request(
            'GET',
            destinationPath(workspace, source, slug),
          );
          print(context, connection, destination, () => describeDestination(destination));
        },
      ),
    'tributary destinations get acme web webhooks',
  );

  withExamples(
    destinations
      .command('create')
      .description('Create a destination from the catalog, disabled unless --enable')
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .argument('<slug>', 'the destination slug: its catalog slug unless --catalog says otherwise')
      .option('--catalog <slug>', 'the catalog entry (webhooks, postgres, actions-...); default: the slug')
      .option('--setting <key=value>', 'a setting (repeatable); secrets belong in --settings-file', collect)
      .option('--settings-file <path>', 'a JSON object of settings, {"key": value}; --setting wins over it')
      .option('--enable', 'enable it at once (default: created disabled)')
      .action(
        async (workspace: string, source: string, slug: string, options: CreateOptions, command: Command) => {
          const connection = resolveConnection(command, context);
          const destination = await createDestination(
            context,
            connection,
            [workspace, source, slug],
            options,
          );
          print(context, connection, destination, () => describeDestination(destination));
        },
      ),
    `tributary destinations create acme web webhooks --setting url=https://hooks.example.com/in --settings-file secret.json --enable`,
  );

  for (const enabled of [true, false]) {
    const verb = enabled ? 'enable' : 'disable';
    withExamples(
      destinations
        .command(verb)
        .description(
          enabled
            ? 'Enable a destination: live messages are delivered to it'
            : 'Disable a destination: live messages are no longer delivered (replays still are)',
        )
        .argument('<workspace>', 'the workspace slug')
        .argument('<source>', 'the source slug')
        .argument('<slug>', 'the destination slug')
        .action(
          async (workspace: string, source: string, slug: string, _options: unknown, command: Command) => {
            const connection = resolveConnection(command, context);
            const destination = await new ConfigApiClient(connection).request(
              'PATCH',
              destinationPath(workspace, source, slug),
              { destination: { enabled }, update_mask: { paths: ['destination.enabled'] } },
            );
            print(
              context,
              connection,
              destination,
              () => `${enabled ? 'Enabled' : 'Disabled'} ${destination.name}\n`,
            );
          },
        ),
      `tributary destinations ${verb} acme web webhooks`,
    );
  }

  withExamples(
    destinations
      .command('delete')
      .description('Delete a destination: delivery to it stops at once')
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .argument('<slug>', 'the destination slug')
      .action(
        async (workspace: string, source: string, slug: string, _options: unknown, command: Command) => {
          const connection = resolveConnection(command, context);
          await new ConfigApiClient(connection).request('DELETE', destinationPath(workspace, source, slug));
          const name = nameOf(workspace, source, slug);
          print(context, connection, { deleted: name }, () => `Deleted ${name}\n`);
        },
      ),
    'tributary destinations delete acme web webhooks',
  );

  return destinations;
}
