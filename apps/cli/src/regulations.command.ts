import { Command } from 'commander';
import { CliError, type CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { collect, withSubcommandExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';

const columns: Column<any>[] = [
  { header: 'id', value: (regulation) => regulation.regulate_id },
  { header: 'type', value: (regulation) => regulation.regulation_type },
  { header: 'status', value: (regulation) => regulation.status },
  { header: 'source', value: (regulation) => slugOf(regulation.source_name ?? '') },
  { header: 'subjects', value: (regulation) => regulation.attributes?.values?.length ?? 0 },
  { header: 'created', value: (regulation) => regulation.created_at },
];

const destinationColumns: Column<any>[] = [
  { header: 'source', value: (entry) => slugOf(entry.source) },
  { header: 'destination', value: (entry) => slugOf(entry.id) },
  { header: 'status', value: (entry) => entry.status },
  { header: 'error', value: (entry) => entry.err_string },
];

function describeRegulation(regulation: any): string {
  const destinations = (regulation.stream_status ?? []).flatMap((stream: any) =>
    (stream.destination_status ?? []).map((destination: any) => ({ ...destination, source: stream.name })),
  );
  return (
    renderRecord([
      ['name', regulation.name],
      ['type', regulation.regulation_type],
      ['status', regulation.status],
      ['source', regulation.source_name ? slugOf(regulation.source_name) : 'the whole workspace'],
      ['subject type', regulation.attributes?.name],
      ['subjects', regulation.attributes?.values ?? []],
      ['created', regulation.created_at],
      ['finished', regulation.finished_at],
    ]) + (destinations.length > 0 ? `\n${renderTable(destinations, destinationColumns)}` : '')
  );
}

/** The regulation id of `<id>` or `workspaces/<ws>/regulations/<id>`. */
function regulationIdOf(value: string): string {
  const id = slugOf(value);
  if (!/^[0-9A-Za-z]{27}$/.test(id)) throw new CliError(`not a regulation id: ${value}`);
  return id;
}

/** `tributary regulations create|list|get|cancel`: suppress and delete users (docs/regulations.md). */
export function regulationsCommand(context: CliContext): Command {
  const regulations = new Command('regulations')
    .alias('regulation')
    .description("Suppress users' new messages, delete what is stored about them, follow and cancel it");

  regulations
    .command('create')
    .description('Create a regulation for users of the workspace, or of one --source')
    .argument('<workspace>', 'the workspace slug')
    .requiredOption(
      '--type <type>',
      'SUPPRESS_ONLY, UNSUPPRESS, DELETE_INTERNAL, SUPPRESS_WITH_DELETE_INTERNAL, DELETE_ONLY, SUPPRESS_WITH_DELETE, DELETE_ARCHIVE_ONLY (with --source)',
    )
    .requiredOption('-u, --user <id>', 'a user id (repeatable)', collect)
    .option('--source <slug>', 'only this source of the workspace')
    .option('--anonymous', 'the ids are anonymous ids (DELETE_ARCHIVE_ONLY only)')
    .action(
      async (
        workspace: string,
        options: { type: string; user: string[]; source?: string; anonymous?: boolean },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const scope = options.source
          ? `workspaces/${workspace}/sources/${options.source}`
          : `workspaces/${workspace}`;
        const regulation = await new ConfigApiClient(connection).request('POST', `${scope}/regulations`, {
          regulation_type: options.type,
          attributes: { name: options.anonymous ? 'anonymousId' : 'userId', values: options.user },
        });
        print(context, connection, regulation, () => describeRegulation(regulation));
      },
    );

  regulations
    .command('list')
    .description("List the workspace's regulations (or one --source's), oldest first")
    .argument('<workspace>', 'the workspace slug')
    .option('--source <slug>', "only this source's regulations")
    .option('--status <status>', 'only regulations in this status (repeatable)', collect)
    .option('--type <type>', 'only regulations of this type (repeatable)', collect)
    .action(
      async (
        workspace: string,
        options: { source?: string; status?: string[]; type?: string[] },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const scope = options.source
          ? `workspaces/${workspace}/sources/${options.source}`
          : `workspaces/${workspace}`;
        const query = new URLSearchParams([
          ...(options.status ?? []).map((status): [string, string] => ['status', status]),
          ...(options.type ?? []).map((type): [string, string] => ['regulation_types', type]),
        ]);
        const list = await new ConfigApiClient(connection).listAll(
          `${scope}/regulations${query.size > 0 ? `?${query}` : ''}`,
          'regulations',
        );
        print(context, connection, list, () => renderTable(list, columns));
      },
    );

  regulations
    .command('get')
    .description('Show a regulation with its status at each destination')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the regulation id, as `regulations list` shows it')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const regulation = await new ConfigApiClient(connection).request(
        'GET',
        `workspaces/${workspace}/regulations/${regulationIdOf(id)}`,
      );
      print(context, connection, regulation, () => describeRegulation(regulation));
    });

  regulations
    .command('cancel')
    .description('Cancel a regulation no work began on (its status is still initialized)')
    .argument('<workspace>', 'the workspace slug')
    .argument('<id>', 'the regulation id')
    .action(async (workspace: string, id: string, _options: unknown, command: Command) => {
      const connection = resolveConnection(command, context);
      const name = `workspaces/${workspace}/regulations/${regulationIdOf(id)}`;
      await new ConfigApiClient(connection).request('DELETE', name);
      print(context, connection, { cancelled: name }, () => `Cancelled ${name}\n`);
    });

  return withSubcommandExamples(regulations, {
    create: [
      'tributary regulations create acme --type SUPPRESS_WITH_DELETE -u user-1 -u user-2',
      'tributary regulations create acme --source web --type DELETE_ARCHIVE_ONLY --anonymous -u anon-7',
    ],
    list: ['tributary regulations list acme --status running --type DELETE_ONLY'],
    get: ['tributary regulations get acme 2Dq0ZbMdlDA4wjRsUtLwMPxJB9u'],
    cancel: ['tributary regulations cancel acme 2Dq0ZbMdlDA4wjRsUtLwMPxJB9u'],
  });
}
