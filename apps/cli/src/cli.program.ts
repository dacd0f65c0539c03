import { Command, CommanderError } from 'commander';
import { bootstrapCommand } from './bootstrap.command';
import { completionCommand } from './completion.command';
import { deadLettersCommand } from './dead-letters.command';
import { destinationsCommand } from './destinations.command';
import { filtersCommand } from './filters.command';
import { functionsCommand } from './functions.command';
import { importCommand } from './import.command';
import { regulationsCommand } from './regulations.command';
import { replaysCommand } from './replays.command';
import { CliContext, CliError, EXIT } from './shared/cli-context';
import { sourcesCommand } from './sources.command';
import { tailCommand } from './tail.command';
import { safeForTerminal } from './shared/terminal-text';
import { tokensCommand } from './tokens.command';
import { packageVersion } from './shared/version';
import { workspacesCommand } from './workspaces.command';

const EXIT_CODES_HELP = `
Exit codes: 0 ok, 1 usage (a wrong command line or file), 2 the server refused (any non-2xx answer,
a failed replay or function preview, an import with lines left out), 3 the server could not be reached, 130 interrupted.
`;

/** The `tributary` program; every command talks to the server over HTTP only. */
export function buildProgram(context: CliContext): Command {
  const program = new Command('tributary')
    .description(
      'Operate a Tributary server: workspaces, tokens, sources, destinations, filters, replays, regulations, functions, dead letters, live events, historical imports',
    )
    .version(packageVersion(), '-V, --version', 'print the version of this CLI')
    .option('--url <url>', 'the server (or TRIBUTARY_URL; default http://localhost:8080)')
    .option(
      '--token-file <path>',
      'a file holding the Config API access token (or TRIBUTARY_TOKEN, or TRIBUTARY_TOKEN_FILE)',
    )
    .option('--token <token>', 'the token itself: visible to other users in ps; prefer the above')
    .option('--json', 'print JSON instead of tables (tail: one JSON line per message)')
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    });
  for (const command of [
    bootstrapCommand(context),
    tokensCommand(context),
    workspacesCommand(context),
    sourcesCommand(context),
    destinationsCommand(context),
    filtersCommand(context),
    replaysCommand(context),
    regulationsCommand(context),
    functionsCommand(context),
    deadLettersCommand(context),
    tailCommand(context),
    importCommand(context),
    completionCommand(context, () => program),
  ]) {
    program.addCommand(command);
  }
  // Subcommands inherit the output and the exit override, so usage errors come back as a code.
  const configure = (command: Command) => {
    command.exitOverride().configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    });
    command.commands.forEach(configure);
  };
  configure(program);
  return program;
}

/** Runs the CLI with `args` (without `node` and the script) and returns the exit code; never exits. */
export async function runCli(args: readonly string[], context: CliContext): Promise<number> {
  const program = buildProgram(context);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return context.exitCode ?? EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" with exit code 0 in commander's override mode.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof CliError) {
      // Messages quote the server's error text.
      context.stderr.write(`error: ${safeForTerminal(error.message, { keepNewlines: true })}\n`);
      return error.exitCode;
    }
    context.stderr.write(
      `error: ${safeForTerminal(error instanceof Error ? (error.stack ?? error.message) : String(error), { keepNewlines: true })}\n`,
    );
    return EXIT.usage;
  }
}
