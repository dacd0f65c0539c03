import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describeProtocolsOutcomesContract } from '../../protocols-outcomes.contract';
import { NatsServerProcess } from '../../testing/nats-server.process';
import {
  DEAD_LETTER_STREAM,
  JetStreamEventLog,
  LEASE_STREAM,
  TRACKING_STREAM,
} from './jetstream-event-log.adapter';
import { PROTOCOLS_STREAM } from './jetstream-protocols-outcomes';

let server: NatsServerProcess;

beforeAll(async () => {
  server = await NatsServerProcess.start();
});

afterAll(async () => {
  await server?.dispose();
});

async function deleteStreams(): Promise<void> {
  const connection = await connect({ servers: server.url });
  try {
    const manager = await jetstreamManager(connection);
    for (const stream of [TRACKING_STREAM, DEAD_LETTER_STREAM, LEASE_STREAM, PROTOCOLS_STREAM]) {
      await manager.streams.delete(stream).catch(() => false);
    }
  } finally {
    await connection.close();
  }
}

describeProtocolsOutcomesContract('jetstream', () => ({
  async newStore(settings) {
    await deleteStreams();
    return {
      open: () => JetStreamEventLog.connect({ ...settings, servers: server.url, reconnectWaitMs: 250 }),
      dispose: async () => undefined,
    };
  },
}));
