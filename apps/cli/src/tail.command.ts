import { Command } from 'commander';
import { sourceName } from '@tributary/contracts';
import { CliError, type CliContext } from './shared/cli-context';
import { ConfigApiClient, ConfigApiRequestError, ServerUnreachableError } from './shared/config-api.client';
import { resolveConnection } from './shared/connection-options';
import { integer, withExamples } from './shared/help';
import { safeForTerminal, safeJsonForTerminal } from './shared/terminal-text';
import { sourcePath } from './sources.command';
import { describeLiveEvent, isShown, listFlag, LiveEventFilter } from './tail/live-event-filter';
import { ServerSentEventParser } from './tail/server-sent-events';

/** The longest wait between two reconnects while the server cannot be reached. */
const MAX_RECONNECT_DELAY_MS = 30_000;
/** The first wait, unless the stream said otherwise with `retry:`. */
const DEFAULT_RECONNECT_DELAY_MS = 1_000;

interface TailOptions {
  type?: string[];
  event?: string[];
  limit?: number;
}

/** Refusals worth waiting out (the server is stopping, overloaded or rate-limiting); others are final. */
function isPassing(error: ConfigApiRequestError): boolean {
  return error.status === 429 || error.status >= 500;
}

/**
 * Follows a source's live events until the operator stops it (or `--limit` messages were shown).
 * After the server ends the stream, or the connection drops, it reconnects with `Last-Event-ID`, so
 * the messages stored meanwhile come next, each once. Only the very first connection is final when it
 * fails: a tail that never started is a wrong URL or token, one that ran is a server restarting.
 */
async function tail(
  context: CliContext,
  client: ConfigApiClient,
  path: string,
  filter: LiveEventFilter,
  options: TailOptions & { json: boolean },
  name: string,
): Promise<void> {
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  context.interrupt?.addEventListener('abort', onInterrupt, { once: true });
  const parser = new ServerSentEventParser();
  let shown = 0;
  let connected = false;
  let delayMs = DEFAULT_RECONNECT_DELAY_MS;
  try {
    while (!stop.signal.aborted && !context.interrupt?.aborted) {
      let note: string;
      try {
        const response = await client.openStream(
          path,
          parser.lastEventId === undefined ? {} : { 'last-event-id': parser.lastEventId },
          stop.signal,
        );
        context.stderr.write(
          connected
            ? `resumed ${name} after event ${parser.lastEventId ?? '(none yet)'}\n`
            : `following ${name} (Ctrl-C to stop)\n`,
        );
        connected = true;
        delayMs = parser.retryMs ?? DEFAULT_RECONNECT_DELAY_MS;
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
            let message: Record<string, unknown>;
            try {
              message = JSON.parse(event.data);
            } catch {
              continue;
            }
            if (!message || typeof message !== 'object' || !isShown(message, filter)) continue;
            context.stdout.write(
              options.json
                ? safeJsonForTerminal(JSON.stringify(message)) + '\n'
                : safeForTerminal(describeLiveEvent(message)) + '\n',
            );
            shown += 1;
            if (options.limit !== undefined && shown >= options.limit) {
              stop.abort();
              return;
            }
          }
        }
        delayMs = parser.retryMs ?? DEFAULT_RECONNECT_DELAY_MS;
        note = 'the server closed the stream';
      } catch (error) {
        if (stop.signal.aborted) return;
        if (error instanceof ConfigApiRequestError) {
          if (!isPassing(error)) throw error;
        } else if (error instanceof ServerUnreachableError) {
          if (!connected) throw error;
        } else if (error instanceof CliError) {
          throw error;
        }
        note = error instanceof Error ? error.message : String(error);
      }
      context.stderr.write(
        safeForTerminal(`${note}; reconnecting in ${(delayMs / 1000).toFixed(1)} s`) + '\n',
      );
      if (!(await sleep(delayMs, stop.signal))) return;
      delayMs = Math.min(MAX_RECONNECT_DELAY_MS, delayMs * 2);
    }
  } finally {
    context.interrupt?.removeEventListener('abort', onInterrupt);
  }
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `tributary tail <workspace> <source>`: the source's messages as they are stored. */
export function tailCommand(context: CliContext): Command {
  return withExamples(
    new Command('tail')
      .description("Follow a source's messages as they are stored (--json: one JSON line per message)")
      .argument('<workspace>', 'the workspace slug')
      .argument('<source>', 'the source slug')
      .option(
        '--type <types>',
        'only these types: track, identify, page, ... (repeatable, or comma-separated)',
        listFlag,
      )
      .option(
        '--event <names>',
        'only tracks with these events, pages and screens with these names (repeatable)',
        listFlag,
      )
      .option('--limit <n>', 'stop after showing this many messages', integer(1, 1_000_000_000))
      .action(async (workspace: string, source: string, options: TailOptions, command: Command) => {
        const connection = resolveConnection(command, context);
        await tail(
          context,
          new ConfigApiClient(connection),
          `${sourcePath(workspace, source)}/live-events`,
          { types: options.type ?? [], events: options.event ?? [] },
          { ...options, json: connection.json },
          sourceName({ workspaceSlug: workspace, sourceSlug: source }),
        );
      }),
    'tributary tail acme web',
    "tributary tail acme web --json --type track --event 'Order Completed' | jq .properties",
  );
}
