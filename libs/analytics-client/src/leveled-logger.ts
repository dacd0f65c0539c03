import type { AnalyticsLogger, LogLevel } from './options';

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** Passes to `logger` the lines at or above `level`, each prefixed with the library's name. */
export class LeveledLogger {
  constructor(
    private readonly logger: AnalyticsLogger,
    private readonly level: LogLevel,
  ) {}

  error(message: string, ...details: unknown[]): void {
    if (RANK[this.level] >= RANK.error) this.logger.error(`[tributary-analytics] ${message}`, ...details);
  }

  warn(message: string, ...details: unknown[]): void {
    if (RANK[this.level] >= RANK.warn) this.logger.warn(`[tributary-analytics] ${message}`, ...details);
  }

  info(message: string, ...details: unknown[]): void {
    if (RANK[this.level] >= RANK.info) this.logger.info(`[tributary-analytics] ${message}`, ...details);
  }

  debug(message: string, ...details: unknown[]): void {
    if (RANK[this.level] >= RANK.debug) this.logger.debug(`[tributary-analytics] ${message}`, ...details);
  }
}
