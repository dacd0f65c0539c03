import { Command } from 'commander';
import type { CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { withExamples } from './shared/help';
import { Column, print, renderTable, slugOf } from './shared/output';
import { destinationPath } from './destinations.command';

const columns: Column<any>[] = [
  { header: 'number', value: (letter) => slugOf(letter.name) },
  { header: 'message id', value: (letter) => letter.message_id },
  { header: 'dead-lettered', value: (letter) => letter.dead_letter_time },
  { header: 'attempts', value: (letter) => (letter.attempts ?? []).length },
  { header: 'reason', value: (letter) => letter.reason },
];

/** `tributary dead-letters list|redrive`: messages a destination never accepted within the retry window. */
export function deadLettersCommand(context: CliContext): Command {
  const deadLetters = new Command('dead-letters')
    .alias('dead-letter')
    .description("List a destination's dead letters and send them again");

  withExamples(
    deadLetters
      .command('list')
      .description(
        'Messages whose retries ran out, with the reason (--json: with every attempt and the message)',
      )
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
            `${destinationPath(workspace, source, destination)}/dead-letters`,
            'dead_letters',
          );
          print(context, connection, list, () => renderTable(list, columns));
        },
      ),
    'tributary dead-letters list acme web webhooks',
  );

  withExamples(
    deadLetters
      .command('redrive')
      .description('Send every dead letter of the destination once more; delivered ones leave the list')
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
          const redrive = await new ConfigApiClient(connection).request(
            'POST',
            `${destinationPath(workspace, source, destination)}/dead-letters:redrive`,
            {},
          );
          print(
            context,
            connection,
            redrive,
            () =>
              `Redrive ${redrive.redrive_id} ${redrive.state}: see \`tributary dead-letters list\` for what is left\n`,
          );
        },
      ),
    'tributary dead-letters redrive acme web webhooks',
  );

  return deadLetters;
}
