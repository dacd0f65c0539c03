import { isIP } from 'node:net';
import { parseEgressPolicy } from '@tributary/destinations';
import { z } from 'zod';

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/** Durations such as `24h`, `7d`, `90s`, `500ms`, or a bare number of milliseconds. */
export const durationSchema = z.string().transform((text, context) => {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
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

/** proxy-addr's names for address ranges, which Fastify's `trustProxy` accepts beside CIDRs. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isTrustedProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * `TRUST_PROXY`: whose `X-Forwarded-For` (and `-Proto`, `-Host`) to believe when taking a client's
 * address. Unset or `false`: nobody's, the address is the TCP peer's; `true`: every hop's (only
 * behind a proxy that overwrites the header); a number: that many hops from the server; otherwise
 * comma-separated addresses, CIDRs or `loopback`/`linklocal`/`uniquelocal`: those proxies.
 */
export const trustProxySchema = z
  .string()
  .optional()
  .transform((text, context): boolean | number | string[] => {
    const value = (text ?? '').trim();
    if (value === '' || value === 'false') return false;
    if (value === 'true') return true;
    if (/^\d{1,3}$/.test(value)) return Number(value);
    const entries = value.split(',').map((entry) => entry.trim());
    const wrong = entries.filter((entry) => !isTrustedProxyEntry(entry));
    if (wrong.length > 0) {
      context.addIssue({
        code: 'custom',
        message:
          `${wrong.map((entry) => JSON.stringify(entry)).join(', ')} is not an address, a CIDR or ` +
          'loopback/linklocal/uniquelocal (use true, false, a hop count, or a comma-separated list)',
      });
      return z.NEVER;
    }
    return entries;
  });

/**
 * Every setting of a Tributary process comes from the environment and is checked here at start:
 * a wrong value stops the process with a message naming the variable.
 */
export const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  TRUST_PROXY: trustProxySchema,
  /** Port of the separate Prometheus listener (`GET /metrics`); 0 picks a free one. Never the public port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** Interface of the metrics listener: loopback by default, so only the host itself can scrape. */
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  /** KurrentDB/EventStoreDB connection string; absent means the embedded SQLite event store. */
  EVENTSTORE_URL: optionalText,
  TRIBUTARY_ADMIN_EMAIL: optionalText.pipe(z.email().optional()),
  TRIBUTARY_ADMIN_PASSWORD: optionalText,
  /** An instance-admin token with exactly this value: a credential, so a weak one is refused. */
  TRIBUTARY_BOOTSTRAP_TOKEN: optionalText.pipe(
    z
      .string()
      .min(32, 'must be at least 32 characters (openssl rand -base64 48 makes a good one)')
      .refine(
        (token) => new Set(token).size >= 8,
        'must not repeat a few characters: use a random value (openssl rand -base64 48)',
      )
      .optional(),
  ),
  /** 64 hex characters; absent means a key file generated once in DATA_DIR. */
  TRIBUTARY_SECRET_KEY: optionalText.pipe(
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
      .optional(),
  ),
  /**
   * Earlier deployment keys (64 hex characters each, comma-separated) kept to decrypt values they
   * encrypted, while `TRIBUTARY_SECRET_KEY` encrypts new ones: how the key is rotated.
   */
  TRIBUTARY_PREVIOUS_SECRET_KEYS: optionalText.pipe(
    z
      .string()
      .regex(
        /^[0-9a-fA-F]{64}(\s*,\s*[0-9a-fA-F]{64})*$/,
        'must be 64-hexadecimal-character keys separated by commas',
      )
      .optional(),
  ),
  /** NATS server(s) with JetStream for the tracking message log; absent means the embedded SQLite log. */
  NATS_URL: optionalText,
  /**
   * Replicas of each JetStream stream Tributary creates (TRACKING, DEADLETTER, LEASES, SEEN_ONCE): 1 on a single
   * server, 3 (or 5) in a JetStream cluster. Existing streams are moved to it at start.
   */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** How long a messageId is remembered for deduplication. */
  DEDUPE_WINDOW: durationSchema.default(24 * 3_600_000),
  /**
   * On NATS: `on` serves DEDUPE_WINDOW from the on-disk dedupe index (RAM does not grow with the
   * window); `off` leaves it to JetStream's duplicate window (150-270 bytes of server RAM per id,
   * which runs nats-server out of memory within a day past a few hundred messages per second).
   */
  DEDUPE_INDEX: z.enum(['on', 'off']).default('on'),
  /** JetStream's own duplicate window under the dedupe index: covers ids stored but not yet indexed. */
  DEDUPE_GUARD_WINDOW: durationSchema.default(2 * 60_000),
  /**
   * Disk cap of the dedupe index in bytes (0: none); over it the oldest hour is dropped early. The
   * default, 8 GiB at about 30 bytes per id, holds a full 24 h window at some 3,300 messages/s per
   * replica (the "few thousand" the index is sized for), with 1-2 GB of RAM for its filters; past
   * it a flood of new ids shortens the window instead of filling the disk and the filters' RAM.
   */
  DEDUPE_INDEX_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(8 * 1024 ** 3),
  /**
   * Directory of the dedupe index file. Default DATA_DIR; replicas sharing one directory each take
   * their own file (`dedupe-index.sqlite`, `dedupe-index.2.sqlite`, ...).
   */
  DEDUPE_INDEX_DIR: optionalText,
  /** How long tracking messages stay in the log; bounds how far back a replay can reach. */
  RETENTION: durationSchema.default(7 * 86_400_000),
  /** The region this deployment serves; workspaces of another region are refused by the tracking API. */
  TRIBUTARY_REGION: z.enum(['us', 'eu']).default('us'),
  /**
   * The address browsers and apps reach this deployment at (`https://t.example.com`, optionally with
   * a path prefix): the settings served to Segment's libraries point their events there. Absent: the
   * scheme and host each settings request arrived with.
   */
  PUBLIC_BASE_URL: optionalText.pipe(
    z
      .url({
        protocol: /^https?$/,
        error: 'must be an http:// or https:// URL such as https://t.example.com',
      })
      .optional(),
  ),
  /**
   * Tracking API requests per second per workspace, so that one write key cannot fill the shared log,
   * routers and disk for every other tenant; `0` turns the limit off (one trusted tenant).
   */
  TRACKING_RATE_LIMIT: optionalText
    .pipe(z.coerce.number<string | undefined>().int().min(0).default(1_000))
    .transform((limit) => (limit === 0 ? undefined : limit)),
  /**
   * Base URLs clients use to reach `/token` (comma-separated), accepted as a client assertion's `aud`
   * besides the address the request arrived at: set it when a proxy terminates TLS in front.
   */
  OAUTH_AUDIENCES: optionalText,
  /**
   * Client assertions `/token` accepts per workspace (all its OAuth applications together) per 10
   * minutes, per replica; more: 429 `slow_down`. Each leaves a replay record that holds one of the
   * deployment's 100,000 places for up to 10 minutes, so this keeps one tenant from filling them.
   */
  OAUTH_ASSERTIONS_PER_WORKSPACE: z.coerce.number().int().positive().max(50_000).default(5_000),
  /** How long the router retries a failing delivery before dead-lettering it (docs/tracking-api.md §12.2: 4 hours). */
  RETRY_WINDOW: durationSchema.default(4 * 3_600_000),
  /** Messages in delivery at once per destination. */
  ROUTER_MAX_IN_FLIGHT: z.coerce.number().int().positive().default(64),
  /**
   * How long a delivery may go without news before the log gives it to another router: a crashed
   * router's messages come back after this. A slow delivery signals progress every half of it, so it
   * may be shorter than a destination's timeout. At least 1 s.
   */
  ROUTER_ACK_WAIT: durationSchema.pipe(z.number().int().min(1_000, 'must be at least 1s')).default(5_000),
  /**
   * How long each JetStream pull of a router (destination consumers, replays, tails) may wait on the
   * server, with a heartbeat at half of it: a pull lost with a NATS node or to a leader election is
   * noticed and issued again within about this long. The client's own default is 30 s. At least 1 s.
   */
  ROUTER_PULL_EXPIRES: durationSchema.pipe(z.number().int().min(1_000, 'must be at least 1s')).default(2_000),
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
  /**
   * PostgreSQL destination pools (one per connection string, up to 4 connections each) a router keeps
   * open; past it the least recently used one is closed.
   */
  POSTGRES_DESTINATION_MAX_POOLS: z.coerce.number().int().positive().max(10_000).default(50),
  /**
   * Wall time of one function invocation, awaited `fetch` calls included (docs/functions.md §1): past
   * it the isolate's execution is terminated and the invocation counts as a timeout. 1 to 60 s.
   */
  FUNCTION_TIMEOUT: durationSchema
    .pipe(z.number().int().min(1_000, 'must be at least 1s').max(60_000, 'must be at most 60s'))
    .default(5_000),
  /** Memory of one function's isolate, in MB (16 to 1024): past it the isolate is disposed and rebuilt. */
  FUNCTION_MEMORY_MB: z.coerce.number().int().min(16).max(1_024).default(128),
  /**
   * Processes that run tenant functions, per process that invokes them (router, tracking API, Config
   * API): separate from its event loop, so a function stuck in a loop delays nothing else.
   */
  FUNCTION_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /** Config API requests per minute per token. */
  CONFIG_API_RATE_LIMIT: z.coerce.number().int().positive().default(200),
  /** Public API (`/public-api`) requests per minute per token, per replica; a budget of its own. */
  PUBLIC_API_RATE_LIMIT: z.coerce.number().int().positive().default(600),
  /**
   * Where destinations may connect: `open` (loopback and private networks too) or `public` (public
   * addresses only). Link-local/metadata, 0.0.0.0/8 and multicast are refused in both. `public` by
   * default, so that an instance shared by tenants is safe without reading the docs; `npm start`
   * (one team's own install, sending to its own services) sets `open`.
   */
  TRIBUTARY_EGRESS: z.enum(['open', 'public']).default('public'),
  /** Host names, addresses and CIDRs destinations may reach under `public` (comma-separated). */
  TRIBUTARY_EGRESS_ALLOW: optionalText,
  /**
   * Largest Config API request body, in bytes of its JSON: each write carries one resource, and every
   * process keeps every resource in memory. Larger bodies get 400, code 3.
   */
  CONFIG_API_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(4 * 1024 * 1024)
    .default(256 * 1024),
  /** Deepest nesting of arrays and objects in a Config API request body; deeper bodies get 400, code 3. */
  CONFIG_API_MAX_JSON_DEPTH: z.coerce.number().int().min(8).max(256).default(32),
  /** Per-workspace counts past which a create gets 429, code 8 (RESOURCE_EXHAUSTED). */
  WORKSPACE_MAX_SOURCES: z.coerce.number().int().positive().default(1_000),
  WORKSPACE_MAX_DESTINATIONS: z.coerce.number().int().positive().default(1_000),
  DESTINATION_MAX_FILTERS: z.coerce.number().int().positive().default(100),
  WORKSPACE_MAX_TRACKING_PLANS: z.coerce.number().int().positive().default(1_000),
  WORKSPACE_MAX_OAUTH_APPLICATIONS: z.coerce.number().int().positive().default(100),
  /** Functions one workspace may hold (docs/functions.md §1); a create past it: 429, code 8. */
  WORKSPACE_MAX_FUNCTIONS: z.coerce.number().int().positive().default(100),
  /** Bytes of UTF-8 of one function version's code; more: 400, code 3. */
  FUNCTION_MAX_CODE_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(1024 * 1024)
    .default(128 * 1024),
  /**
   * Bytes of JSON all of a workspace's sources, destinations, filters and tracking plans may hold
   * together: every process keeps them in memory. A write past it: 429, code 8.
   */
  WORKSPACE_MAX_CONFIG_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .default(16 * 1024 * 1024),
  /** Bytes of JSON of one destination filter (the router keeps and runs every one); more: 400, code 3. */
  FILTER_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(4 * 1024 * 1024)
    .default(16 * 1024),
  /** Replays running at once in a workspace: each one reads the whole log from its start time. */
  WORKSPACE_MAX_RUNNING_REPLAYS: z.coerce.number().int().positive().default(4),
  /**
   * Live-events streams (`GET …/live-events`) open at once per process: per token and per workspace
   * beyond these, 429 code 8; past the process total, 503 with Retry-After. Each stream is a log
   * consumer with a buffer of up to 1 MiB.
   */
  LIVE_EVENTS_MAX_STREAMS_PER_TOKEN: z.coerce.number().int().positive().default(5),
  LIVE_EVENTS_MAX_STREAMS_PER_WORKSPACE: z.coerce.number().int().positive().default(20),
  LIVE_EVENTS_MAX_STREAMS: z.coerce.number().int().positive().default(200),
  /**
   * Config events one audit-trail page reads at most (the store holds every workspace's): past it the
   * page ends early, with a page token to go on from.
   */
  AUDIT_SCAN_LIMIT: z.coerce.number().int().min(500).max(1_000_000).default(5_000),
  /** HTTP Basic (email:password) attempts per minute per email, whatever their outcome. */
  BASIC_AUTH_RATE_LIMIT_PER_EMAIL: z.coerce.number().int().positive().default(10),
  /** HTTP Basic attempts per minute per client address (see TRUST_PROXY), whatever their outcome. */
  BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().positive().default(30),
  /**
   * Password hashes (scrypt: a core's work for a noticeable moment and 32 MiB each) computed at once; as many again may
   * wait, more are answered 503 with Retry-After.
   */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
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
    try {
      // Read here so that a bad allow-list entry stops every process at start, not the router later.
      parseEgressPolicy(environment.TRIBUTARY_EGRESS, environment.TRIBUTARY_EGRESS_ALLOW);
    } catch (error) {
      throw new EnvironmentError(`invalid configuration: ${(error as Error).message}`);
    }
    if (environment.METRICS_PORT !== 0 && environment.METRICS_PORT === environment.PORT) {
      throw new EnvironmentError(
        `METRICS_PORT must differ from PORT (${environment.PORT}): /metrics is never served on the public port`,
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

/**
 * What `createHttpApplication` takes from the environment: the metrics listener, the trusted proxies,
 * and the most Config API body bytes it parses (twice `CONFIG_API_MAX_BODY_BYTES`, which is measured
 * on compact JSON, so that a client's indentation still fits).
 */
export function httpApplicationOptionsOf(
  environment: Pick<
    Environment,
    'METRICS_PORT' | 'METRICS_HOST' | 'TRUST_PROXY' | 'CONFIG_API_MAX_BODY_BYTES'
  >,
): {
  metricsListener: { port: number; host: string };
  trustProxy: Environment['TRUST_PROXY'];
  maxJsonBodyBytes: number;
} {
  return {
    metricsListener: metricsListenerOf(environment),
    trustProxy: environment.TRUST_PROXY,
    maxJsonBodyBytes: 2 * environment.CONFIG_API_MAX_BODY_BYTES,
  };
}

/** The `/metrics` listener's address from the environment (`createHttpApplication`'s `metricsListener`). */
export function metricsListenerOf(environment: Pick<Environment, 'METRICS_PORT' | 'METRICS_HOST'>): {
  port: number;
  host: string;
} {
  return { port: environment.METRICS_PORT, host: environment.METRICS_HOST };
}
