/**
 * Builds the Actions part of the catalog from `@segment/action-destinations`. Run by
 * `npm run catalog:actions` (which writes `src/segment-actions/actions-catalog.generated.ts`) and by the
 * guard test that fails when the committed file no longer matches the installed package.
 *
 * It loads every destination, which costs about a second and 150 MB: that is why it runs when the
 * dependency changes, not when Tributary builds or starts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type {
  ActionsActionData,
  ActionsDestinationData,
  ActionsFieldData,
  ActionsSettingData,
  ActionsSubscription,
} from '../src/segment-actions/actions-catalog.types';
import type { JsonValue } from '../src/catalog/catalog-entry.types';

/** Authentication schemes whose settings are plain keys the user types in. */
const KEY_STYLE_SCHEMES = new Set(['custom', 'basic', 'none', undefined]);
/** Clients other than HTTP (Kafka, AWS SDKs, SFTP): they would bypass the egress guard's HTTP agents. */
const NON_HTTP_CLIENT = /require\("(kafkajs|@aws-sdk\/[^"]+|ssh2-sftp-client|ssh2|@google-cloud\/[^"]+)"\)/;
/** Segment-internal destinations and audience syncs, which need Segment's own services or Engage. */
const SEGMENT_ONLY = /internal|engage-messaging|audience|cohort|^segment($|-)/i;

export interface LeftOut {
  readonly dir: string;
  readonly why: string;
}

interface LoadedDefinition {
  name: string;
  slug?: string;
  description?: string;
  mode?: string;
  authentication?: { scheme?: string; fields?: Record<string, RawField>; testAuthentication?: unknown };
  audienceConfig?: unknown;
  audienceFields?: unknown;
  presets?: { name?: string; subscribe?: string; partnerAction: string; mapping?: object; type?: string }[];
  actions: Record<string, { title?: string; fields?: Record<string, RawField>; performBatch?: unknown }>;
}

interface RawField {
  label?: string;
  description?: string;
  type?: string;
  required?: unknown;
  multiple?: boolean;
  default?: unknown;
  choices?: (string | number | boolean | { value: string | number | boolean })[];
  format?: string;
}

export function destinationsRoot(): string {
  return join(dirname(require.resolve('@segment/action-destinations/package.json')), 'dist', 'destinations');
}

export function loadDefinition(dir: string): LoadedDefinition {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(join(destinationsRoot(), dir)) as { default?: LoadedDefinition };
  return (loaded.default ?? loaded) as LoadedDefinition;
}

/** The catalog's Actions destinations, sorted by slug, and what was left out and why. */
export function buildActionsCatalog(): { destinations: ActionsDestinationData[]; leftOut: LeftOut[] } {
  const root = destinationsRoot();
  const destinations: ActionsDestinationData[] = [];
  const leftOut: LeftOut[] = [];
  for (const dir of readdirSync(root).sort()) {
    const path = join(root, dir);
    if (!statSync(path).isDirectory()) continue;
    let definition: LoadedDefinition;
    try {
      definition = loadDefinition(dir);
    } catch (error) {
      leftOut.push({ dir, why: `does not load: ${(error as Error).message.split('\n')[0]}` });
      continue;
    }
    const why = reasonToLeaveOut(dir, path, definition);
    if (why) {
      leftOut.push({ dir, why });
      continue;
    }
    destinations.push(projectDestination(dir, definition));
  }
  destinations.sort((a, b) => a.slug.localeCompare(b.slug));
  return { destinations, leftOut };
}

function reasonToLeaveOut(dir: string, path: string, definition: LoadedDefinition): string | null {
  if (definition.mode !== 'cloud') return `mode ${definition.mode ?? 'unknown'}`;
  if (!definition.slug) return 'no slug';
  const scheme = definition.authentication?.scheme;
  if (!KEY_STYLE_SCHEMES.has(scheme)) return `authentication ${scheme}`;
  if (definition.audienceConfig || definition.audienceFields) return 'audience destination';
  if (SEGMENT_ONLY.test(dir) || SEGMENT_ONLY.test(definition.slug)) return 'Segment-internal or audience';
  const fields = Object.values(definition.authentication?.fields ?? {});
  if (fields.some((field) => field.type === 'object' || field.multiple)) return 'settings that are not keys';
  if (usesNonHttpClient(path)) return 'not HTTP';
  return null;
}

function usesNonHttpClient(dir: string): boolean {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (
      entry.isDirectory()
        ? usesNonHttpClient(path)
        : entry.name.endsWith('.js') && NON_HTTP_CLIENT.test(readFileSync(path, 'utf8'))
    ) {
      return true;
    }
  }
  return false;
}

function projectDestination(dir: string, definition: LoadedDefinition): ActionsDestinationData {
  const settings: ActionsSettingData[] = Object.entries(definition.authentication?.fields ?? {}).map(
    ([key, field]) => projectSetting(key, field),
  );
  const presets: ActionsSubscription[] = (definition.presets ?? [])
    .filter((preset) => preset.type === undefined || preset.type === 'automatic')
    .filter((preset) => typeof preset.subscribe === 'string' && preset.partnerAction in definition.actions)
    .map((preset) => ({
      ...(preset.name ? { name: preset.name } : {}),
      subscribe: preset.subscribe!,
      partnerAction: preset.partnerAction,
      mapping: json(preset.mapping ?? {}) as Record<string, JsonValue>,
    }));
  const actions: Record<string, ActionsActionData> = {};
  for (const [key, action] of Object.entries(definition.actions)) {
    const fields: Record<string, ActionsFieldData> = {};
    for (const [name, field] of Object.entries(action.fields ?? {})) fields[name] = projectField(field);
    actions[key] = { title: action.title ?? key, batch: typeof action.performBatch === 'function', fields };
  }
  return {
    dir,
    slug: definition.slug!,
    name: definition.name,
    description:
      oneLine(definition.description) ||
      `${definition.name}: Segment's open-source Actions destination, run by Tributary's router.`,
    hasTestAuthentication: typeof definition.authentication?.testAuthentication === 'function',
    settings,
    presets,
    actions,
  };
}

/**
 * Settings stored encrypted and shown masked: those a destination declares as passwords, and string
 * settings that are credentials by their format or name (some destinations declare an API key as a
 * plain string).
 */
const CREDENTIAL_SETTING_NAME =
  /(api_?key|secret|password|write_?key|access_?token|auth_?token|api_?token)$/i;

function isCredential(key: string, field: RawField): boolean {
  if (field.type === 'password' || field.format === 'password') return true;
  return (
    field.type === 'string' &&
    (field.choices === undefined || field.choices.length === 0) &&
    CREDENTIAL_SETTING_NAME.test(key)
  );
}

function projectSetting(key: string, field: RawField): ActionsSettingData {
  const choices = field.choices?.map((choice) => String(typeof choice === 'object' ? choice.value : choice));
  const type: ActionsSettingData['type'] = isCredential(key, field)
    ? 'password'
    : field.type === 'number' || field.type === 'integer'
      ? 'number'
      : field.type === 'boolean'
        ? 'boolean'
        : choices && choices.length > 0
          ? 'select'
          : 'string';
  return {
    key,
    label: field.label ?? key,
    type,
    required: field.required === true,
    ...(field.default !== undefined ? { default: json(field.default) } : {}),
    ...(type === 'select' ? { choices } : {}),
    ...(field.format !== undefined && field.format !== 'text' ? { format: field.format } : {}),
    ...(field.description ? { description: oneLine(field.description) } : {}),
  };
}

function projectField(field: RawField): ActionsFieldData {
  return {
    type: field.type ?? 'string',
    required: field.required === true,
    multiple: field.multiple === true,
    ...(field.default !== undefined ? { default: json(field.default) } : {}),
    ...(field.choices && field.choices.length > 0
      ? { choices: field.choices.map((choice) => (typeof choice === 'object' ? choice.value : choice)) }
      : {}),
  };
}

function json(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * The generated module: one `JSON.parse` per destination, one destination per line, so a dependency
 * upgrade shows as a diff of the destinations that changed, and neither tsc nor V8 has to treat a large
 * object literal as code.
 */
export function renderActionsCatalogModule(
  destinations: readonly ActionsDestinationData[],
  version: string,
): string {
  const lines = destinations.map(
    (destination) => `  JSON.parse(${JSON.stringify(JSON.stringify(destination))}),`,
  );
  return [
    '// Generated by `npm run catalog:actions` from @segment/action-destinations ' +
      version +
      '. Do not edit.',
    "import type { ActionsDestinationData } from './actions-catalog.types';",
    '',
    `export const ACTIONS_PACKAGE_VERSION = '${version}';`,
    '',
    '// prettier-ignore',
    'export const ACTIONS_DESTINATIONS: readonly ActionsDestinationData[] = [',
    ...lines,
    '];',
    '',
  ].join('\n');
}

export function installedActionsVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@segment/action-destinations/package.json') as { version: string }).version;
}

export const GENERATED_CATALOG_PATH = join(
  __dirname,
  '..',
  'src',
  'segment-actions',
  'actions-catalog.generated.ts',
);
