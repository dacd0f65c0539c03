import { CliError, EXIT } from '../shared/cli-context';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A replay's `--from` / `--to`: an RFC 3339 time, or a span back from now (`30m`, `6h`, `7d`),
 * answered as the RFC 3339 UTC time the Config API takes. The server checks the window itself.
 */
export function replayTime(flag: string, text: string, now = Date.now()): string {
  const span = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (span) return new Date(now - Number(span[1]) * UNIT_MS[span[2]]).toISOString();
  // An RFC 3339 time names its zone; a bare date or local time would mean the machine's zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text.trim())) {
    throw new CliError(
      `${flag} takes an RFC 3339 time (2026-11-01T00:00:00Z) or a span back from now (30m, 6h, 7d), not "${text}"`,
      EXIT.usage,
    );
  }
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new CliError(`${flag}: "${text}" is not a time`, EXIT.usage);
  return new Date(time).toISOString();
}
