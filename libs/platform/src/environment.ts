import { z } from 'zod';

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/** Durations such as `24h`, `7d`, `90s`, `500ms`, or a bare number of milliseconds. */
export const durationSchema = z.string().transform((text, context) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) {
    context.addIssue({
      code: 'custom',
      message: `"${text}" is not a duration such as 500ms, 90s, 15m, 24h or 7d`,
    });
    return z.NEVER;
  }
  const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 'ms') as 'ms'];
  return Math.round(Number(match[1]) * unitMs);
});

/**
 * Every setting of a Tributary process comes from the environment and is checked here at start:
 * a wrong value stops the process with a message naming the variable.
 */
export const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().default('./data'),
  /** KurrentDB/EventStoreDB connection string; absent means the embedded SQLite event store. */
  EVENTSTORE_URL: optionalText,
  TRIBUTARY_ADMIN_EMAIL: optionalText.pipe(z.email().optional()),
  TRIBUTARY_ADMIN_PASSWORD: optionalText,
  TRIBUTARY_BOOTSTRAP_TOKEN: optionalText,
  /** 64 hex characters; absent means a key file generated once in DATA_DIR. */
  TRIBUTARY_SECRET_KEY: optionalText.pipe(
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
      .optional(),
  ),
  /** NATS server(s) with JetStream for the tracking message log; absent means the embedded SQLite log. */
  NATS_URL: optionalText,
  /**
   * Replicas of each JetStream stream Tributary creates (TRACKING, DEADLETTER, LEASES): 1 on a single
   * server, 3 (or 5) in a JetStream cluster. Existing streams are moved to it at start.
   */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** How long a messageId is remembered for deduplication. */
  DEDUPE_WINDOW: durationSchema.default(24 * 3_600_000),
  /**
   * On NATS: `on` serves DEDUPE_WINDOW from the on-disk dedupe index (RAM does not grow with the
   * window); `off` leaves it to JetStream's duplicate window (150-270 bytes of server RAM per id).
   */
  DEDUPE_INDEX: z.enum(['on', 'off']).default('on'),
  /** JetStream's own duplicate window under the dedupe index: covers ids stored but not yet indexed. */
  DEDUPE_GUARD_WINDOW: durationSchema.default(2 * 60_000),
  /** Disk cap of the dedupe index in bytes (0: none); over it the oldest hour is dropped early. */
  DEDUPE_INDEX_MAX_BYTES: z.coerce.number().int().min(0).default(0),
  /** Directory of the dedupe index file; each tracking API replica needs its own. Default DATA_DIR. */
  DEDUPE_INDEX_DIR: optionalText,
  /** How long tracking messages stay in the log; bounds how far back a replay can reach. */
  RETENTION: durationSchema.default(7 * 86_400_000),
  /** The region this deployment serves; workspaces of another region are refused by the tracking API. */
  TRIBUTARY_REGION: z.enum(['us', 'eu']).default('us'),
  /** Tracking API requests per second per workspace; absent means unlimited. */
  TRACKING_RATE_LIMIT: optionalText.pipe(z.coerce.number<string | undefined>().int().positive().optional()),
  /**
   * Base URLs clients use to reach `/token` (comma-separated), accepted as a client assertion's `aud`
   * besides the address the request arrived at: set it when a proxy terminates TLS in front.
   */
  OAUTH_AUDIENCES: optionalText,
  /** How long the router retries a failing delivery before dead-lettering it (spec §12.2: 4 hours). */
  RETRY_WINDOW: durationSchema.default(4 * 3_600_000),
  /** Messages in delivery at once per destination. */
  ROUTER_MAX_IN_FLIGHT: z.coerce.number().int().positive().default(64),
  /**
   * Event tables (one per track event name) the PostgreSQL destination creates per schema; a message
   * that needs one more is discarded. The seven standard tables are not counted.
   */
  POSTGRES_DESTINATION_MAX_TABLES: z.coerce.number().int().positive().default(200),
  /**
   * Columns per table the PostgreSQL destination creates, standard ones included; values for more are
   * left out and counted. At least 16 (the columns a table starts with); PostgreSQL's own limit is 1,600.
   */
  POSTGRES_DESTINATION_MAX_COLUMNS: z.coerce.number().int().min(16).max(1_600).default(500),
  /** Config API requests per minute per token. */
  CONFIG_API_RATE_LIMIT: z.coerce.number().int().positive().default(200),
  LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log'),
});

export type Environment = z.infer<typeof environmentSchema>;

export class EnvironmentError extends Error {}

export function loadEnvironment(source: Record<string, string | undefined> = process.env): Environment {
  const result = environmentSchema.safeParse(source);
  if (result.success) {
    const environment = result.data;
    if (Boolean(environment.TRIBUTARY_ADMIN_EMAIL) !== Boolean(environment.TRIBUTARY_ADMIN_PASSWORD)) {
      throw new EnvironmentError(
        'TRIBUTARY_ADMIN_EMAIL and TRIBUTARY_ADMIN_PASSWORD must be set together (or neither)',
      );
    }
    return environment;
  }
  const problems = result.error.issues.map(
    (issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`,
  );
  throw new EnvironmentError(`invalid configuration: ${problems.join('; ')}`);
}

export const ENVIRONMENT = Symbol('Environment');
