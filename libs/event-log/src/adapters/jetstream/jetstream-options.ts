// The options of the JetStream event log, in a file of their own: the parts beside the facade
// read them, and the facade imports the parts, so they cannot live in the facade's file.
import type { EventLogSettings } from '../../event-log.port';

export interface JetStreamEventLogOptions extends EventLogSettings {
  /** NATS server URL, or several (comma-separated, as in `NATS_URL`). */
  servers: string | string[];
  /** How long a publish waits for JetStream's acknowledgement before failing as unavailable. Default 2000. */
  publishTimeoutMs?: number;
  /** Timeout of the first connection and of management calls. Default 5000. */
  requestTimeoutMs?: number;
  /** Wait between reconnect attempts (NATS adds jitter). Default 500. */
  reconnectWaitMs?: number;
  /**
   * Replicas of every stream Tributary creates (`num_replicas`, `NATS_STREAM_REPLICAS`): 1 on a single
   * server, 3 or 5 in a JetStream cluster to survive the loss of a server. Existing streams are moved to
   * this number at start. Default 1.
   */
  replicas?: number;
  /**
   * How long one pull request of a consumer or a tail may wait on the server (`ROUTER_PULL_EXPIRES`),
   * with a heartbeat at half of it: a pull lost with a NATS node or to a leader election is noticed
   * and issued again within about this long. At least 1000 (the client's minimum). Default 5000.
   */
  pullExpiresMs?: number;
  /** Told what setting up the log changed that an operator should know (a stream's replicas raised). */
  notice?: (message: string) => void;
  /** Shown by the server in its connection list. */
  connectionName?: string;
  /**
   * `duplicate_window` of `TRACKING` when it must differ from `dedupeWindowMs`: the short guard
   * (`DEDUPE_GUARD_WINDOW`) when the dedupe index (`@tributary/dedupe`) serves the long window.
   */
  trackingDuplicateWindowMs?: number;
}
