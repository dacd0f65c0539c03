import { readFileSync, statSync } from 'node:fs';
import { CliContext, CliError, EXIT } from './cli-context';

export interface CredentialSource {
  /** What the credential is, for messages: `token`, `write key`. */
  what: string;
  /** `--token`: accepted, with a warning. */
  flag: string;
  flagValue?: string;
  /** `--token-file`: a file holding the credential (one line). */
  fileFlag: string;
  fileFlagValue?: string;
  /** `TRIBUTARY_TOKEN`, and `TRIBUTARY_TOKEN_FILE` naming a file. */
  envName: string;
}

/**
 * A credential the CLI sends, never needed on the command line: from a file (`--token-file`, or the
 * `<ENV>_FILE` variable, as container secrets are mounted) or the environment variable. `--token`
 * still works for a quick try, with a warning: the arguments of a process show in `ps` to every
 * user of the machine and stay in shell history.
 */
export function resolveCredential(source: CredentialSource, context: CliContext): string | undefined {
  if (source.flagValue !== undefined && source.fileFlagValue !== undefined) {
    throw new CliError(`pass ${source.flag} or ${source.fileFlag}, not both`, EXIT.usage);
  }
  if (source.flagValue !== undefined) {
    context.stderr.write(
      `warning: ${source.flag} shows the ${source.what} to other users (ps) and keeps it in shell history; ` +
        `prefer ${source.envName} or ${source.fileFlag}\n`,
    );
    return source.flagValue;
  }
  if (source.fileFlagValue !== undefined)
    return readCredentialFile(source, source.fileFlag, source.fileFlagValue, context);
  const fromEnvironment = context.env[source.envName];
  if (fromEnvironment) return fromEnvironment.trim();
  const fileVariable = `${source.envName}_FILE`;
  const fileFromEnvironment = context.env[fileVariable];
  if (fileFromEnvironment) return readCredentialFile(source, fileVariable, fileFromEnvironment, context);
  return undefined;
}

function readCredentialFile(
  source: CredentialSource,
  setting: string,
  path: string,
  context: CliContext,
): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CliError(`cannot read the ${source.what} file ${path} (${setting}): ${code}`, EXIT.usage);
  }
  // The first line: files written by `echo` end with a newline, editors may add more.
  const credential = text.split(/\r?\n/, 1)[0].trim();
  if (!credential) throw new CliError(`the ${source.what} file ${path} (${setting}) is empty`, EXIT.usage);
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    context.stderr.write(`warning: ${path} can be read by other users; chmod 600 ${path}\n`);
  }
  return credential;
}
