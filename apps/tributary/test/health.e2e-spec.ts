import { EVENT_STORE, EventStore } from '@tributary/event-store';
import { startTributary } from '../../../test/support/tributary-test-instance';

describe('health endpoints', () => {
  it('live always; ready while the event store and the message log answer, 503 naming the part that does not', async () => {
    const instance = await startTributary();
    try {
      const get = (path: string) =>
        fetch(`${instance.baseUrl}${path}`).then(async (r) => ({ status: r.status, body: await r.json() }));
      expect(await get('/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
      const ready = await get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({
        status: 'ok',
        info: { event_store: { status: 'up' }, event_log: { status: 'up' } },
      });
      await instance.app.get<EventStore>(EVENT_STORE).close();
      const notReady = await get('/health/ready');
      expect(notReady.status).toBe(503);
      expect(notReady.body).toMatchObject({ status: 'error', error: { event_store: { status: 'down' } } });
      expect((await get('/health/live')).status).toBe(200);
    } finally {
      await instance.stop({ removeData: true }).catch(() => undefined);
    }
  });
});
