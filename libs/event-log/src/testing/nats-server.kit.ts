import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ATTEMPT_STREAM } from '../adapters/jetstream/attempt-history';
import { FUNCTION_LOG_STREAM } from '../adapters/jetstream/jetstream-function-logs';
import { PROTOCOLS_STREAM } from '../adapters/jetstream/jetstream-protocols-outcomes';
import {
  DEAD_LETTER_STREAM,
  LEASE_STREAM,
  SEEN_ONCE_STREAM,
  TRACKING_STREAM,
} from '../adapters/jetstream/jetstream-streams';
import { NatsServerProcess } from './nats-server.process';

/** Every stream the JetStream adapter creates. */
export const JETSTREAM_STREAMS = [
  TRACKING_STREAM,
  DEAD_LETTER_STREAM,
  LEASE_STREAM,
  SEEN_ONCE_STREAM,
  ATTEMPT_STREAM,
  PROTOCOLS_STREAM,
  FUNCTION_LOG_STREAM,
] as const;

export interface NatsServerForTests {
  /** The running server (started by the spec file's `beforeAll`). */
  readonly server: NatsServerProcess;
  /** Drops every stream, and so every consumer: a test that calls it starts from an empty log. */
  deleteStreams(): Promise<void>;
}

/**
 * One nats-server for the tests of a spec file (or of the `describe` it is called in): started
 * before them, disposed after them.
 */
export function withNatsServer(): NatsServerForTests {
  let started: NatsServerProcess | undefined;
  beforeAll(async () => {
    started = await NatsServerProcess.start();
  });
  afterAll(async () => {
    await started?.dispose();
  });
  const server = (): NatsServerProcess => {
    if (!started) throw new Error('the nats-server starts in beforeAll: use it in a test or a hook');
    return started;
  };
  return {
    get server() {
      return server();
    },
    async deleteStreams() {
      const connection = await connect({ servers: server().url });
      try {
        const manager = await jetstreamManager(connection);
        for (const stream of JETSTREAM_STREAMS) await manager.streams.delete(stream).catch(() => false);
      } finally {
        await connection.close();
      }
    },
  };
}
