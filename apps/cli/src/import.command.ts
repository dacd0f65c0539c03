import { Command } from 'commander';
import { CliError, EXIT, type CliContext } from './shared/cli-context';
import { integer, withExamples } from './shared/help';
import { resolveConnection } from './shared/connection-options';
import { resolveCredential } from './shared/credentials';
import { renderRecord } from './shared/output';
import { safeForTerminal, safeJsonForTerminal } from './shared/terminal-text';
import { PlainProgressListener, ProgressBarListener } from './import/import-progress';
import { importNdjson, ImportSummary, MAX_BATCH_SIZE } from './import/ndjson-importer';

interface ImportCommandOptions {
  writeKey?: string;
  writeKeyFile?: string;
  batchSize: number;
  resumeFile?: string;
  restart?: boolean;
  maxRetries: number;
  retryBaseMs: number;
  timeout: number;
  gzip: boolean;
  progressInterval: number;
}

function renderSummary(summary: ImportSummary): string {
  const entries: Array<[string, unknown]> = [
    ['status', summary.reason ? `${summary.status}: ${summary.reason}` : summary.status],
    ['file', summary.file],
    ...(summary.resumedAfterLine > 0
      ? ([['resumed after line', summary.resumedAfterLine]] as Array<[string, unknown]>)
      : []),
    ['lines read', summary.linesRead],
    ['bad lines', summary.badLines],
    ['messages sent', summary.sent],
    ['accepted', summary.accepted],
    ['rejected by server', summary.rejected],
    [
      'refused batches',
      summary.refusedBatches.length === 0
        ? 0
        : `${summary.refusedBatches.length} (${summary.refusedMessages} messages)`,
    ],
    ['batches', summary.batches],
    ['batches retried', `${summary.retriedBatches} (${summary.retries} retries)`],
    ['duration', `${(summary.durationMs / 1000).toFixed(1)} s`],
    ['resume point', `line ${summary.lastAcceptedLine} in ${summary.resumeFile}`],
  ];
  let text = renderRecord(entries);
  if (summary.resumedAfterLine > 0 && summary.linesRead === 0 && summary.status === 'completed') {
    text +=
      'Nothing left to send: the resume point says this file was imported completely (--restart sends it again).\n';
  }
  if (summary.rejected > 0) {
    text += '\nRejected by the server:\n';
    for (const [code, count] of Object.entries(summary.rejectedByCode)) text += `  ${code}: ${count}\n`;
    for (const rejection of summary.rejectedDetails)
      text += `  line ${rejection.line}${rejection.messageId ? ` (${rejection.messageId})` : ''}: ${rejection.code}: ${rejection.message}\n`;
  }
  if (summary.badLines > 0) {
    text += '\nBad lines (skipped):\n';
    for (const bad of summary.badLineDetails) text += `  line ${bad.line}: ${bad.reason}\n`;
    if (summary.badLines > summary.badLineDetails.length)
      text += `  ... and ${summary.badLines - summary.badLineDetails.length} more\n`;
  }
  for (const refused of summary.refusedBatches) {
    text += `\nRefused batch, lines ${refused.firstLine}-${refused.lastLine} (${refused.messages} messages): HTTP ${refused.status} ${refused.code}: ${refused.message}\n`;
  }
  if (summary.status !== 'completed')
    text += '\nRun the same command again to continue after the resume point.\n';
  return text;
}

export function exitCodeOf(summary: ImportSummary): number {
  if (summary.status === 'interrupted') return EXIT.interrupted;
  if (summary.status === 'aborted') return summary.abortedBy === 'refused' ? EXIT.refused : EXIT.unreachable;
  return summary.badLines + summary.rejected + summary.refusedMessages > 0 ? EXIT.incomplete : EXIT.ok;
}

/**
 * `tributary import FILE.ndjson --write-key K`: a historical import through `/v1/import`, one JSON
 * message per line, resumable. Exit code 0 when every line was imported, 2 when it finished with
 * lines left out (bad, rejected or refused) or the server refused the write key, 3 when the server
 * gave no answer through every retry, 1 for a wrong command line or file, 130 when interrupted.
 */
export function importCommand(context: CliContext): Command {
  const importing = new Command('import')
    .description('Import a history file (one JSON message per line) through the tracking API')
    .argument('<file>', 'an NDJSON file: one Segment message per line')
    .option(
      '--write-key-file <path>',
      "a file holding the source's write key (or TRIBUTARY_WRITE_KEY, or TRIBUTARY_WRITE_KEY_FILE)",
    )
    .option('--write-key <key>', 'the write key itself: visible to other users in ps; prefer the above')
    .option(
      '--batch-size <n>',
      `messages per request (at most ${MAX_BATCH_SIZE})`,
      integer(1, MAX_BATCH_SIZE),
      500,
    )
    .option('--resume-file <path>', 'where the resume point is kept (default: <file>.resume.json)')
    .option('--restart', 'ignore an existing resume point and import from the first line')
    .option(
      '--max-retries <n>',
      'retries per batch on 408, 429, 5xx and network errors',
      integer(0, 1000),
      10,
    )
    .option(
      '--retry-base-ms <ms>',
      'first backoff step (doubles per retry, up to 30 s)',
      integer(1, 600_000),
      500,
    )
    .option('--timeout <ms>', 'per request', integer(100, 600_000), 60_000)
    .option('--no-gzip', 'send the batches uncompressed')
    .option(
      '--progress-interval <ms>',
      'how often a progress line is printed when stderr is not a terminal',
      integer(0, 3_600_000),
      5000,
    )
    .action(async (file: string, options: ImportCommandOptions, command: Command) => {
      const connection = resolveConnection(command, context);
      const writeKey = resolveCredential(
        {
          what: 'write key',
          flag: '--write-key',
          flagValue: options.writeKey,
          fileFlag: '--write-key-file',
          fileFlagValue: options.writeKeyFile,
          envName: 'TRIBUTARY_WRITE_KEY',
        },
        context,
      );
      if (!writeKey)
        throw new CliError(
          'no write key: set TRIBUTARY_WRITE_KEY or pass --write-key-file (or --write-key)',
          EXIT.usage,
        );
      const progress = context.stderr.isTTY
        ? new ProgressBarListener(context.stderr as any)
        : new PlainProgressListener(context.stderr, options.progressInterval);
      const summary = await importNdjson({
        file,
        resumeFile: options.resumeFile ?? `${file}.resume.json`,
        restart: Boolean(options.restart),
        batchSize: options.batchSize,
        baseUrl: connection.baseUrl,
        writeKey,
        gzip: options.gzip,
        maxRetries: options.maxRetries,
        retryBaseMs: options.retryBaseMs,
        maxBackoffMs: 30_000,
        requestTimeoutMs: options.timeout,
        interrupt: context.interrupt,
        progress,
      });
      context.stdout.write(
        connection.json
          ? safeJsonForTerminal(JSON.stringify(summary, null, 2)) + '\n'
          : safeForTerminal(renderSummary(summary), { keepNewlines: true }),
      );
      context.exitCode = exitCodeOf(summary);
    });
  return withExamples(
    importing,
    'TRIBUTARY_WRITE_KEY_FILE=web.key tributary import history.ndjson --batch-size 500',
  );
}
