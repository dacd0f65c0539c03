// OAuth applications and the workspace's oauth_required switch through the Config API over loopback
// HTTP: create, list, get, update keys with a mask, delete, permissions and the audit trail. Key
// changes are checked where they matter too: at the tracking API's POST /token.
import { generateKeyPairSync } from 'node:crypto';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  type WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { postToken, rsaKeyPair, signAssertion, tokenForm } from '../../tracking-api/test/oauth-e2e.kit';

const RFC3339_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('Config API: OAuth applications', () => {
  let t: TributaryTestInstance;
  let access: WorkspaceAccess;
  let slugCounter = 0;
  const firstKey = rsaKeyPair('first');
  const secondKey = rsaKeyPair('second');

  const api = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    token = access.writerToken,
  ) => new ConfigApiClient(t, token).request(method, path, { json: body });
  const applicationsPath = () => `workspaces/${access.slug}/oauth-applications`;

  async function create(overrides: Record<string, unknown> = {}) {
    return api('POST', applicationsPath(), {
      oauth_application: {
        display_name: 'Backend jobs',
        public_keys: [{ key_id: firstKey.keyId, pem: firstKey.publicPem }],
        token_lifetime_seconds: 3600,
        ...overrides,
      },
    });
  }

  /** What /token answers for an assertion signed with `key` for this client. */
  async function tokenStatus(clientId: string, key: typeof firstKey): Promise<number> {
    const assertion = await signAssertion({ clientId, key, aud: t.baseUrl });
    return (await postToken(t, tokenForm(assertion))).status;
  }

  beforeAll(async () => {
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    access = await createWorkspaceWithTokens(new ConfigApiClient(t), `oauth-apps-${process.pid}`);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('creates an application and answers its name, client id, key ids (no PEM), lifetime and create time', async () => {
    const response = await create();
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      name: expect.stringMatching(
        new RegExp(`^workspaces/${access.slug}/oauth-applications/oa_[A-Za-z0-9]+$`),
      ),
      client_id: expect.any(String),
      display_name: 'Backend jobs',
      public_keys: [{ key_id: 'first' }],
      token_lifetime_seconds: 3600,
      create_time: expect.stringMatching(RFC3339_UTC_MILLIS),
    });
    expect(response.body.client_id.length).toBeGreaterThan(10);
    expect(JSON.stringify(response.body)).not.toContain('BEGIN PUBLIC KEY');
    expect(Math.abs(Date.parse(response.body.create_time) - Date.now())).toBeLessThan(10_000);
    // The client id works at /token right away.
    expect(await tokenStatus(response.body.client_id, firstKey)).toBe(200);
  });

  it('gives every application its own id and client id, and a lifetime of 3600 s by default', async () => {
    const first = await create({ token_lifetime_seconds: undefined });
    const second = await create();
    expect(first.body.token_lifetime_seconds).toBe(3600);
    expect(first.body.name).not.toBe(second.body.name);
    expect(first.body.client_id).not.toBe(second.body.client_id);
  });

  it('gets and lists applications, each workspace only its own', async () => {
    const created = (await create({ display_name: 'Listed' })).body;
    const applicationId = created.name.split('/').pop();

    const got = await api('GET', `${applicationsPath()}/${applicationId}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    const listed = await api('GET', applicationsPath());
    expect(listed.status).toBe(200);
    expect(listed.body.oauth_applications).toContainEqual(created);
    const createTimes = listed.body.oauth_applications.map(
      (application: { create_time: string }) => application.create_time,
    );
    expect(createTimes).toEqual([...createTimes].sort());

    const other = await createWorkspaceWithTokens(
      new ConfigApiClient(t),
      `oauth-apps-other-${process.pid}-${++slugCounter}`,
    );
    const otherList = await new ConfigApiClient(t, other.writerToken).request(
      'GET',
      `workspaces/${other.slug}/oauth-applications`,
    );
    expect(otherList.status).toBe(200);
    expect(otherList.body.oauth_applications).toEqual([]);
    // Nor can it be read through the other workspace's path.
    const crossed = await new ConfigApiClient(t, other.writerToken).request(
      'GET',
      `workspaces/${other.slug}/oauth-applications/${applicationId}`,
    );
    expect({ status: crossed.status, code: crossed.body.code }).toEqual({ status: 404, code: 5 });
  });

  it('adds a key with the update mask, naming the existing one by key_id alone; /token then accepts both', async () => {
    const created = (await create()).body;
    const applicationId = created.name.split('/').pop();
    expect(await tokenStatus(created.client_id, secondKey)).toBe(401);

    const updated = await api('PATCH', `${applicationsPath()}/${applicationId}`, {
      oauth_application: {
        public_keys: [{ key_id: 'first' }, { key_id: 'second', pem: secondKey.publicPem }],
      },
      update_mask: { paths: ['oauth_application.public_keys'] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created, public_keys: [{ key_id: 'first' }, { key_id: 'second' }] });
    expect(await tokenStatus(created.client_id, firstKey)).toBe(200);
    expect(await tokenStatus(created.client_id, secondKey)).toBe(200);
  });

  it('removes a key with the update mask; /token then refuses assertions signed with it', async () => {
    const created = (
      await create({
        public_keys: [
          { key_id: 'first', pem: firstKey.publicPem },
          { key_id: 'second', pem: secondKey.publicPem },
        ],
      })
    ).body;
    const applicationId = created.name.split('/').pop();
    expect(await tokenStatus(created.client_id, firstKey)).toBe(200);

    const updated = await api('PATCH', `${applicationsPath()}/${applicationId}`, {
      oauth_application: { public_keys: [{ key_id: 'second' }] },
      update_mask: { paths: ['oauth_application.public_keys'] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.public_keys).toEqual([{ key_id: 'second' }]);
    expect(await tokenStatus(created.client_id, firstKey)).toBe(401);
    expect(await tokenStatus(created.client_id, secondKey)).toBe(200);
  });

  it('changes only the masked fields: display name and token lifetime, which /token then answers as expires_in', async () => {
    const created = (await create()).body;
    const applicationId = created.name.split('/').pop();
    const renamed = await api('PATCH', `${applicationsPath()}/${applicationId}`, {
      oauth_application: { display_name: 'Renamed', token_lifetime_seconds: 86_400, public_keys: [] },
      update_mask: { paths: ['oauth_application.display_name'] },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...created, display_name: 'Renamed' });

    const relived = await api('PATCH', `${applicationsPath()}/${applicationId}`, {
      oauth_application: { token_lifetime_seconds: 86_400 },
      update_mask: { paths: ['oauth_application.token_lifetime_seconds'] },
    });
    expect(relived.body.token_lifetime_seconds).toBe(86_400);
    const assertion = await signAssertion({ clientId: created.client_id, key: firstKey, aud: t.baseUrl });
    expect((await postToken(t, tokenForm(assertion))).body.expires_in).toBe(86_400);
  });

  it('refuses a key named by key_id alone that is not registered yet: 400 code 3', async () => {
    const created = (await create()).body;
    const response = await api('PATCH', `${applicationsPath()}/${created.name.split('/').pop()}`, {
      oauth_application: { public_keys: [{ key_id: 'first' }, { key_id: 'brand-new' }] },
      update_mask: { paths: ['oauth_application.public_keys'] },
    });
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 400, code: 3 });
    expect(response.body.error).toMatch(/brand-new/);
    const unchanged = await api('GET', `${applicationsPath()}/${created.name.split('/').pop()}`);
    expect(unchanged.body.public_keys).toEqual([{ key_id: 'first' }]);
  });

  it.each<[string, () => unknown]>([
    [
      'garbage inside the PEM armour',
      () => '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n',
    ],
    ['no PEM at all', () => 'ssh-rsa AAAAB3NzaC1yc2E'],
    ['a private key', () => firstKey.privatePem],
    ['a certificate-less empty string', () => ''],
    [
      'an EC public key, useless for RS256',
      () =>
        generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .publicKey.export({ type: 'spki', format: 'pem' })
          .toString(),
    ],
    [
      'an RSA key of 1024 bits, shorter than RS256 verification accepts',
      () =>
        generateKeyPairSync('rsa', { modulusLength: 1024 })
          .publicKey.export({ type: 'spki', format: 'pem' })
          .toString(),
    ],
  ])('refuses %s as a PEM: 400 code 3, nothing created', async (_label, pem) => {
    const before = (await api('GET', applicationsPath())).body.oauth_applications.length;
    const response = await create({ public_keys: [{ key_id: 'bad', pem: pem() }] });
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 400, code: 3 });
    expect(response.body.error.length).toBeGreaterThan(0);
    expect((await api('GET', applicationsPath())).body.oauth_applications.length).toBe(before);
  });

  it('refuses a bad PEM in an update: 400 code 3', async () => {
    const created = (await create()).body;
    const response = await api('PATCH', `${applicationsPath()}/${created.name.split('/').pop()}`, {
      oauth_application: {
        public_keys: [
          { key_id: 'first' },
          { key_id: 'bad', pem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
        ],
      },
      update_mask: { paths: ['oauth_application.public_keys'] },
    });
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 400, code: 3 });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an empty display name', { display_name: '' }],
    ['a blank display name', { display_name: '   ' }],
    ['no public keys', { public_keys: [] }],
    ['a key without key_id', { public_keys: [{ pem: firstKey.publicPem }] }],
    ['a new key without pem', { public_keys: [{ key_id: 'first' }] }],
    [
      'the same key_id twice',
      {
        public_keys: [
          { key_id: 'k', pem: firstKey.publicPem },
          { key_id: 'k', pem: secondKey.publicPem },
        ],
      },
    ],
    ['a token lifetime under a minute', { token_lifetime_seconds: 30 }],
    ['a token lifetime over 30 days', { token_lifetime_seconds: 30 * 86_400 + 1 }],
    ['a fractional token lifetime', { token_lifetime_seconds: 3600.5 }],
  ])('refuses to create with %s: 400 code 3', async (_label, overrides) => {
    const response = await create(overrides);
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 400, code: 3 });
  });

  it('deletes an application: gone from get and list, a second delete is 404, its client gets no more tokens', async () => {
    const created = (await create()).body;
    const path = `${applicationsPath()}/${created.name.split('/').pop()}`;
    const deleted = await api('DELETE', path);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    const got = await api('GET', path);
    expect({ status: got.status, code: got.body.code }).toEqual({ status: 404, code: 5 });
    expect((await api('GET', applicationsPath())).body.oauth_applications).not.toContainEqual(created);
    const again = await api('DELETE', path);
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 404, code: 5 });
    const patched = await api('PATCH', path, {
      oauth_application: { display_name: 'x' },
      update_mask: { paths: ['oauth_application.display_name'] },
    });
    expect({ status: patched.status, code: patched.body.code }).toEqual({ status: 404, code: 5 });
    expect(await tokenStatus(created.client_id, firstKey)).toBe(401);
  });

  it('answers 404 code 5 for an unknown application or workspace', async () => {
    const unknownApplication = await api('GET', `${applicationsPath()}/oa_unknown`);
    expect({ status: unknownApplication.status, code: unknownApplication.body.code }).toEqual({
      status: 404,
      code: 5,
    });
    const unknownWorkspace = await new ConfigApiClient(t).request(
      'POST',
      'workspaces/no-such-workspace/oauth-applications',
      {
        json: {
          oauth_application: {
            display_name: 'x',
            public_keys: [{ key_id: 'first', pem: firstKey.publicPem }],
          },
        },
      },
    );
    expect({ status: unknownWorkspace.status, code: unknownWorkspace.body.code }).toEqual({
      status: 404,
      code: 5,
    });
  });

  it('lets a read-only token list and get, but not create, update or delete: 403 code 7', async () => {
    const created = (await create()).body;
    const path = `${applicationsPath()}/${created.name.split('/').pop()}`;
    const readOnly = access.readerToken;

    expect((await api('GET', applicationsPath(), undefined, readOnly)).status).toBe(200);
    expect((await api('GET', path, undefined, readOnly)).body).toEqual(created);

    const before = (await api('GET', applicationsPath())).body.oauth_applications.length;
    const attempts = [
      await api(
        'POST',
        applicationsPath(),
        {
          oauth_application: {
            display_name: 'Sneaky',
            public_keys: [{ key_id: 'k', pem: firstKey.publicPem }],
          },
        },
        readOnly,
      ),
      await api(
        'PATCH',
        path,
        {
          oauth_application: { public_keys: [{ key_id: 'k', pem: secondKey.publicPem }] },
          update_mask: { paths: ['oauth_application.public_keys'] },
        },
        readOnly,
      ),
      await api('DELETE', path, undefined, readOnly),
      await api(
        'PATCH',
        `workspaces/${access.slug}`,
        { workspace: { oauth_required: true }, update_mask: { paths: ['workspace.oauth_required'] } },
        readOnly,
      ),
    ];
    for (const attempt of attempts)
      expect({ status: attempt.status, code: attempt.body.code }).toEqual({ status: 403, code: 7 });
    expect((await api('GET', applicationsPath())).body.oauth_applications.length).toBe(before);
    expect((await api('GET', path)).body).toEqual(created);
    expect((await api('GET', `workspaces/${access.slug}`)).body.oauth_required).toBe(false);
  });

  it("hides another workspace's applications from a token of this one: 404 code 5", async () => {
    const other = await createWorkspaceWithTokens(
      new ConfigApiClient(t),
      `oauth-apps-hidden-${process.pid}-${++slugCounter}`,
    );
    const response = await new ConfigApiClient(t, access.writerToken).request(
      'POST',
      `workspaces/${other.slug}/oauth-applications`,
      {
        json: {
          oauth_application: {
            display_name: 'x',
            public_keys: [{ key_id: 'first', pem: firstKey.publicPem }],
          },
        },
      },
    );
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 404, code: 5 });
  });

  it('switches oauth_required on and off with the update mask, leaving the other fields alone', async () => {
    const workspacePath = `workspaces/${access.slug}`;
    const before = (await api('GET', workspacePath)).body;
    expect(before.oauth_required).toBe(false);

    const on = await api('PATCH', workspacePath, {
      workspace: { oauth_required: true, display_name: 'ignored, not in the mask' },
      update_mask: { paths: ['workspace.oauth_required'] },
    });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ ...before, oauth_required: true });
    expect((await api('GET', workspacePath)).body.oauth_required).toBe(true);

    const off = await api('PATCH', workspacePath, {
      workspace: { oauth_required: false },
      update_mask: { paths: ['workspace.oauth_required'] },
    });
    expect(off.status).toBe(200);
    expect(off.body).toEqual(before);
  });

  it('records every change in the audit trail: create, update, delete and the oauth_required switch', async () => {
    const created = (await create({ display_name: 'Audited' })).body;
    const applicationId = created.name.split('/').pop();
    const applicationPath = `${applicationsPath()}/${applicationId}`;
    await api('PATCH', applicationPath, {
      oauth_application: {
        public_keys: [{ key_id: 'first' }, { key_id: 'second', pem: secondKey.publicPem }],
      },
      update_mask: { paths: ['oauth_application.public_keys'] },
    });
    await api('DELETE', applicationPath);
    await api('PATCH', `workspaces/${access.slug}`, {
      workspace: { oauth_required: true },
      update_mask: { paths: ['workspace.oauth_required'] },
    });
    await api('PATCH', `workspaces/${access.slug}`, {
      workspace: { oauth_required: false },
      update_mask: { paths: ['workspace.oauth_required'] },
    });

    const forApplication = await api(
      'GET',
      `workspaces/${access.slug}/audit-events?resource_name_prefix=${encodeURIComponent(created.name)}`,
    );
    expect(forApplication.status).toBe(200);
    const entries = forApplication.body.audit_events;
    expect(entries.map((entry: { type: string }) => entry.type)).toEqual([
      'OAuthApplicationDeleted',
      'OAuthApplicationUpdated',
      'OAuthApplicationCreated',
    ]);
    for (const entry of entries) {
      expect(entry.resource_name).toBe(created.name);
      expect(entry.actor).toMatch(/^access-tokens\/\d+$/);
      expect(entry.request_id).toEqual(expect.any(String));
    }
    expect(entries[2].data).toMatchObject({ clientId: created.client_id, displayName: 'Audited' });
    expect(entries[1].data.changes.publicKeys.map((key: { keyId: string }) => key.keyId)).toEqual([
      'first',
      'second',
    ]);

    const forWorkspace = await api(
      'GET',
      `workspaces/${access.slug}/audit-events?resource_name_prefix=${encodeURIComponent(`workspaces/${access.slug}`)}`,
    );
    const switches = forWorkspace.body.audit_events.filter(
      (entry: { type: string; data: { changes?: { oauthRequired?: boolean } } }) =>
        entry.type === 'WorkspaceUpdated' && entry.data.changes?.oauthRequired !== undefined,
    );
    expect(
      switches
        .slice(0, 2)
        .map((entry: { data: { changes: { oauthRequired: boolean } } }) => entry.data.changes.oauthRequired),
    ).toEqual([false, true]);
    expect(switches[0].resource_name).toBe(`workspaces/${access.slug}`);
  });
});
