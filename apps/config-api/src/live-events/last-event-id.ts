/**
 * The position a reader resumes after: absent (start at now), a sequence, or null when the header
 * holds something this stream never sent as an id.
 */
export function parseLastEventId(header: string | undefined): number | undefined | null {
  if (header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (!/^\d{1,15}$/.test(value)) return null;
  return Number(value);
}
