// Privacy regulations through the Config API v1beta over loopback HTTP (docs/regulations.md): create,
// read, list, cancel, suppressed users, the audit trail, every refusal of bad input, and suppression
// where it matters: at the tracking API of the same instance.
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
  type WorkspaceAccess,
} from '../../../test/support/config-api.client';
import {
  createSource,
  pollUntil,
  postJson,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createDestination } from '../../router/test/router-e2e.kit';
import { KSUID, RFC3339_MILLIS } from './support/config-api-e2e.kit';

describe('Config API: regulations', () => {
  let t: TributaryTestInstance;
  let access: WorkspaceAccess;
  let other: WorkspaceAccess;
  let app: TestSource;
  let web: TestSource;
  const ws = `regulations-${process.pid}`;

  const regulations = (path = '') => `workspaces/${ws}/regulations${path}`;
  const sourceRegulations = (source: TestSource) =>
    `workspaces/${ws}/sources/${source.sourceSlug}/regulations`;
  const create = (regulationType: string, values: unknown[], path = regulations(), name = 'userId') =>
    access.writer.post(path, { regulation_type: regulationType, attributes: { name, values } });

  /** Sends one batch to the source and answers the user ids the log then holds for the batch's messages. */
  async function storedUsersAfterBatch(source: TestSource, userIds: string[]): Promise<string[]> {
    const batch = userIds.map((userId) => ({
      type: 'track',
      event: 'Order Completed',
      userId,
      messageId: `${userId}-${Math.random().toString(36).slice(2)}`,
    }));
    const response = await postJson(t, '/v1/batch', { batch }, source.writeKey);
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { success: true },
    });
    const stored = await readSourceMessages(t, source);
    return batch.filter((message) => stored.has(message.messageId)).map((message) => message.userId);
  }

  async function suppressedTotal(): Promise<number> {
    const text = await (await fetch(t.metricsUrl)).text();
    const line = text
      .split('\n')
      .find((candidate) => candidate.startsWith(`tributary_suppressed_messages_total{workspace="${ws}"}`));
    const alias = text
      .split('\n')
      .find((candidate) => candidate.startsWith(`tributary_messages_suppressed_total{workspace="${ws}"}`));
    expect(alias?.split(' ')[1]).toBe(line?.split(' ')[1]);
    return line ? Number(line.split(' ')[1]) : 0;
  }

  beforeAll(async () => {
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    const admin = new ConfigApiClient(t);
    access = await createWorkspaceWithTokens(admin, ws);
    other = await createWorkspaceWithTokens(admin, `${ws}-other`);
    const workspace = { slug: ws, id: access.workspace.id };
    app = await createSource(t, workspace);
    web = await createSource(t, workspace);
    await createDestination(t, app, {
      slug: 'webhooks',
      enabled: false,
      config: { url: 'https://example.com/hook', shared_secret: 'secret' },
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  /** Polls a regulation until it is final (the router runs deletions) and answers it. */
  async function untilFinal(regulateId: string): Promise<any> {
    const { value } = await pollUntil(`regulation ${regulateId} is final`, 20_000, async () => {
      const body = expectJsonSuccess(await access.reader.get(regulations(`/${regulateId}`)));
      return body.finished_at ? body : undefined;
    });
    return value;
  }

  it('records a deletion and answers the whole regulation; reads and lists it; the router finishes it', async () => {
    const body = expectJsonSuccess(await create('Suppress_With_Delete', ['u-del', 'u-del-2', 'u-del']));
    expect(body).toEqual({
      name: `workspaces/${ws}/regulations/${body.regulate_id}`,
      regulate_id: expect.stringMatching(KSUID),
      workspace_id: access.workspace.id,
      regulation_type: 'SUPPRESS_WITH_DELETE',
      attributes: { name: 'userId', values: ['u-del', 'u-del-2'] },
      source_name: '',
      status: 'initialized',
      overall_status: 'initialized',
      created_at: expect.stringMatching(RFC3339_MILLIS),
      stream_status: [],
    });
    expect(body).not.toHaveProperty('finished_at');
    expect(expectJsonSuccess(await access.reader.get(regulations(`/${body.regulate_id}`)))).toMatchObject({
      regulate_id: body.regulate_id,
      regulation_type: 'SUPPRESS_WITH_DELETE',
    });
    const listed = expectJsonSuccess(await access.reader.get(regulations()));
    expect(listed.regulations.map((entry: any) => entry.regulate_id)).toContain(body.regulate_id);
    expect(listed.next_page_token).toBe('');

    const final = await untilFinal(body.regulate_id);
    expect(final).toMatchObject({
      status: 'finished',
      overall_status: 'finished',
      finished_at: expect.stringMatching(RFC3339_MILLIS),
      stream_status: [
        {
          id: app.sourceId,
          destination_status: [
            {
              status: 'not_supported',
              err_string: expect.any(String),
              finished_at: expect.stringMatching(RFC3339_MILLIS),
            },
          ],
        },
        { id: web.sourceId, destination_status: [] },
      ],
    });
    // Work began: it can no longer be cancelled.
    expectConfigApiError(await access.writer.delete(regulations(`/${body.regulate_id}`)), 400, 9);
    expect(await storedUsersAfterBatch(app, ['u-del', 'u-other'])).toEqual(['u-other']);
    // Its suppression stays until lifted.
    expectJsonSuccess(await create('Unsuppress', ['u-del', 'u-del-2']));
    expect(await storedUsersAfterBatch(app, ['u-del'])).toEqual(['u-del']);
  });

  it('suppresses a user on every source at once: the batch is answered 200, only the others are stored, the drop counted', async () => {
    const before = await suppressedTotal();
    const body = expectJsonSuccess(await create('Suppress', ['u-sup']));
    expect(body).toMatchObject({
      regulation_type: 'SUPPRESS_ONLY',
      status: 'finished',
      overall_status: 'finished',
      finished_at: expect.stringMatching(RFC3339_MILLIS),
      stream_status: [
        {
          id: app.sourceId,
          name: `workspaces/${ws}/sources/${app.sourceSlug}`,
          destination_status: [
            {
              id: `workspaces/${ws}/sources/${app.sourceSlug}/destinations/webhooks`,
              name: expect.any(String),
              status: 'not_supported',
              err_string: expect.any(String),
              finished_at: expect.stringMatching(RFC3339_MILLIS),
            },
          ],
        },
        { id: web.sourceId, name: `workspaces/${ws}/sources/${web.sourceSlug}`, destination_status: [] },
      ],
    });

    expect(await storedUsersAfterBatch(app, ['u-sup', 'u-keep', 'u-sup'])).toEqual(['u-keep']);
    expect(await storedUsersAfterBatch(web, ['u-sup'])).toEqual([]);
    expect(await suppressedTotal()).toBe(before + 3);
    // Only `userId` is matched: a message with only an anonymousId passes.
    const anonymous = await postJson(
      t,
      '/v1/track',
      { event: 'Viewed', anonymousId: 'u-sup', messageId: `anon-${process.pid}` },
      app.writeKey,
    );
    expect(anonymous.status).toBe(200);
    expect((await readSourceMessages(t, app)).has(`anon-${process.pid}`)).toBe(true);

    expect(expectJsonSuccess(await access.reader.get(`workspaces/${ws}/suppressed-users`))).toEqual({
      suppressed_users: [{ subject_type: 'USER_ID', subject_id: 'u-sup', source_name: '' }],
      next_page_token: '',
    });

    // A finished regulation cannot be cancelled.
    expectConfigApiError(await access.writer.delete(regulations(`/${body.regulate_id}`)), 400, 9);

    // Unsuppress lifts it.
    expect(expectJsonSuccess(await create('Unsuppress', ['u-sup'])).status).toBe('finished');
    expect(await storedUsersAfterBatch(web, ['u-sup'])).toEqual(['u-sup']);
    expect(
      expectJsonSuccess(await access.reader.get(`workspaces/${ws}/suppressed-users`)).suppressed_users,
    ).toEqual([]);
  });

  it('scopes a regulation to one source: only that source drops the user; the source lists its own', async () => {
    const body = expectJsonSuccess(await create('SUPPRESS_ONLY', ['u-src'], sourceRegulations(app)));
    expect(body).toMatchObject({
      source_name: `workspaces/${ws}/sources/${app.sourceSlug}`,
      status: 'finished',
      stream_status: [{ id: app.sourceId }],
    });
    expect(await storedUsersAfterBatch(app, ['u-src'])).toEqual([]);
    expect(await storedUsersAfterBatch(web, ['u-src'])).toEqual(['u-src']);

    const ofSource = expectJsonSuccess(await access.reader.get(sourceRegulations(app)));
    expect(ofSource.regulations.map((entry: any) => entry.regulate_id)).toEqual([body.regulate_id]);
    expect(expectJsonSuccess(await access.reader.get(sourceRegulations(web))).regulations).toEqual([]);
    expect(
      expectJsonSuccess(await access.reader.get(`workspaces/${ws}/suppressed-users`)).suppressed_users,
    ).toEqual([
      {
        subject_type: 'USER_ID',
        subject_id: 'u-src',
        source_name: `workspaces/${ws}/sources/${app.sourceSlug}`,
      },
    ]);

    // A source cannot lift a workspace-wide suppression (FAILED_PRECONDITION); the workspace can.
    expectJsonSuccess(await create('Suppress_Only', ['u-wide']));
    expectConfigApiError(await create('Unsuppress', ['u-wide'], sourceRegulations(app)), 400, 9);
    expect(await storedUsersAfterBatch(app, ['u-wide'])).toEqual([]);
    expectJsonSuccess(await create('Unsuppress', ['u-src'], sourceRegulations(app)));
    expect(await storedUsersAfterBatch(app, ['u-src'])).toEqual(['u-src']);
  });

  it('filters lists by status and type (repeated keys or commas), oldest first, page by page', async () => {
    const deletion = expectJsonSuccess(await create('Delete_Internal', ['u-list']));
    await untilFinal(deletion.regulate_id);
    const all = expectJsonSuccess(await access.reader.get(regulations())).regulations;
    const created = all.map((entry: any) => entry.created_at);
    expect([...created].sort()).toEqual(created);

    expect(
      expectJsonSuccess(await access.reader.get(regulations('?status=INITIALIZED'))).regulations,
    ).toEqual([]);
    const finished = expectJsonSuccess(await access.reader.get(regulations('?status=finished'))).regulations;
    expect(finished.map((entry: any) => entry.regulate_id)).toContain(deletion.regulate_id);
    expect(finished).toHaveLength(all.length);
    const byType = expectJsonSuccess(
      await access.reader.get(regulations('?regulation_types=unsuppress&regulation_types=Delete_Internal')),
    );
    const byTypeCommas = expectJsonSuccess(
      await access.reader.get(regulations('?regulation_types=UNSUPPRESS,DELETE_INTERNAL')),
    );
    expect(byTypeCommas).toEqual(byType);
    expect(new Set(byType.regulations.map((entry: any) => entry.regulation_type))).toEqual(
      new Set(['UNSUPPRESS', 'DELETE_INTERNAL']),
    );
    const firstPage = expectJsonSuccess(await access.reader.get(regulations('?page_size=1')));
    expect(firstPage.regulations).toHaveLength(1);
    const secondPage = expectJsonSuccess(
      await access.reader.get(regulations(`?page_size=1&page_token=${firstPage.next_page_token}`)),
    );
    expect(secondPage.regulations[0].regulate_id).toBe(all[1].regulate_id);

    expectConfigApiError(await access.reader.get(regulations('?status=done')), 400, 3);
    expectConfigApiError(await access.reader.get(regulations('?regulation_types=FORGET')), 400, 3);
    // The singular spelling of older docs is the same collection.
    expect(expectJsonSuccess(await access.reader.get(`workspaces/${ws}/regulation`))).toEqual(
      expectJsonSuccess(await access.reader.get(regulations())),
    );
  });

  it('accepts 5,000 ids of 1,024 characters in one create', async () => {
    const values = Array.from({ length: 5000 }, (_, index) => `${index}-`.padEnd(1024, 'x'));
    const body = expectJsonSuccess(await create('Delete_Only', values));
    expect(body.attributes.values).toHaveLength(5000);
  }, 30_000);

  describe('refusals (docs/regulations.md §2): a refused create stores nothing', () => {
    let countBefore: number;

    beforeAll(async () => {
      countBefore = expectJsonSuccess(await access.reader.get(regulations('?page_size=1000'))).regulations
        .length;
    });

    afterAll(async () => {
      const after = expectJsonSuccess(await access.reader.get(regulations('?page_size=1000'))).regulations;
      expect(after).toHaveLength(countBefore);
    });

    it.each<[string, Record<string, unknown>, string, RegExp]>([
      [
        'an unknown type',
        { regulation_type: 'Forget', attributes: { name: 'userId', values: ['u'] } },
        'regulations',
        /^regulation_type: unknown regulation type "Forget"/,
      ],
      [
        'a type that is not a string',
        { regulation_type: 3, attributes: { name: 'userId', values: ['u'] } },
        'regulations',
        /^regulation_type/,
      ],
      ['no attributes', { regulation_type: 'Suppress' }, 'regulations', /^attributes/],
      [
        'an unknown subject type',
        { regulation_type: 'Suppress', attributes: { name: 'email', values: ['u'] } },
        'regulations',
        /^attributes\.name: unknown subject type "email"/,
      ],
      [
        'OBJECT_ID',
        { regulation_type: 'Suppress', attributes: { name: 'OBJECT_ID', values: ['u'] } },
        'regulations',
        /^attributes\.name: OBJECT_ID/,
      ],
      [
        'an anonymousId without DELETE_ARCHIVE_ONLY',
        { regulation_type: 'Delete', attributes: { name: 'anonymousId', values: ['a'] } },
        'regulations',
        /^attributes\.name: ANONYMOUS_ID is accepted only/,
      ],
      [
        'DELETE_ARCHIVE_ONLY at workspace scope',
        { regulation_type: 'Delete_Archive_Only', attributes: { name: 'userId', values: ['u'] } },
        'regulations',
        /^regulation_type: DELETE_ARCHIVE_ONLY applies to one source/,
      ],
      [
        'no subject ids',
        { regulation_type: 'Suppress', attributes: { name: 'userId', values: [] } },
        'regulations',
        /^attributes\.values: at least one/,
      ],
      [
        'an id that is not a string',
        { regulation_type: 'Suppress', attributes: { name: 'userId', values: ['u', 5] } },
        'regulations',
        /^attributes\.values: subject id \[1\] is not a string/,
      ],
      [
        'an empty id',
        { regulation_type: 'Suppress', attributes: { name: 'userId', values: [''] } },
        'regulations',
        /^attributes\.values: subject id \[0\] must be 1 to 1024/,
      ],
      [
        'an id too long',
        { regulation_type: 'Suppress', attributes: { name: 'userId', values: ['x'.repeat(1025)] } },
        'regulations',
        /^attributes\.values/,
      ],
      [
        'more than 5,000 ids',
        {
          regulation_type: 'Suppress',
          attributes: { name: 'userId', values: Array.from({ length: 5001 }, (_, i) => `u${i}`) },
        },
        'regulations',
        /^attributes\.values: 5001 subject ids/,
      ],
    ])('400, code 3, naming the field, for %s', async (_case, body, path, message) => {
      const response = await access.writer.post(`workspaces/${ws}/${path}`, body);
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(message);
    });

    it('400, code 3, for a body that is not JSON or over 6 MiB', async () => {
      const notJson = await access.writer.request('POST', regulations(), {
        rawBody: '{"regulation_type":',
        headers: { 'content-type': 'application/json' },
      });
      expectConfigApiError(notJson, 400, 3);
      const values = Array.from({ length: 5000 }, () => 'é'.repeat(1024));
      const tooLarge = await create('Suppress', values);
      expectConfigApiError(tooLarge, 400, 3);
    }, 30_000);

    it('404, code 5, for another workspace’s regulation, an unknown id or source; 403 for a reader; 401 without a token', async () => {
      const mine = expectJsonSuccess(await access.reader.get(regulations())).regulations[0];
      expectConfigApiError(
        await other.writer.get(`workspaces/${other.slug}/regulations/${mine.regulate_id}`),
        404,
        5,
      );
      expectConfigApiError(
        await other.writer.delete(`workspaces/${other.slug}/regulations/${mine.regulate_id}`),
        404,
        5,
      );
      expectConfigApiError(await other.writer.get(regulations(`/${mine.regulate_id}`)), 404, 5);
      expectConfigApiError(await access.reader.get(regulations('/1qJkfE1tpwvQcklImGksLN629wn')), 404, 5);
      expectConfigApiError(
        await create('Suppress', ['u'], `workspaces/${ws}/sources/nope/regulations`),
        404,
        5,
      );
      expectConfigApiError(
        await access.reader.post(regulations(), {
          regulation_type: 'Suppress',
          attributes: { name: 'userId', values: ['u'] },
        }),
        403,
        7,
      );
      expectConfigApiError(await access.reader.delete(regulations(`/${mine.regulate_id}`)), 403, 7);
      expectConfigApiError(await access.writer.get(regulations(), { token: null }), 401, 16);
    });
  });

  it('records who asked for what in the audit trail, and nothing of the messages', async () => {
    const body = expectJsonSuccess(await create('Suppress', ['u-audit'], sourceRegulations(web)));
    const trail = expectJsonSuccess(
      await access.reader.get(
        `workspaces/${ws}/audit-events?resource_name_prefix=${encodeURIComponent(body.name)}`,
      ),
    ).audit_events;
    const expected = {
      regulation_type: 'SUPPRESS_ONLY',
      subject_type: 'USER_ID',
      subject_ids: ['u-audit'],
      source_name: `workspaces/${ws}/sources/${web.sourceSlug}`,
    };
    expect(trail).toEqual([
      expect.objectContaining({ type: 'RegulationFinished', resource_name: body.name }),
      expect.objectContaining({ type: 'RegulationStarted', resource_name: body.name }),
      expect.objectContaining({
        type: 'RegulationCreated',
        resource_name: body.name,
        actor: expect.stringMatching(/^access-tokens\//),
        request_id: expect.any(String),
        data: expected,
      }),
    ]);
  });
});
