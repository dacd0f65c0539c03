import { Command } from 'commander';
import { EXIT, type CliContext } from './shared/cli-context';
import { ConfigApiClient } from './shared/config-api.client';
import { Connection, resolveConnection } from './shared/connection-options';
import { integer, withExamples } from './shared/help';
import { Column, print, renderRecord, renderTable, slugOf } from './shared/output';
import { destinationPath } from './destinations.command';
import {
  PlainReplayProgress,
  ReplayProgress,
  ReplayProgressBar,
  ReplayReading,
} from './replays/replay-progress';
import { replayTime } from './replays/replay-window';

const columns: Column<any>[] = [
  { header: 'id', value: (replay) => slugOf(replay.name) },
  { header: 'state', value: (replay) => replay.state },
  { header: 'from', value: (replay) => replay.start_time },
  { header: 'to', value: (replay) => replay.end_time },
  { header: 'created', value: (replay) => replay.create_time },
  { header: 'counts', value: (replay) => replay.counts },
];

function describeReplay(replay: any): string {
  return renderRecord([
    ['name', replay.name],
    ['state', replay.state],
    ['from', replay.start_time],
    ['to', replay.end_time ?? 'the time it started'],
    ['created', replay.create_time],
    ['finished', replay.finish_time],
    ...(replay.cancel_request_time && replay.state === 'RUNNING'
      ? ([['cancel requested', replay.cancel_request_time]] as Array<[string, unknown]>)
      : []),
    ...(replay.counts ? (Object.entries(replay.counts) as Array<[string, unknown]>) : []),
    ...(replay.failure_reason ? ([['failure', replay.failure_reason]] as Array<[string, unknown]>) : []),
  ]);
}

interface WaitOptions {
  wait?: boolean;
  pollInterval: number;
  progressInterval: number;
}

/** The options of a command that can follow a replay until it ends. */
function withWaitOptions(command: Command): Command {
  return command
    .option('--wait', 'follow the replay until it ends, with its progress on stderr')
    .option('--poll-interval <ms>', 'with --wait: how often the replay is read', integer(100, 60_000), 1000)
    .option(
      '--progress-interval <ms>',
      'with --wait: how often a progress line is printed when stderr is not a terminal',
      integer(0, 3_600_000),
      5000,
    );
}

/**
 * Reads the replay until it is no longer RUNNING (or the operator interrupts), showing its progress;
 * the exit code says how it ended: 0 in one of the `expected` states, 2 otherwise (failed, or
 * cancelled when it was meant to complete), 130 interrupted.
 */
async function followReplay(
  context: CliContext,
  client: ConfigApiClient,
  path: string,
  first: ReplayReading,
  options: WaitOptions & { expected: readonly string[] },
): Promise<ReplayReading> {
  const progress: ReplayProgress = context.stderr.isTTY
    ? new ReplayProgressBar(context.stderr)
    : new PlainReplayProgress(context.stderr, options.progressInterval);
  const started = Date.now();
  let replay = first;
  try {
    progress.update(replay, 0);
    while (replay.state === 'RUNNING') {
      if (!(await sleep(options.pollInterval, context.interrupt))) {
        context.exitCode = EXIT.interrupted;
        return replay;
      }
      replay = await client.request<ReplayReading>('GET', path);
      progress.update(replay, Date.now() - started);
    }
  } finally {
    progress.stop();
  }
  context.exitCode = options.expected.includes(replay.state) ? EXIT.ok : EXIT.refused;
  return replay;
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function printReplay(
  context: CliContext,
  connection: Connection,
  client: ConfigApiClient,
  path: string,
  replay: any,
  options: WaitOptions & { expected: readonly string[] },
): Promise<void> {
  const shown = options.wait ? await followReplay(context, client, path, replay, options) : replay;
  print(context, connection, shown, () => describeReplay(shown));
}

/** `tributary replays start|status`: a destination's replays of the stored history. */
export function replaysCommand(context: CliContext): Command {
  const replays = new Command('replays')
    .alias('replay')
    .description('Send a destination the stored history again, follow how far it got, or stop it');

  withExamples(
    withWaitOptions(
      replays
        .command('start')
        .description(
          'Replay the messages stored since --from (until --to) to one destination, even a disabled one',
        )
        .argument('<workspace>', 'the workspace slug')
        .argument('<source>', 'the source slug')
        .argument('<destination>', 'the destination slug')
        .requiredOption('--from <time>', 'RFC 3339 time, or a span back from now: 30m, 6h, 7d')
        .option('--to <time>', 'RFC 3339 time, or a span back from now (default: when it starts)'),
    ).action(
      async (
        workspace: string,
        source: string,
        destination: string,
        options: WaitOptions & { from: string; to?: string },
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const now = Date.now();
        const body = {
          replay: {
            start_time: replayTime('--from', options.from, now),
            ...(options.to !== undefined && { end_time: replayTime('--to', options.to, now) }),
          },
        };
        const client = new ConfigApiClient(connection);
        const replay = await client.request(
          'POST',
          `${destinationPath(workspace, source, destination)}/replays`,
          body,
        );
        const path = `${destinationPath(workspace, source, destination)}/replays/${encodeURIComponent(slugOf(replay.name))}`;
        await printReplay(context, connection, client, path, replay, { ...options, expected: ['COMPLETED'] });
      },
    ),
    'tributary replays start acme web webhooks --from 24h --wait',
    'tributary replays start acme web webhooks --from 2026-11-01T00:00:00Z --to 2026-11-02T00:00:00Z',
  );

  withExamples(
    withWaitOptions(
      replays
        .command('status')
        .description(
          "One replay's state and counts, or without an id the destination's replays, newest first",
        )
        .argument('<workspace>', 'the workspace slug')
        .argument('<source>', 'the source slug')
        .argument('<destination>', 'the destination slug')
        .argument('[replay]', 'the replay id (rp_...)'),
    ).action(
      async (
        workspace: string,
        source: string,
        destination: string,
        replayId: string | undefined,
        options: WaitOptions,
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const client = new ConfigApiClient(connection);
        const collection = `${destinationPath(workspace, source, destination)}/replays`;
        if (replayId === undefined) {
          const list = await client.listAll(collection, 'replays');
          print(context, connection, list, () => renderTable(list, columns));
          return;
        }
        const path = `${collection}/${encodeURIComponent(slugOf(replayId))}`;
        const replay = await client.request('GET', path);
        await printReplay(context, connection, client, path, replay, { ...options, expected: ['COMPLETED'] });
      },
    ),
    'tributary replays status acme web webhooks',
    'tributary replays status acme web webhooks rp_2pXrXyfgTNWkI8AYzGw6uPk1w1y --wait',
  );

  withExamples(
    withWaitOptions(
      replays
        .command('cancel')
        .description('Stop a running replay; the router records it CANCELLED with the counts of what it sent')
        .argument('<workspace>', 'the workspace slug')
        .argument('<source>', 'the source slug')
        .argument('<destination>', 'the destination slug')
        .argument('<replay>', 'the replay id (rp_...)'),
    ).action(
      async (
        workspace: string,
        source: string,
        destination: string,
        replayId: string,
        options: WaitOptions,
        command: Command,
      ) => {
        const connection = resolveConnection(command, context);
        const client = new ConfigApiClient(connection);
        const path = `${destinationPath(workspace, source, destination)}/replays/${encodeURIComponent(slugOf(replayId))}`;
        const replay = await client.request('POST', `${path}:cancel`, {});
        // Cancelled, or completed before the router saw the request: either way it is over.
        await printReplay(context, connection, client, path, replay, {
          ...options,
          expected: ['CANCELLED', 'COMPLETED'],
        });
      },
    ),
    'tributary replays cancel acme web webhooks rp_2pXrXyfgTNWkI8AYzGw6uPk1w1y --wait',
  );

  return replays;
}
