// Webhook secrets (URL credentials, header values) and the egress policy, end to end in the all-in-one
// server: what the Config API stores, shows and refuses, and what the router sends or discards.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { MASKED_SECRET } from '@tributary/contracts';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { eventStoreOf, readAllEvents } from '../../config-api/test/support/config-api-e2e.kit';
import {
  auditEvents,
  createDestination,
  destinationName,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  waitForSettled,
} from '../../router/test/router-e2e.kit';
import { createWorkspaceAndSource, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';

const URL_PASSWORD = 'url-pa55word-do-not-leak';
const URL_USER = 'hook-user';
const BEARER_TOKEN = 'Bearer tok_header-secret-do-not-leak';
const API_KEY = 'api-key-value-do-not-leak';
const INTERNAL_ERROR_BODY = 'internal-service-detail-do-not-show';

/** A loopback receiver that records headers; `/reject` answers 404 with a body only the operator may see. */
class HeaderRecordingReceiver {
  readonly requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  private readonly server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      this.requests.push({ path: request.url ?? '/', headers: request.headers });
      if (request.url === '/reject') response.writeHead(404).end(INTERNAL_ERROR_BODY);
      else response.writeHead(200).end('{"ok":true}');
    });
  });
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function configByKey(destination: { config: { name: string; value: unknown }[] }): Record<string, unknown> {
  return Object.fromEntries(destination.config.map((entry) => [entry.name.split('/').pop()!, entry.value]));
}

/** Every byte under the data directory (the SQLite event store and log): no secret may be in them. */
function dataDirectoryBytes(directory: string): Buffer {
  const chunks: Buffer[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) chunks.push(readFileSync(join(entry.parentPath, entry.name)));
  }
  return Buffer.concat(chunks);
}

describe('webhook secrets under the default egress policy (open)', () => {
  let instance: TributaryTestInstance;
  let source: TestSource;
  const receiver = new HeaderRecordingReceiver();

  beforeAll(async () => {
    await receiver.start();
    instance = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(instance);
  });
  afterAll(async () => {
    await instance?.stop({ removeData: true });
    await receiver.stop();
  });

  it('encrypts URL credentials and header values, masks them in responses and the audit trail, and sends them', async () => {
    const urlWithCredentials = `http://${URL_USER}:${URL_PASSWORD}@127.0.0.1:${receiver.port}/basic`;
    const created = await createDestination(instance, source, {
      slug: 'webhooks',
      enabled: true,
      config: { url: urlWithCredentials },
    });
    const withHeaders = await createDestination(instance, source, {
      slug: 'webhooks-headers',
      catalogSlug: 'webhooks',
      enabled: true,
      config: {
        url: `http://127.0.0.1:${receiver.port}/headers`,
        headers: { Authorization: BEARER_TOKEN, 'X-Api-Key': API_KEY, 'X-Empty': '' },
      },
    });

    // Responses: masked.
    expect(configByKey(created).url).toBe(MASKED_SECRET);
    expect(configByKey(withHeaders).headers).toEqual({
      Authorization: MASKED_SECRET,
      'X-Api-Key': MASKED_SECRET,
      'X-Empty': '',
    });
    const read = await configApi(instance, 'GET', destinationName(source, 'webhooks-headers'));
    expect(JSON.stringify(read.body)).not.toContain(API_KEY);
    const listed = await configApi(
      instance,
      'GET',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
    );
    for (const secret of [URL_PASSWORD, URL_USER, BEARER_TOKEN, API_KEY]) {
      expect(JSON.stringify(listed.body)).not.toContain(secret);
    }

    // Events: encrypted.
    const events = JSON.stringify(await readAllEvents(eventStoreOf(instance)), (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value,
    );
    for (const secret of [URL_PASSWORD, BEARER_TOKEN, 'tok_header-secret', API_KEY]) {
      expect(events).not.toContain(secret);
    }
    expect(events).toContain('enc:v1:');

    // Audit trail: masked.
    const audit = await auditEvents(instance, source, destinationName(source, 'webhooks'));
    expect(audit.length).toBeGreaterThanOrEqual(2);
    const auditText = JSON.stringify(audit);
    for (const secret of [URL_PASSWORD, BEARER_TOKEN, API_KEY]) expect(auditText).not.toContain(secret);
    expect(auditText).not.toContain('enc:v1:');
    expect(auditText).toContain(MASKED_SECRET);

    // Delivery: the router decrypts and sends them.
    await sendBatch(instance, source, [trackMessage()]);
    await waitForSettled(instance, source, 'webhooks', 1);
    await waitForSettled(instance, source, 'webhooks-headers', 1);
    const basic = receiver.requests.find((request) => request.path === '/basic');
    expect(basic?.headers['authorization']).toBe(
      `Basic ${Buffer.from(`${URL_USER}:${URL_PASSWORD}`).toString('base64')}`,
    );
    const headers = receiver.requests.find((request) => request.path === '/headers');
    expect(headers?.headers['authorization']).toBe(BEARER_TOKEN);
    expect(headers?.headers['x-api-key']).toBe(API_KEY);

    // The data directory's files (event store, log) hold no plaintext secret either.
    const bytes = dataDirectoryBytes(instance.dataDir);
    for (const secret of [URL_PASSWORD, 'tok_header-secret', API_KEY]) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
  });

  it('keeps stored secrets when a client writes the masked values back, and replaces what it changes', async () => {
    const slug = 'webhooks-headers';
    const current = (await configApi(instance, 'GET', destinationName(source, slug))).body;
    const echoed = await configApi(instance, 'PATCH', destinationName(source, slug), {
      destination: {
        config: current.config.map((entry: { name: string; value: unknown }) =>
          entry.name.endsWith('/headers')
            ? { ...entry, value: { ...(entry.value as object), 'X-Added': 'new-header-value' } }
            : entry,
        ),
      },
      update_mask: { paths: ['destination.config'] },
    });
    expect(echoed.status).toBe(200);
    expect(configByKey(echoed.body).headers).toEqual({
      Authorization: MASKED_SECRET,
      'X-Api-Key': MASKED_SECRET,
      'X-Empty': '',
      'X-Added': MASKED_SECRET,
    });
    // The URL with credentials, written back as the mask, keeps its stored value.
    const basic = (await configApi(instance, 'GET', destinationName(source, 'webhooks'))).body;
    expect(
      (
        await configApi(instance, 'PATCH', destinationName(source, 'webhooks'), {
          destination: { config: basic.config },
          update_mask: { paths: ['destination.config'] },
        })
      ).status,
    ).toBe(200);

    receiver.requests.length = 0;
    await sendBatch(instance, source, [trackMessage()]);
    await waitForSettled(instance, source, slug, 2);
    await waitForSettled(instance, source, 'webhooks', 2);
    const headers = receiver.requests.find((request) => request.path === '/headers');
    expect(headers?.headers['authorization']).toBe(BEARER_TOKEN);
    expect(headers?.headers['x-api-key']).toBe(API_KEY);
    expect(headers?.headers['x-added']).toBe('new-header-value');
    const basicRequest = receiver.requests.find((request) => request.path === '/basic');
    expect(basicRequest?.headers['authorization']).toBe(
      `Basic ${Buffer.from(`${URL_USER}:${URL_PASSWORD}`).toString('base64')}`,
    );
  });

  it.each([
    [
      '51 headers',
      { headers: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`X-${index}`, 'v'])) },
    ],
    ['a header name over 256 bytes', { headers: { ['X'.repeat(257)]: 'v' } }],
    ['a header value over 8 KiB', { headers: { 'X-Big': 'v'.repeat(8 * 1024 + 1) } }],
    ['a header name with a space', { headers: { 'X Bad': 'v' } }],
    ['a header value with CR LF', { headers: { 'X-Split': 'a\r\nInjected: yes' } }],
    ['a header value with NUL', { headers: { 'X-Nul': 'a\u0000b' } }],
  ])('refuses a webhook with %s (400, code 3), on create and on update', async (_, config) => {
    const name = destinationName(source, 'webhooks-refused');
    const create = await configApi(
      instance,
      'POST',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
      {
        destination: {
          name,
          catalog_name: 'catalog/destinations/webhooks',
          config: [
            { name: `${name}/config/url`, value: 'https://hooks.example.com/in' },
            ...Object.entries(config).map(([key, value]) => ({ name: `${name}/config/${key}`, value })),
          ],
        },
      },
    );
    expect(create.status).toBe(400);
    expect(create.body).toMatchObject({ code: 3 });
    const update = await configApi(instance, 'PATCH', destinationName(source, 'webhooks-headers'), {
      destination: {
        config: Object.entries(config).map(([key, value]) => ({ name: `${key}`, value })),
      },
      update_mask: { paths: ['destination.config'] },
    });
    expect(update.status).toBe(400);
    expect(update.body).toMatchObject({ code: 3 });
  });

  it.each([
    [
      'a client certificate file',
      'postgres://u:p@db.example.com/app?sslcert=/etc/ssl/certs/ca-certificates.crt',
    ],
    ['a private key file', 'postgres://u:p@db.example.com/app?sslkey=/etc/ssh/ssh_host_ed25519_key'],
    ['a root certificate file', 'postgres://u:p@db.example.com/app?sslrootcert=/etc/passwd'],
    ['a socket path host', 'postgres://u:p@%2Fvar%2Frun%2Fpostgresql/app'],
    ['a socket path in host=', 'postgres://u:p@db.example.com/app?host=/var/run/postgresql'],
    ['a socket: URI', 'socket:/var/run/postgresql?db=app'],
  ])('refuses a PostgreSQL connection string with %s (400, code 3)', async (_, connectionString) => {
    const name = destinationName(source, 'postgres');
    const response = await configApi(
      instance,
      'POST',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
      {
        destination: {
          name,
          config: [{ name: `${name}/config/connection_string`, value: connectionString }],
        },
      },
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 3 });
    expect(JSON.stringify(response.body)).not.toContain('u:p@');
  });

  it('keeps the body of a loopback target that refuses a message out of delivery metrics', async () => {
    await createDestination(instance, source, {
      slug: 'webhooks-internal',
      catalogSlug: 'webhooks',
      enabled: true,
      config: { url: `http://127.0.0.1:${receiver.port}/reject` },
    });
    await sendBatch(instance, source, [trackMessage()]);
    const metrics = await waitForSettled(instance, source, 'webhooks-internal', 1);
    expect(metrics.counts.discarded).toBe(1);
    expect(metrics.recent_discards[0]?.reason).toBe('HTTP 404');
    expect(JSON.stringify(metrics)).not.toContain(INTERNAL_ERROR_BODY);
  });
});

describe('the router under TRIBUTARY_EGRESS=public', () => {
  let instance: TributaryTestInstance;
  let source: TestSource;
  const receiver = new HeaderRecordingReceiver();

  beforeAll(async () => {
    await receiver.start();
    instance = await startTributary({
      environment: {
        ...POLLING_ENVIRONMENT,
        TRIBUTARY_EGRESS: 'public',
        TRIBUTARY_EGRESS_ALLOW: '127.0.0.2',
      },
    });
    source = await createWorkspaceAndSource(instance);
  });
  afterAll(async () => {
    await instance?.stop({ removeData: true });
    await receiver.stop();
  });

  it('discards deliveries to loopback and metadata addresses with egress_denied, sending nothing', async () => {
    await createDestination(instance, source, {
      slug: 'webhooks',
      enabled: true,
      config: { url: `http://127.0.0.1:${receiver.port}/ok` },
    });
    await createDestination(instance, source, {
      slug: 'webhooks-metadata',
      catalogSlug: 'webhooks',
      enabled: true,
      config: { url: 'http://169.254.169.254/latest/meta-data/' },
    });
    await sendBatch(instance, source, [trackMessage()]);
    for (const slug of ['webhooks', 'webhooks-metadata']) {
      const metrics = await waitForSettled(instance, source, slug, 1);
      expect(metrics.counts.discarded).toBe(1);
      expect(metrics.recent_discards[0]?.reason).toMatch(/^egress_denied: /);
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
