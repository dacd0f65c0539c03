/**
 * What never reaches a log line: credentials in headers, tokens, passwords, destination secrets and
 * anything the secret box encrypted. Applied to every message and every logged object, since a log
 * is read by more people than the secrets it could leak are meant for.
 */
export const REDACTED = '[REDACTED]';

/** Keys whose value is a secret whatever it looks like (matched case-insensitively, `-`/`_` ignored). */
const SECRET_KEY = /authorization|token|password|secret|connectionstring|apikey|writekey|cookie/i;

/** Secrets embedded in free text: encrypted settings, and credentials after an HTTP auth scheme. */
const SECRET_IN_TEXT = [
  /enc:v1:[^\s"',;)}\]]*/g,
  /\b(Basic|Bearer)\s+[A-Za-z0-9._~+/=-]+/gi,
  /((?:password|secret|token|shared_secret|connection_string)["']?\s*[:=]\s*["']?)[^\s"',;)}\]]+/gi,
];

export function redactText(text: string): string {
  if (!mayHoldSecret(text)) return text;
  let redacted = text;
  redacted = redacted.replace(SECRET_IN_TEXT[0], REDACTED);
  redacted = redacted.replace(SECRET_IN_TEXT[1], (_match, scheme: string) => `${scheme} ${REDACTED}`);
  redacted = redacted.replace(SECRET_IN_TEXT[2], (_match, prefix: string) => `${prefix}${REDACTED}`);
  return redacted;
}

/** Cheap pre-check: most lines hold none of these words, and skip the regular expressions. */
function mayHoldSecret(text: string): boolean {
  return /enc:v1:|basic|bearer|password|secret|token|connection_string/i.test(text);
}

function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key.replace(/[-_]/g, ''));
}

/** A copy of `value` with secret keys and secret-looking strings replaced; cycles and depth are bounded. */
export function redactValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8 || seen.has(value)) return '[...]';
  seen.add(value);
  if (value instanceof Error) {
    return {
      name: value.name,
      message: redactText(value.message),
      stack: value.stack && redactText(value.stack),
    };
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      isSecretKey(key) && item !== undefined && item !== null ? REDACTED : redactValue(item, depth + 1, seen);
  }
  return copy;
}
