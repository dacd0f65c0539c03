/** The three kinds of function (docs/functions.md) and what the console says of each. */
export type FunctionKind = 'SOURCE' | 'DESTINATION' | 'INSERT_DESTINATION';

export const FUNCTION_KINDS: ReadonlyArray<{ kind: FunctionKind; label: string; description: string }> = [
  {
    kind: 'DESTINATION',
    label: 'Destination function',
    description: 'Delivers messages to any HTTP API, instead of a catalog destination',
  },
  {
    kind: 'INSERT_DESTINATION',
    label: 'Insert function',
    description: 'Changes or drops messages on their way to one destination',
  },
  {
    kind: 'SOURCE',
    label: 'Source function',
    description: 'Turns any HTTP POST (a webhook) into messages',
  },
];

export function kindLabel(kind: string): string {
  return FUNCTION_KINDS.find((entry) => entry.kind === kind)?.label ?? kind;
}

export type FunctionSettingType = 'string' | 'boolean' | 'array' | 'text-map';
export const SETTING_TYPES: readonly FunctionSettingType[] = ['string', 'boolean', 'array', 'text-map'];

/** A setting the function declares, as the Config API has it. */
export interface FunctionSettingDeclaration {
  name: string;
  label: string;
  type: FunctionSettingType;
  description: string;
  required: boolean;
  sensitive: boolean;
}

/** The code a new function starts with: the kind's entry point, ready to run on the sample. */
export function starterCode(kind: FunctionKind): string {
  if (kind === 'SOURCE') {
    return `// Runs on every POST to the source's webhook URL; emit messages with Segment.track(...) etc.
async function onRequest(request, settings) {
  const body = await request.json();
  Segment.track({
    event: body.event ?? 'Webhook Received',
    userId: body.userId,
    properties: body.properties ?? {},
  });
}
`;
  }
  if (kind === 'INSERT_DESTINATION') {
    return `// Return the message (changed or not) to let it through; return nothing to drop it.
async function onTrack(event, settings) {
  event.properties = { ...event.properties, checked: true };
  return event;
}

async function onIdentify(event, settings) {
  return event;
}
`;
  }
  return `// Called per message routed to an instance; throw RetryError to retry, ValidationError to discard.
async function onTrack(event, settings) {
  console.log('track', event.event);
  const response = await fetch(settings.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (response.status >= 500 || response.status === 429) throw new RetryError(\`HTTP \${response.status}\`);
  if (!response.ok) throw new ValidationError(\`HTTP \${response.status}\`);
}
`;
}

/**
 * The sample a preview runs on: a track message for destination and insert functions (its `type`
 * picks the handler), a webhook body for source functions.
 */
export function sampleEvent(kind: FunctionKind): string {
  const sample =
    kind === 'SOURCE'
      ? { event: 'Order Placed', userId: 'user-42', properties: { order_id: 'o-1001', total: 42.5 } }
      : {
          type: 'track',
          event: 'Order Completed',
          userId: 'user-42',
          messageId: 'sample-message-1',
          timestamp: '2026-01-01T12:00:00.000Z',
          properties: { order_id: 'o-1001', total: 42.5, currency: 'EUR' },
          context: { library: { name: 'analytics-node', version: '2.0.0' } },
        };
  return JSON.stringify(sample, null, 2);
}

/**
 * A setting's value as the function will get it, from what was typed: a boolean as is, an array one
 * item per line, a text map as a JSON object, a string as typed. An unreadable text map is an error
 * naming the setting.
 */
export function previewSettingValue(
  declaration: Pick<FunctionSettingDeclaration, 'name' | 'type'>,
  typed: string | boolean | undefined,
): unknown {
  if (declaration.type === 'boolean') return typed === true;
  const text = typeof typed === 'string' ? typed : '';
  if (declaration.type === 'array')
    return text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
  if (declaration.type === 'text-map') {
    if (text.trim() === '') return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error(`${declaration.name} takes a JSON object of text to text, such as {"a": "b"}`);
    return parsed;
  }
  return text;
}

/** JSON text shown indented; anything that is not JSON, as it came. */
export function prettyJson(text: string | null | undefined): string {
  if (text === null || text === undefined) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
