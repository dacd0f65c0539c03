import {
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  TimeoutError,
  type NatsConnection,
} from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { ConsumerMismatchError, EventLogUnavailableError } from '../../event-log.port';
import type { JetStreamEventLogOptions } from './jetstream-options';
import { DEFAULT_PULL_EXPIRES_MS } from './restarting-pull';

const DEFAULT_PUBLISH_TIMEOUT_MS = 2000;
const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
const DEFAULT_RECONNECT_WAIT_MS = 500;
/**
 * A request of `quickManager`: a request sent while a stream elects its leader is never answered, so
 * one retried across an election (`retryingElections`) waits this long, not `requestTimeoutMs`,
 * before it is sent again.
 */
const QUICK_REQUEST_TIMEOUT_MS = 1000;
/** Between two tries of `retryingElections`. */
const RETRY_PAUSE_MS = 250;

/**
 * What every part of the JetStream event log shares: one connection and its clients, the timeouts,
 * whether the log can be used right now, and how a client error becomes the port's error. The
 * facade (`jetstream-event-log.adapter.ts`) owns it and keeps `connected` and `closed` current.
 */
export class JetStreamSession {
  connected = true;
  closed = false;

  constructor(
    readonly connection: NatsConnection,
    readonly client: JetStreamClient,
    readonly manager: JetStreamManager,
    /** `manager` with requests of `QUICK_REQUEST_TIMEOUT_MS`, for requests tried again across an election. */
    readonly quickManager: JetStreamManager,
    readonly publishTimeoutMs: number,
    readonly requestTimeoutMs: number,
    /** How long one pull request may wait on the server (`ROUTER_PULL_EXPIRES`); heartbeats at half. */
    readonly pullExpiresMs: number = DEFAULT_PULL_EXPIRES_MS,
  ) {}

  /** Connects to NATS and JetStream. Throws `EventLogUnavailableError` if NATS is down. */
  static async open(options: JetStreamEventLogOptions): Promise<JetStreamSession> {
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let connection: NatsConnection;
    try {
      connection = await connect({
        servers:
          typeof options.servers === 'string'
            ? options.servers.split(',').map((url) => url.trim())
            : options.servers,
        name: options.connectionName ?? 'tributary-event-log',
        maxReconnectAttempts: -1,
        reconnectTimeWait: options.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
        timeout: requestTimeoutMs,
        // Otherwise every publish captures two stack traces (an Error for async context and one for its
        // timeout) just in case it fails, a large share of the tracking API's CPU under load (BENCHMARKS.md).
        // Our errors are translated to EventLogUnavailableError with the cause kept, so nothing relies on them.
        noAsyncTraces: true,
      });
    } catch (error) {
      throw new EventLogUnavailableError(`cannot connect to NATS at ${String(options.servers)}`, {
        cause: error,
      });
    }
    try {
      const manager = await jetstreamManager(connection, { timeout: requestTimeoutMs });
      return new JetStreamSession(
        connection,
        jetstream(connection, { timeout: requestTimeoutMs }),
        manager,
        await jetstreamManager(connection, { timeout: QUICK_REQUEST_TIMEOUT_MS, checkAPI: false }),
        options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS,
        requestTimeoutMs,
        options.pullExpiresMs ?? DEFAULT_PULL_EXPIRES_MS,
      );
    } catch (error) {
      await connection.close();
      throw JetStreamSession.unavailableAtStart(error);
    }
  }

  /** What a failure while setting the log up is thrown as: unavailable when it is one, else as it is. */
  static unavailableAtStart(error: unknown): unknown {
    return isUnavailability(error)
      ? new EventLogUnavailableError('JetStream is not available', { cause: error })
      : error;
  }

  assertUsable(): void {
    if (this.closed) throw new EventLogUnavailableError('the JetStream event log is closed');
    if (!this.connected) throw new EventLogUnavailableError('not connected to NATS (reconnecting)');
  }

  translate(error: unknown, what: string): unknown {
    if (error instanceof EventLogUnavailableError || error instanceof ConsumerMismatchError) return error;
    if (this.closed || isUnavailability(error)) {
      return new EventLogUnavailableError(`${what} failed: JetStream unavailable`, { cause: error });
    }
    return error;
  }

  /** `work` once the log is usable, its failure translated (`what` names it in the error). */
  async guard<T>(what: string, work: () => Promise<T>): Promise<T> {
    this.assertUsable();
    try {
      return await work();
    } catch (error) {
      throw this.translate(error, what);
    }
  }

  /**
   * `work` tried again, until `retryMs` has passed since the first try, while the log is unavailable
   * in a way a NATS election or a reconnection ends: a stream leader killed leaves what was sent to it
   * unanswered until the replicas elect another, which takes seconds, and a connection that dropped
   * moves to another server of the cluster within a second. So `work` must be safe to repeat. A lone
   * server that is down stays down for longer than a caller should wait: its failure is thrown at once.
   */
  async retryingElections<T>(what: string, retryMs: number, work: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + retryMs;
    for (;;) {
      try {
        this.assertUsable();
        return await work();
      } catch (error) {
        const translated = this.translate(error, what);
        const retryable =
          translated instanceof EventLogUnavailableError &&
          !this.closed &&
          (this.connected || this.connection.info?.cluster !== undefined);
        if (!retryable || Date.now() + RETRY_PAUSE_MS >= giveUpAt) throw translated;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }
}

export function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

/** Errors that mean "the log cannot be reached right now", looking through `cause` chains. */
export function isUnavailability(error: unknown): boolean {
  for (
    let current = error;
    current instanceof Error;
    current = (current as Error & { cause?: unknown }).cause
  ) {
    if (
      current instanceof TimeoutError ||
      current instanceof NoRespondersError ||
      current instanceof ClosedConnectionError ||
      current instanceof DrainingConnectionError ||
      current instanceof ConnectionError ||
      (current instanceof JetStreamApiError && current.status === 503)
    ) {
      return true;
    }
  }
  return false;
}
