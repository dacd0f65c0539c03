import { describeProtocolsOutcomesContract } from '../../protocols-outcomes.contract';
import { withNatsServer } from '../../testing/nats-server.kit';
import { JetStreamEventLog } from './jetstream-event-log.adapter';

const nats = withNatsServer();

describeProtocolsOutcomesContract('jetstream', () => ({
  async newStore(settings) {
    await nats.deleteStreams();
    return {
      open: () => JetStreamEventLog.connect({ ...settings, servers: nats.server.url, reconnectWaitMs: 250 }),
      dispose: async () => undefined,
    };
  },
}));
