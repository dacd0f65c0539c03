import type { Command } from 'commander';
import { CliContext, CliError } from './cli-context';
import { resolveCredential } from './credentials';

export const DEFAULT_URL = 'http://localhost:8080';

/** The options every command accepts (declared once on the root program). */
export interface GlobalOptions {
  url?: string;
  token?: string;
  tokenFile?: string;
  json?: boolean;
}

export interface Connection {
  /** Base URL of the server, without a trailing slash. */
  baseUrl: string;
  token?: string;
  json: boolean;
}

/** Options beat environment variables, which beat the default URL; the token comes from `resolveCredential`. */
export function resolveConnection(command: Command, context: CliContext): Connection {
  const options = command.optsWithGlobals<GlobalOptions>();
  const url = options.url ?? context.env.TRIBUTARY_URL ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`--url / TRIBUTARY_URL is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CliError(`--url / TRIBUTARY_URL must be http(s): ${url}`);
  return {
    baseUrl: url.replace(/(?<!\/)\/+$/, ''),
    token: resolveCredential(
      {
        what: 'token',
        flag: '--token',
        flagValue: options.token,
        fileFlag: '--token-file',
        fileFlagValue: options.tokenFile,
        envName: 'TRIBUTARY_TOKEN',
      },
      context,
    ),
    json: Boolean(options.json),
  };
}
