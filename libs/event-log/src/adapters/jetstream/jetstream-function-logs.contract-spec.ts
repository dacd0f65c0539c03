import { jetstreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { FUNCTION_LOG_RETENTION_MS, FUNCTION_LOGS_KEPT_PER_FUNCTION } from '../../ports/function-logs.port';
import { describeFunctionLogsContract } from '../../function-logs.contract';
import { withNatsServer } from '../../testing/nats-server.kit';
import { JetStreamEventLog } from './jetstream-event-log.adapter';
import { FUNCTION_LOG_STREAM } from './jetstream-function-logs';

const nats = withNatsServer();

async function withManager<T>(work: (manager: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>) {
  const connection = await connect({ servers: nats.server.url });
  try {
    return await work(await jetstreamManager(connection));
  } finally {
    await connection.close();
  }
}

describeFunctionLogsContract('jetstream', () => ({
  async newStore(settings) {
    await nats.deleteStreams();
    return {
      open: () => JetStreamEventLog.connect({ ...settings, servers: nats.server.url, reconnectWaitMs: 250 }),
      dispose: async () => undefined,
    };
  },
}));

describe('JetStreamEventLog function logs (jetstream only)', () => {
  it('keeps them in a stream of their own, bounded by the server per function and by age', async () => {
    await nats.deleteStreams();
    const log = await JetStreamEventLog.connect({
      dedupeWindowMs: 60_000,
      retentionMs: 3_600_000,
      servers: nats.server.url,
    });
    try {
      const info = await withManager((manager) => manager.streams.info(FUNCTION_LOG_STREAM));
      expect(info.config).toMatchObject({
        subjects: ['fnlog.>'],
        max_msgs_per_subject: FUNCTION_LOGS_KEPT_PER_FUNCTION,
        max_age: nanos(FUNCTION_LOG_RETENTION_MS),
      });
      await log.appendFunctionLogs([
        {
          workspaceId: 'ws9',
          functionId: 'dfn_s',
          time: new Date().toISOString(),
          level: 'debug',
          message: 'on its subject',
          version: 2,
          invocationId: 'inv-s',
        },
      ]);
      const stored = await withManager((manager) =>
        manager.streams.getMessage(FUNCTION_LOG_STREAM, { last_by_subj: 'fnlog.ws9.dfn_s' }),
      );
      expect(stored?.json()).toMatchObject({ message: 'on its subject', level: 'debug', version: 2 });
    } finally {
      await log.close();
    }
  });
});
