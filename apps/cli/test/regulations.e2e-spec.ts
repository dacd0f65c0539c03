// `tributary regulations create|list|get|cancel` against a real server on loopback: tables and
// --json, the exit codes, and the refusals of bad input.
import { RegulationRunner } from '../../router/src/regulations/regulation-runner.service';
import { createDestination } from '../../router/test/router-e2e.kit';
import { ConfigApiClient, createWorkspaceWithTokens } from '../../../test/support/config-api.client';
import { createSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { runCliInProcess } from './cli-e2e.kit';

const KSUID = /^[0-9A-Za-z]{27}$/;

describe('tributary CLI: regulations', () => {
  let t: TributaryTestInstance;
  let env: Record<string, string>;
  let source: TestSource;

  const cli = (...args: string[]) => runCliInProcess(args, { env });

  beforeAll(async () => {
    t = await startTributary();
    const access = await createWorkspaceWithTokens(new ConfigApiClient(t), 'cli-reg');
    env = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: access.writerToken };
    source = await createSource(t, { slug: 'cli-reg', id: access.workspace.id });
    await createDestination(t, source, {
      slug: 'webhooks',
      enabled: false,
      config: { url: 'https://example.com/hook', shared_secret: 'secret' },
    });
  });
  afterAll(() => t.stop({ removeData: true }));

  it('create: for the workspace as a record, for one source as JSON; bad input exits 1 or 2', async () => {
    const created = await cli(
      'regulations',
      'create',
      'cli-reg',
      '--type',
      'SUPPRESS_ONLY',
      '-u',
      'u-1',
      '-u',
      'u-2',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^name: +workspaces\/cli-reg\/regulations\/[0-9A-Za-z]{27}$/m);
    expect(created.stdout).toMatch(/^type: +SUPPRESS_ONLY$/m);
    expect(created.stdout).toMatch(/^source: +the whole workspace$/m);

    const scoped = await cli(
      '--json',
      'regulations',
      'create',
      'cli-reg',
      '--source',
      source.sourceSlug,
      '--type',
      'Delete_Archive_Only',
      '--anonymous',
      '-u',
      'anon-1',
    );
    expect(scoped.code).toBe(0);
    expect(scoped.json()).toMatchObject({
      regulate_id: expect.stringMatching(KSUID),
      regulation_type: 'DELETE_ARCHIVE_ONLY',
      attributes: { name: 'anonymousId', values: ['anon-1'] },
      source_name: `workspaces/cli-reg/sources/${source.sourceSlug}`,
    });

    const badType = await cli('regulations', 'create', 'cli-reg', '--type', 'FORGET', '-u', 'u');
    expect(badType.code).toBe(2);
    expect(badType.stderr).toMatch(
      /^error: regulation_type: unknown regulation type .*\(HTTP 400, code 3\)\n$/,
    );
    const archiveForWorkspace = await cli(
      'regulations',
      'create',
      'cli-reg',
      '--type',
      'DELETE_ARCHIVE_ONLY',
      '-u',
      'u',
    );
    expect(archiveForWorkspace.code).toBe(2);
    const noUser = await cli('regulations', 'create', 'cli-reg', '--type', 'SUPPRESS_ONLY');
    expect(noUser.code).toBe(1);
    expect(noUser.stderr).toMatch(/required option '-u, --user <id>'/);
    const unknownWorkspace = await cli('regulations', 'create', 'nope', '--type', 'SUPPRESS_ONLY', '-u', 'u');
    expect(unknownWorkspace.code).toBe(2);
    expect(unknownWorkspace.stderr).toMatch(/HTTP 404, code 5/);
  });

  it('list: every regulation oldest first as a table or JSON, filtered by source, status and type', async () => {
    await cli('regulations', 'create', 'cli-reg', '--type', 'UNSUPPRESS', '-u', 'u-2');
    const all = await cli('--json', 'regulations', 'list', 'cli-reg');
    expect(all.code).toBe(0);
    const types = all.json().map((regulation: any) => regulation.regulation_type);
    expect(types.slice(0, 3)).toEqual(['SUPPRESS_ONLY', 'DELETE_ARCHIVE_ONLY', 'UNSUPPRESS']);

    const table = await cli(
      'regulations',
      'list',
      'cli-reg',
      '--type',
      'UNSUPPRESS',
      '--type',
      'SUPPRESS_ONLY',
    );
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +TYPE +STATUS +SOURCE +SUBJECTS +CREATED$/);
    expect(rows.map((row) => row.split(/ +/)[1])).toEqual(['SUPPRESS_ONLY', 'UNSUPPRESS']);
    expect(rows[0]).toMatch(/^[0-9A-Za-z]{27} +SUPPRESS_ONLY +finished +- +2 +\d{4}-/);

    const ofSource = await cli('--json', 'regulations', 'list', 'cli-reg', '--source', source.sourceSlug);
    expect(ofSource.json().map((regulation: any) => regulation.regulation_type)).toEqual([
      'DELETE_ARCHIVE_ONLY',
    ]);
    const finished = await cli(
      '--json',
      'regulations',
      'list',
      'cli-reg',
      '--status',
      'finished',
      '--type',
      'UNSUPPRESS',
    );
    expect(finished.json()).toHaveLength(1);

    const badStatus = await cli('regulations', 'list', 'cli-reg', '--status', 'done');
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/status: unknown status "done".*HTTP 400, code 3/);
  });

  it("get: a regulation with each destination's status, once the router has finished it", async () => {
    const created = await cli(
      '--json',
      'regulations',
      'create',
      'cli-reg',
      '--type',
      'DELETE_ONLY',
      '-u',
      'u-del',
    );
    const id = created.json().regulate_id;
    await pollUntil(`regulation ${id} is final`, 20_000, async () => {
      const shown = await cli('--json', 'regulations', 'get', 'cli-reg', id);
      return shown.json().finished_at ? shown : undefined;
    });
    const shown = await cli('regulations', 'get', 'cli-reg', `workspaces/cli-reg/regulations/${id}`);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^status: +finished$/m);
    expect(shown.stdout).toMatch(/^subjects: +u-del$/m);
    expect(shown.stdout).toMatch(/^SOURCE +DESTINATION +STATUS +ERROR$/m);
    expect(shown.stdout).toMatch(new RegExp(`^${source.sourceSlug} +webhooks +not_supported +\\S`, 'm'));

    const notAnId = await cli('regulations', 'get', 'cli-reg', 'nope');
    expect(notAnId.code).toBe(1);
    expect(notAnId.stderr).toBe('error: not a regulation id: nope\n');
    const unknown = await cli('regulations', 'get', 'cli-reg', '1qJkfE1tpwvQcklImGksLN629wn');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/HTTP 404, code 5/);
  });

  it('cancel: a regulation no work began on; one that is final exits 2', async () => {
    // Without the router's runner a deletion stays initialized.
    await t.app.get(RegulationRunner).beforeApplicationShutdown();
    const id = (
      await cli('--json', 'regulations', 'create', 'cli-reg', '--type', 'DELETE_ONLY', '-u', 'u-x')
    ).json().regulate_id;
    const cancelled = await cli('regulations', 'cancel', 'cli-reg', id);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toBe(`Cancelled workspaces/cli-reg/regulations/${id}\n`);
    expect((await cli('regulations', 'get', 'cli-reg', id)).code).toBe(2);
    const again = await cli('--json', 'regulations', 'cancel', 'cli-reg', id);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/HTTP 404, code 5/);

    const suppression = (
      await cli('--json', 'regulations', 'create', 'cli-reg', '--type', 'SUPPRESS_ONLY', '-u', 'u-y')
    ).json().regulate_id;
    const refused = await cli('regulations', 'cancel', 'cli-reg', suppression);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/only an initialized regulation can be cancelled.*HTTP 400, code 9/);
  });
});
