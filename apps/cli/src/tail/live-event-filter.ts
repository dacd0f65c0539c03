/** Which messages `tail` shows: by type (`--type`) and by event or page/screen name (`--event`). */
export interface LiveEventFilter {
  types: readonly string[];
  events: readonly string[];
}

/** Comma-separated and repeated flags alike: `--type track,page --type identify`. */
export function listFlag(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  ];
}

export function isShown(message: Record<string, unknown>, filter: LiveEventFilter): boolean {
  if (filter.types.length > 0 && !filter.types.includes(String(message.type))) return false;
  if (filter.events.length > 0) {
    // A track names its event in `event`; a page or a screen in `name`.
    const name = message.type === 'track' ? message.event : message.name;
    if (typeof name !== 'string' || !filter.events.includes(name)) return false;
  }
  return true;
}

/** One readable line: when, what, who, which message. */
export function describeLiveEvent(message: Record<string, unknown>): string {
  const name = message.type === 'track' ? message.event : message.name;
  const who =
    typeof message.userId === 'string' && message.userId !== ''
      ? `user ${message.userId}`
      : `anonymous ${String(message.anonymousId ?? '-')}`;
  return [
    String(message.receivedAt ?? message.timestamp ?? '-'),
    String(message.type ?? '-').padEnd(8),
    typeof name === 'string' && name !== '' ? name : '-',
    who,
    String(message.messageId ?? '-'),
  ].join('  ');
}
