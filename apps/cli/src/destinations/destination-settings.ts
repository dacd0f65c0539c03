import { readFileSync } from 'node:fs';
import { CliError, EXIT } from '../shared/cli-context';
import { MASKED_SECRET } from '@tributary/contracts';

/** A setting of a catalog destination, as `GET /catalog/destinations/{slug}` lists it. */
export interface CatalogSetting {
  name: string;
  type: string;
}

export interface DestinationSettings {
  /** Setting key → value, typed after the catalog, ready for `config` entries. */
  values: Record<string, unknown>;
  /** Keys of secret settings given with `--setting` on the command line (the CLI warns about them). */
  secretsOnCommandLine: string[];
  /** The secret strings sent, which nothing the CLI prints may contain. */
  secretValues: string[];
}

/**
 * Settings whose values the server keeps encrypted and masks: `password` settings, and the values
 * of `map` settings (a webhook's headers carry credentials). The CLI never prints what it sent of them.
 */
function isSecret(setting: CatalogSetting): boolean {
  return setting.type === 'password' || setting.type === 'map';
}

/**
 * The settings of `destinations create`: a JSON file (`--settings-file`, an object of key → value,
 * the way to pass secrets) and `--setting key=value` flags on top, each value read as the catalog
 * types it (a `number` from its digits, a `boolean` from true/false, `list`/`map`/`mixed` as JSON,
 * anything else as the text itself). Keys the catalog does not have are refused before any request.
 */
export function readDestinationSettings(
  flags: readonly string[],
  file: string | undefined,
  catalogSlug: string,
  catalog: readonly CatalogSetting[],
): DestinationSettings {
  const values: Record<string, unknown> = {};
  const settingNamed = (key: string): CatalogSetting => {
    const setting = catalog.find((candidate) => candidate.name === key);
    if (!setting) {
      throw new CliError(
        `"${key}" is not a setting of ${catalogSlug}; its settings: ${catalog.map((candidate) => candidate.name).join(', ')}`,
        EXIT.usage,
      );
    }
    return setting;
  };
  if (file !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new CliError(`cannot read the settings file ${file}: ${reason}`, EXIT.usage);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new CliError(`the settings file ${file} must hold a JSON object: {"setting": value}`, EXIT.usage);
    }
    for (const [key, value] of Object.entries(parsed)) {
      settingNamed(key);
      values[key] = value;
    }
  }
  const secretsOnCommandLine: string[] = [];
  for (const flag of flags) {
    const equals = flag.indexOf('=');
    if (equals <= 0) throw new CliError(`--setting takes key=value, not "${flag}"`, EXIT.usage);
    const key = flag.slice(0, equals);
    const setting = settingNamed(key);
    values[key] = typedValue(setting, flag.slice(equals + 1));
    if (isSecret(setting)) secretsOnCommandLine.push(key);
  }
  const secretValues: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (!isSecret(settingNamed(key))) continue;
    const texts =
      value && typeof value === 'object' ? Object.values(value as Record<string, unknown>) : [value];
    for (const text of texts)
      if (typeof text === 'string' && text !== '' && text !== MASKED_SECRET) secretValues.push(text);
  }
  return { values, secretsOnCommandLine, secretValues };
}

function typedValue(setting: CatalogSetting, text: string): unknown {
  switch (setting.type) {
    case 'number': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value))
        throw new CliError(`--setting ${setting.name}: "${text}" is not a number`, EXIT.usage);
      return value;
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return text === 'true';
      throw new CliError(`--setting ${setting.name}: "${text}" is not true or false`, EXIT.usage);
    case 'list':
    case 'map':
    case 'mixed':
      try {
        return JSON.parse(text);
      } catch {
        throw new CliError(
          `--setting ${setting.name}: a ${setting.type} value is JSON, not "${text}"`,
          EXIT.usage,
        );
      }
    default:
      return text;
  }
}

/** `text` with every secret the CLI sent replaced by the mask: for error messages that quote a value. */
export function withoutSecrets(text: string, secretValues: readonly string[]): string {
  let safe = text;
  for (const secret of secretValues) safe = safe.split(secret).join(MASKED_SECRET);
  return safe;
}
