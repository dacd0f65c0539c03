import { readFileSync } from 'node:fs';
import { CliError, EXIT } from '../shared/cli-context';

/** What `filters create` and `filters preview` take to describe one filter. */
export interface FilterFlags {
  if: string;
  title?: string;
  description?: string;
  disabled?: boolean;
  drop?: boolean;
  sample?: string;
  samplePath?: string;
  allowFields?: string;
  blockFields?: string;
  actions?: string;
}

/** The parts of a message whose fields a filter can keep or drop (docs/config-api.md, Filter). */
const FIELD_PARTS = ['properties', 'traits', 'context'] as const;

/**
 * The filter body of the Config API from flags: the condition (`--if`, FQL or `all`) and one or more
 * actions, each from its own flag (`--drop`, `--sample 10 --sample-path userId`, `--allow-fields` or
 * `--block-fields` with `properties.x,context.ip`), or all of them as JSON (`--actions`). The server
 * checks the FQL and the actions; the CLI only checks what it can read itself.
 */
export function filterFromFlags(flags: FilterFlags): Record<string, unknown> {
  const actions: Record<string, unknown>[] = [];
  if (flags.actions !== undefined) {
    const parsed = parseJsonFlag('--actions', flags.actions);
    if (!Array.isArray(parsed)) throw new CliError('--actions takes a JSON array of actions', EXIT.usage);
    actions.push(...parsed);
  }
  if (flags.drop) actions.push({ type: 'drop_event' });
  if (flags.sample !== undefined) {
    const percent = Number(flags.sample);
    if (flags.sample.trim() === '' || !(percent >= 0 && percent <= 100))
      throw new CliError(`--sample takes a percentage from 0 to 100, not "${flags.sample}"`, EXIT.usage);
    // The API's `percent` is a fraction (0.6 keeps 60 %); operators think in percentages.
    actions.push({ type: 'sample_event', percent: percent / 100, path: flags.samplePath ?? '' });
  } else if (flags.samplePath !== undefined) {
    throw new CliError('--sample-path goes with --sample', EXIT.usage);
  }
  if (flags.allowFields !== undefined)
    actions.push({ type: 'whitelist_fields', fields: fieldsOf('--allow-fields', flags.allowFields) });
  if (flags.blockFields !== undefined)
    actions.push({ type: 'blacklist_fields', fields: fieldsOf('--block-fields', flags.blockFields) });
  if (actions.length === 0)
    throw new CliError(
      'a filter needs an action: --drop, --sample, --allow-fields, --block-fields or --actions',
      EXIT.usage,
    );
  return {
    if: flags.if,
    title: flags.title ?? flags.if,
    ...(flags.description !== undefined && { description: flags.description }),
    enabled: !flags.disabled,
    actions,
  };
}

/** `properties.total,context.ip` → `{"properties":{"fields":["total"]},"context":{"fields":["ip"]}}`. */
function fieldsOf(flag: string, list: string): Record<string, { fields: string[] }> {
  const fields: Record<string, { fields: string[] }> = {};
  for (const entry of list.split(',').map((item) => item.trim())) {
    const dot = entry.indexOf('.');
    const part = entry.slice(0, dot);
    const field = entry.slice(dot + 1);
    if (dot <= 0 || field === '' || !(FIELD_PARTS as readonly string[]).includes(part)) {
      throw new CliError(
        `${flag} takes ${FIELD_PARTS.map((name) => `${name}.<field>`).join(', ')} separated by commas, not "${entry}"`,
        EXIT.usage,
      );
    }
    (fields[part] ??= { fields: [] }).fields.push(field);
  }
  return fields;
}

export function parseJsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} is not JSON: ${(error as Error).message}`, EXIT.usage);
  }
}

/** The sample message of `filters preview`: `--message '<json>'` or `--message-file F`. */
export function previewMessage(options: { message?: string; messageFile?: string }): string {
  if ((options.message === undefined) === (options.messageFile === undefined))
    throw new CliError('give the sample message with --message or --message-file (one of them)', EXIT.usage);
  if (options.message !== undefined) return options.message;
  try {
    return readFileSync(options.messageFile!, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CliError(`cannot read the message file ${options.messageFile}: ${reason}`, EXIT.usage);
  }
}
