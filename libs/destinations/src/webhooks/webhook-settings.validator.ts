/**
 * Limits on the webhook `headers` setting, checked when a destination is written through the Config API
 * (400, code 3) and again before a delivery (settings stored before the limits existed). A tenant's
 * headers are sent with every request, so their size is bounded once instead of on every delivery.
 */
export const MAX_WEBHOOK_HEADERS = 50;
export const MAX_WEBHOOK_HEADER_NAME_BYTES = 256;
export const MAX_WEBHOOK_HEADER_VALUE_BYTES = 8 * 1024;

/** RFC 9110 §5.6.2 `tchar`: the characters of a header name. */
const TOKEN_CHARACTERS = new Set(
  "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
);

/** Why `headers` cannot be stored, or `null`. The value itself is never quoted: it may be a secret. */
export function problemWithWebhookHeaders(headers: unknown): string | null {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return 'setting "headers" must be a map of strings';
  }
  const entries = Object.entries(headers as Record<string, unknown>);
  if (entries.length > MAX_WEBHOOK_HEADERS) {
    return `setting "headers" holds ${entries.length} headers; at most ${MAX_WEBHOOK_HEADERS} are allowed`;
  }
  for (const [name, value] of entries) {
    const shownName = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    if (Buffer.byteLength(name, 'utf8') > MAX_WEBHOOK_HEADER_NAME_BYTES) {
      return `header ${shownName}: names are at most ${MAX_WEBHOOK_HEADER_NAME_BYTES} bytes`;
    }
    const trimmedName = name.trim();
    if (trimmedName === '' || ![...trimmedName].every((character) => TOKEN_CHARACTERS.has(character))) {
      return `header ${shownName}: a name holds only letters, digits and !#$%&'*+-.^_\`|~`;
    }
    if (typeof value !== 'string') return `header ${shownName} must be a string`;
    if (Buffer.byteLength(value, 'utf8') > MAX_WEBHOOK_HEADER_VALUE_BYTES) {
      return `header ${shownName}: values are at most ${MAX_WEBHOOK_HEADER_VALUE_BYTES} bytes`;
    }
    if (/[\r\n\0]/.test(value)) return `header ${shownName}: a value cannot hold CR, LF or NUL`;
  }
  return null;
}
