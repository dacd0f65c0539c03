import type { LoggerService, LogLevel } from '@nestjs/common';
import pino, { DestinationStream, Logger as PinoLogger } from 'pino';
import type { Environment } from '../environment';
import { currentRequestId } from './request-context';
import { redactText, redactValue } from './secret-redaction';

type NestLevel = Environment['LOG_LEVEL'] | 'fatal';

/** Nest's level names on pino's: `log` is pino's `info`, `verbose` its `trace`. */
const PINO_LEVEL_OF: Record<NestLevel, pino.Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

export interface JsonLoggerOptions {
  level?: Environment['LOG_LEVEL'];
  /** Where lines go; standard output when absent. Tests pass a stream to read them back. */
  destination?: DestinationStream;
}

/** Fields of one line besides time, level, context and message. */
export type LogFields = Record<string, unknown>;

/**
 * Nest's logger as JSON lines through pino: `{"level","time","context","message","requestId",...}`,
 * one object per line, with the id of the request being handled when there is one, and every
 * secret redacted (see `secret-redaction.ts`).
 */
export class JsonLogger implements LoggerService {
  private readonly pino: PinoLogger;

  constructor(options: JsonLoggerOptions = {}) {
    this.pino = pino(
      {
        level: PINO_LEVEL_OF[options.level ?? 'log'],
        messageKey: 'message',
        base: undefined,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      options.destination ?? pino.destination({ dest: 1, sync: false }),
    );
  }

  log(message: unknown, ...optionalParams: unknown[]): void {
    this.write('log', message, optionalParams);
  }
  error(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams);
  }
  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.write('warn', message, optionalParams);
  }
  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.write('debug', message, optionalParams);
  }
  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.write('verbose', message, optionalParams);
  }
  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.write('fatal', message, optionalParams);
  }

  /** Nest calls this with the levels to keep; the most verbose of them becomes pino's threshold. */
  setLogLevels(levels: LogLevel[]): void {
    const mostVerbose = (['verbose', 'debug', 'log', 'warn', 'error', 'fatal'] as NestLevel[]).find((level) =>
      levels.includes(level as LogLevel),
    );
    if (mostVerbose) this.pino.level = PINO_LEVEL_OF[mostVerbose];
  }

  isEnabled(level: Environment['LOG_LEVEL']): boolean {
    return this.pino.isLevelEnabled(PINO_LEVEL_OF[level]);
  }

  /** A line with fields of its own, such as the one written per HTTP request. */
  write(level: NestLevel, message: unknown, optionalParams: unknown[] = [], fields?: LogFields): void {
    const pinoLevel = PINO_LEVEL_OF[level];
    if (!this.pino.isLevelEnabled(pinoLevel)) return;
    // Nest passes the context last: `logger.error(message, stack, context)`, `logger.log(message, context)`.
    const params = [...optionalParams];
    const context =
      params.length > 0 && typeof params[params.length - 1] === 'string' ? params.pop() : undefined;
    const line: LogFields = { context, requestId: fields?.requestId ?? currentRequestId(), ...fields };
    if (level === 'error' || level === 'fatal') {
      const stack = params.find((param) => typeof param === 'string');
      if (stack) line.stack = redactText(stack as string);
    }
    if (message instanceof Error) {
      line.error = redactValue(message);
      this.pino[pinoLevel](line, redactText(message.message));
    } else if (typeof message === 'string') {
      this.pino[pinoLevel](line, redactText(message));
    } else {
      line.data = redactValue(message);
      this.pino[pinoLevel](line, typeof message);
    }
  }
}
