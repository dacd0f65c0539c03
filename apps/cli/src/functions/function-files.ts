import { readFileSync } from 'node:fs';
import { CliError, EXIT } from '../shared/cli-context';

/** The kinds of function the server runs (docs/functions.md), as `--type` takes them. */
export const FUNCTION_KINDS = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'] as const;
export type FunctionKind = (typeof FUNCTION_KINDS)[number];

/** `--type destination`, `--type INSERT_DESTINATION`, `--type insert-destination` → the API's spelling. */
export function functionKindOf(value: string): FunctionKind {
  const kind = value.trim().toUpperCase().replace(/-/g, '_');
  if (!(FUNCTION_KINDS as readonly string[]).includes(kind))
    throw new CliError(`--type takes ${FUNCTION_KINDS.join(', ')}, not "${value}"`, EXIT.usage);
  return kind as FunctionKind;
}

/** A local file's text; an unreadable file is a usage error naming the flag. */
export function readTextFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CliError(`cannot read ${flag} ${path}: ${reason}`, EXIT.usage);
  }
}

/** A local JSON file, parsed; bad JSON is a usage error naming the flag. */
export function readJsonFile(flag: string, path: string): unknown {
  const text = readTextFile(flag, path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} ${path} is not JSON: ${(error as Error).message}`, EXIT.usage);
  }
}

/**
 * The settings a function declares, from `--settings F`: a JSON array of declarations as the Config
 * API takes them (`[{"name":"apiKey","label":"API key","type":"string","required":true,
 * "sensitive":true}]`), or an object holding it under `settings`. The server checks each one.
 */
export function readSettingDeclarations(path: string): unknown[] {
  const parsed = readJsonFile('--settings', path);
  const list = Array.isArray(parsed)
    ? parsed
    : typeof parsed === 'object' &&
        parsed !== null &&
        Array.isArray((parsed as { settings?: unknown }).settings)
      ? (parsed as { settings: unknown[] }).settings
      : undefined;
  if (!list)
    throw new CliError(
      `--settings ${path} must hold a JSON array of setting declarations (or {"settings": [...]})`,
      EXIT.usage,
    );
  return list;
}

/** The values a preview runs with, from `--values F`: a JSON object of setting names to values. */
export function readSettingValues(path: string): Record<string, unknown> {
  const parsed = readJsonFile('--values', path);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CliError(`--values ${path} must hold a JSON object of setting names to values`, EXIT.usage);
  return parsed as Record<string, unknown>;
}

/** A function named by its id (`dfn_...`) or by its full name, `workspaces/acme/functions/dfn_...`. */
export function functionIdOf(value: string): string {
  const id = value.slice(value.lastIndexOf('/') + 1);
  if (!/^(sfn|dfn|ifnd)_[0-9A-Za-z]{1,64}$/.test(id))
    throw new CliError(`not a function id (sfn_..., dfn_... or ifnd_...): ${value}`, EXIT.usage);
  return id;
}
