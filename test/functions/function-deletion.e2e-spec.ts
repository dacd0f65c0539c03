// A regulation's deletion forwarded to destination functions (docs/functions.md §2,
// docs/regulations.md §4): a function that declares `onDelete` is given Segment's delete event once
// per user and the regulation finishes for it; one without `onDelete` is not supported; one whose
// `onDelete` keeps throwing `RetryError` fails after the regulation's attempts.
import { configApi } from '../support/config-api.client';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import { destinationName } from '../../apps/router/test/router-e2e.kit';
import {
  createFunction,
  createFunctionDestination,
  FetchReceiver,
  FUNCTION_ENVIRONMENT,
} from './functions-e2e.kit';

const DELETER = `
async function onTrack(event) { return; }
async function onDelete(event, settings) {
  const response = await fetch(settings.endpoint + '/deleted', {
    method: 'POST',
    body: JSON.stringify({ type: event.type, userId: event.userId, messageId: event.messageId }),
  });
  if (!response.ok) throw new RetryError('HTTP ' + response.status);
}
`;
const WITHOUT_DELETE = `async function onTrack(event) { return; }`;
const REFUSING = `
async function onTrack(event) { return; }
async function onDelete(event) { throw new ValidationError('deletions are not accepted here'); }
`;

describe('regulations and destination functions', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let receiver: FetchReceiver;
  const ids: Record<'deleter' | 'without' | 'refusing', string> = { deleter: '', without: '', refusing: '' };

  beforeAll(async () => {
    t = await startTributary({ environment: FUNCTION_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    receiver = await FetchReceiver.start();
    const settings = [{ name: 'endpoint', required: true }];
    ids.deleter = await createFunction(t, source.workspaceSlug, 'DESTINATION', DELETER, settings);
    ids.without = await createFunction(t, source.workspaceSlug, 'DESTINATION', WITHOUT_DELETE);
    ids.refusing = await createFunction(t, source.workspaceSlug, 'DESTINATION', REFUSING);
    await createFunctionDestination(t, source, ids.deleter, { endpoint: receiver.url });
    await createFunctionDestination(t, source, ids.without);
    await createFunctionDestination(t, source, ids.refusing);
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await receiver?.close();
  });

  it("gives onDelete each user's delete event; a function without it is not supported", async () => {
    const created = await configApi(t, 'POST', `workspaces/${source.workspaceSlug}/regulations`, {
      regulation_type: 'Suppress_With_Delete',
      attributes: { name: 'userId', values: ['forget-me', 'and-me'] },
    });
    expect(created.status).toBe(200);
    const { value: final } = await pollUntil('the regulation is final', 30_000, async () => {
      const response = await configApi(t, 'GET', created.body.name);
      return response.body.finished_at ? response.body : undefined;
    });
    const statuses = Object.fromEntries(
      (
        final.stream_status[0].destination_status as Array<{ id: string; status: string; err_string: string }>
      ).map((entry) => [entry.id, entry]),
    );
    expect(statuses[destinationName(source, ids.deleter)]).toMatchObject({
      status: 'finished',
      err_string: '',
    });
    expect(statuses[destinationName(source, ids.without)]).toMatchObject({
      status: 'not_supported',
      err_string: 'the destination has no deletion',
    });
    expect(statuses[destinationName(source, ids.refusing)]).toMatchObject({
      status: 'failed',
      err_string: 'ValidationError: deletions are not accepted here',
    });

    const deleted = receiver.callsTo('/deleted').map((call) => call.body);
    expect(deleted.map((body) => body.userId).sort()).toEqual(['and-me', 'forget-me']);
    for (const body of deleted) {
      expect(body.type).toBe('delete');
      expect(body.messageId).toEqual(expect.any(String));
    }
  }, 60_000);
});
