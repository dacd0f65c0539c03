import { Command } from 'commander';
import { destinationName } from '@tributary/contracts';
import { CliError, type CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { withExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';
import { destinationPath } from './destinations.command';
import { FilterFlags, filterFromFlags, previewMessage } from './filters/filter-definition';

const columns: Column<any>[] = [
  { header: 'id', value: (filter) => slugOf(filter.name) },
  { header: 'enabled', value: (filter) => (filter.enabled ? 'yes' : 'no') },
  { header: 'if', value: (filter) => filter.if },
  { header: 'actions', value: (filter) => (filter.actions ?? []).map((action: any) => action.type) },
  { header: 'title', value: (filter) => filter.title },
];

function describeFilter(filter: any): string {
  return renderRecord([
    ['name', filter.name],
    ['title', filter.title],
    ['description', filter.description],
    ['enabled', filter.enabled ? 'yes' : 'no'],
    ['if', filter.if],
    ['actions', filter.actions],
  ]);
}

/** The options that describe one filter, shared by `create` and `preview`. */
function withFilterOptions(command: Command): Command {
  return command
    .requiredOption('--if <fql>', 'which messages the filter acts on: an FQL expression, or "all"')
    .option('--drop', 'drop the matching messages')
    .option('--sample <percent>', 'keep only this percentage of the matching messages (0-100)')
    .option('--sample-path <path>', 'with --sample: the field sampled on, e.g. userId (default: the message)')
    .option('--allow-fields <fields>', 'keep only these fields: properties.a,traits.b,context.c')
    .option('--block-fields <fields>', 'remove these fields: properties.a,traits.b,context.c')
    .option('--actions <json>', 'the actions as the Config API takes them, a JSON array');
}

/** `filters` name a filter by its id (`df_...`), or by its full name as `filters list --json` prints it. */
function filterId(idOrName: string): string {
  const id = slugOf(idOrName);
  if (id === '') throw new CliError(`not a filter id: ${idOrName}`);
  return encodeURIComponent(id);
}

/** `tributary filters list|create|delete|preview`: a destination's filters, in FQL. */
export function filtersCommand(context: CliContext): Command {
  const filters = new Command('filters')
    .alias('filter')
    .description("List, create, delete and try out a destination's filters");

  withExamples(
    filters
      .command('list')
      .description("A destination's filters")
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .argument('<destination>', 'the destination slug')
      .action(
        async (
          workspace: string,
          source: string,
          destination: string,
          _options: unknown,
          command: Command,
        ) => {
          const connection = resolveConnection(command, context);
          const list = await new ConfigApiClient(connection).listAll(
            `${destinationPath(workspace, source, destination)}/filters`,
            'filters',
          );
          print(context, connection, list, () => renderTable(list, columns));
        },
      ),
    'tributary filters list acme web webhooks',
  );

  withExamples(
    withFilterOptions(
      filters
        .command('create')
        .description('Create a filter: messages matching --if get its actions')
        .argument('<workspace>', 'the workspace slug')
        .argument('<source>', 'the source slug')
        .argument('<destination>', 'the destination slug'),
    )
      .option('--title <text>', 'what the filter is for (default: the condition)')
      .option('--description <text>', 'more about it')
      .option('--disabled', 'create it disabled')
      .action(
        async (
          workspace: string,
          source: string,
          destination: string,
          options: FilterFlags,
          command: Command,
        ) => {
          const connection = resolveConnection(command, context);
          const filter = filterFromFlags(options);
          const created = await new ConfigApiClient(connection).request(
            'POST',
            `${destinationPath(workspace, source, destination)}/filters`,
            { filter },
          );
          print(context, connection, created, () => describeFilter(created));
        },
      ),
    `tributary filters create acme web webhooks --if "type = 'identify'" --drop --title "No identifies"`,
    `tributary filters create acme web webhooks --if all --block-fields context.ip,traits.email`,
  );

  withExamples(
    filters
      .command('delete')
      .description('Delete a filter')
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .argument('<destination>', 'the destination slug')
      .argument('<filter>', 'the filter id (df_...), as `filters list` shows it')
      .action(
        async (
          workspace: string,
          source: string,
          destination: string,
          filter: string,
          _options: unknown,
          command: Command,
        ) => {
          const connection = resolveConnection(command, context);
          const path = `${destinationPath(workspace, source, destination)}/filters/${filterId(filter)}`;
          await new ConfigApiClient(connection).request('DELETE', path);
          const name = `${destinationName({ workspaceSlug: workspace, sourceSlug: source, destinationSlug: destination })}/filters/${slugOf(filter)}`;
          print(context, connection, { deleted: name }, () => `Deleted ${name}\n`);
        },
      ),
    'tributary filters delete acme web webhooks df_2pXrXyfgTNWkI8AYzGw6uPk1w1y',
  );

  withExamples(
    withFilterOptions(
      filters
        .command('preview')
        .description('Run a filter over a sample message, as the router would, without saving it'),
    )
      .option('--message <json>', 'the sample message')
      .option('--message-file <path>', 'a file holding the sample message')
      .action(async (options: FilterFlags & { message?: string; messageFile?: string }, command: Command) => {
        const connection = resolveConnection(command, context);
        const input = previewMessage(options);
        const { if: condition, actions } = filterFromFlags(options);
        const result = await new ConfigApiClient(connection).request('POST', 'filters/preview', {
          filter: { if: condition, actions },
          input,
        });
        print(context, connection, result, () =>
          result.result === 'pass'
            ? `pass: the destination would get\n${JSON.stringify(JSON.parse(result.output), null, 2)}\n`
            : `${result.result}: the destination would not get it\n`,
        );
      }),
    `tributary filters preview --if "event = 'Order Completed'" --sample 10 --sample-path userId --message '{"type":"track","event":"Order Completed","userId":"u1"}'`,
  );

  return filters;
}
