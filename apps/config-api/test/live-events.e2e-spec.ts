// The live-events route read with a plain HTTP client (node:http), as any SSE client would: every
// message of a burst once and in order, resuming with Last-Event-ID, keep-alive comments, the
// Config API's errors for a token of another workspace, and a reader that stops reading dropped.
import { EVENT_LOG, EventLog } from '@tributary/event-log';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { LiveEventLimits } from '../src/live-events/server-sent-events';
import { OpenLiveEventStreams } from '../src/live-events/open-live-event-streams';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
} from '../../../test/support/config-api.client';

interface SseEvent {
  id: number;
  data: Record<string, unknown>;
}

/** One open stream: the parsed events and comments so far, and how it ended. */
class SseReader {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  ended = false;
  private buffer = '';

  constructor(
    readonly response: IncomingMessage,
    readonly request: ClientRequest,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    const end = () => (this.ended = true);
    response.on('end', end);
    response.on('close', end);
    response.on('error', end);
    request.on('error', end);
  }

  close(): void {
    this.request.destroy();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let boundary = this.buffer.indexOf('\n\n');
    while (boundary >= 0) {
      const block = this.buffer.slice(0, boundary);
      this.buffer = this.buffer.slice(boundary + 2);
      boundary = this.buffer.indexOf('\n\n');
      let id: number | undefined;
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = Number(line.slice(4));
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (id !== undefined && data !== undefined) this.events.push({ id, data: JSON.parse(data) });
    }
  }
}

function openStream(
  instance: TributaryTestInstance,
  path: string,
  token: string | null,
  headers: Record<string, string> = {},
): Promise<{ status: number; reader?: SseReader; headers: IncomingMessage['headers']; body?: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `http://127.0.0.1:${instance.port}/v1beta/${path}`,
      {
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          accept: 'text/event-stream',
          ...headers,
        },
      },
      (response) => {
        if (response.statusCode !== 200) {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) }),
          );
          return;
        }
        resolve({ status: 200, headers: response.headers, reader: new SseReader(response, request) });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

async function waitUntil(description: string, condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GET /v1beta/workspaces/{ws}/sources/{src}/live-events', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let readerToken: string;
  let otherWorkspaceToken: string;
  let writeKey: string;
  let sourceId: string;
  const ws = 'live';
  const path = `workspaces/${ws}/sources/web/live-events`;
  const openReaders: SseReader[] = [];
  const defaults = new LiveEventLimits();

  async function open(headers: Record<string, string> = {}, token: string | null = readerToken) {
    const opened = await openStream(instance, path, token, headers);
    if (opened.reader) openReaders.push(opened.reader);
    return opened;
  }

  /** Sends messages through the tracking API in batches, as a client library would. */
  async function track(messageIds: string[]): Promise<void> {
    for (let start = 0; start < messageIds.length; start += 100) {
      const batch = messageIds.slice(start, start + 100).map((messageId, index) => ({
        type: 'track',
        event: 'Burst Event',
        userId: 'user-1',
        messageId,
        properties: { index: start + index },
      }));
      const response = await fetch(`${instance.baseUrl}/v1/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
        },
        body: JSON.stringify({ batch }),
      });
      expect(response.status).toBe(200);
    }
  }

  beforeAll(async () => {
    instance = await startTributary();
    admin = new ConfigApiClient(instance);
    ({ readerToken } = await createWorkspaceWithTokens(admin, ws));
    ({ readerToken: otherWorkspaceToken } = await createWorkspaceWithTokens(admin, 'elsewhere'));
    const source = await admin.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/web`, catalog_name: 'catalog/sources/javascript' },
    });
    writeKey = source.write_keys[0];
    sourceId = source.id;
  });

  afterEach(async () => {
    openReaders.splice(0).forEach((reader) => reader.close());
    Object.assign(instance.app.get(LiveEventLimits), new LiveEventLimits());
    // The server lets go of a stream when it sees the connection close: the next test starts clean.
    await waitUntil('no stream open', () => instance.app.get(OpenLiveEventStreams).size === 0);
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('streams every message of a 1,000-message burst once, in order, as stored, with its position as id', async () => {
    const { status, headers, reader } = await open();
    expect(status).toBe(200);
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(headers['cache-control']).toContain('no-cache');
    const messageIds = Array.from({ length: 1000 }, (_, index) => `burst-${index}`);
    await track(messageIds);

    await waitUntil('1,000 events', () => reader!.events.length >= 1000, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = reader!.events;
    expect(events.map((event) => event.data.messageId)).toEqual(messageIds);
    for (let index = 1; index < events.length; index++) {
      expect(events[index].id).toBeGreaterThan(events[index - 1].id);
    }
    // The message as stored: normalized by the tracking API (receivedAt, type, properties kept).
    expect(events[0].data).toMatchObject({
      type: 'track',
      event: 'Burst Event',
      userId: 'user-1',
      properties: { index: 0 },
    });
    expect(typeof events[0].data.receivedAt).toBe('string');
  }, 60_000);

  it('starts at now: messages stored before the stream opened are not sent', async () => {
    await track(['before-open']);
    const { reader } = await open();
    await track(['after-open']);
    await waitUntil('the new message', () => reader!.events.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reader!.events.map((event) => event.data.messageId)).toEqual(['after-open']);
  });

  it('resumes after Last-Event-ID with nothing missed and nothing repeated', async () => {
    const first = await open();
    await track(['resume-1', 'resume-2', 'resume-3']);
    await waitUntil('three events', () => first.reader!.events.length >= 3);
    const seenFirst = first.reader!.events[0];
    first.reader!.close();
    await track(['resume-4']);

    const resumed = await open({ 'last-event-id': String(seenFirst.id) });
    await waitUntil('the rest', () => resumed.reader!.events.length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.reader!.events.map((event) => event.data.messageId)).toEqual([
      'resume-2',
      'resume-3',
      'resume-4',
    ]);
  });

  it('sends a comment every keep-alive interval while no message comes', async () => {
    instance.app.get(LiveEventLimits).keepAliveIntervalMs = 100;
    const { reader } = await open();
    await waitUntil(
      'two keep-alive comments',
      () => reader!.comments.filter((comment) => comment === 'keep-alive').length >= 2,
    );
    expect(defaults.keepAliveIntervalMs).toBe(15_000);
  });

  it('refuses a token of another workspace, no token, and a write path, in the Config API error shape', async () => {
    const otherWorkspace = await open({}, otherWorkspaceToken);
    expect(otherWorkspace.status).toBe(404);
    expect(otherWorkspace.body).toMatchObject({ code: 5 });
    expect(typeof otherWorkspace.body.error).toBe('string');

    const anonymous = await open({}, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 16 });

    const invalid = await open({}, 'not-a-token');
    expect(invalid.status).toBe(401);

    expectConfigApiError(await admin.get(`workspaces/${ws}/sources/nope/live-events`), 404, 5);
    expectConfigApiError(await admin.post(path, {}), 404, 5);
  });

  it('caps the streams one token holds open: the 6th gets 429, code 8, until one closes', async () => {
    expect(defaults.maxStreamsPerReader).toBe(5);
    const streams = [];
    for (let count = 0; count < 5; count++) {
      const opened = await open();
      expect(opened.status).toBe(200);
      streams.push(opened.reader!);
    }
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 8 });
    expect(refused.body.error).toMatch(/LIVE_EVENTS_MAX_STREAMS_PER_TOKEN/);
    // Another token of the workspace still gets a stream of its own.
    expect((await open({}, instance.adminToken)).status).toBe(200);

    streams[0].close();
    await waitUntil(
      'the server lets go of the closed stream',
      () => instance.app.get(OpenLiveEventStreams).size === 5,
    );
    expect((await open()).status).toBe(200);
  });

  it('caps the streams of one workspace (429) and of the process (503 with Retry-After)', async () => {
    const limits = instance.app.get(LiveEventLimits);
    limits.maxStreamsPerWorkspace = 2;
    expect((await open()).status).toBe(200);
    expect((await open({}, instance.adminToken)).status).toBe(200);
    const workspaceFull = await open();
    expect(workspaceFull.status).toBe(429);
    expect(workspaceFull.body).toMatchObject({ code: 8 });
    expect(workspaceFull.body.error).toMatch(/LIVE_EVENTS_MAX_STREAMS_PER_WORKSPACE/);

    limits.maxStreamsPerWorkspace = 20;
    limits.maxStreams = 2;
    const processFull = await open();
    expect(processFull.status).toBe(503);
    expect(processFull.body).toMatchObject({ code: 14 });
    expect(processFull.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('answers 400 for a Last-Event-ID it never sent', async () => {
    for (const header of ['abc', '-1', '1.5', '99999999999999999999']) {
      const response = await open({ 'last-event-id': header });
      expect({ header, status: response.status }).toEqual({ header, status: 400 });
      expect(response.body).toMatchObject({ code: 3 });
    }
  });

  it('drops a reader that stops reading instead of buffering for it without limit', async () => {
    const limits = instance.app.get(LiveEventLimits);
    limits.maxBufferedBytes = 64 * 1024;
    limits.slowReaderTimeoutMs = 500;
    const { reader } = await open();
    reader!.response.pause(); // reads nothing more: the socket's buffers fill up
    const eventLog = instance.app.get<symbol, EventLog>(EVENT_LOG);
    const padding = 'x'.repeat(16 * 1024);
    // Far more than the socket buffers of a loopback connection hold.
    const published = 40 * 50;
    for (let batch = 0; batch < 40; batch++) {
      await eventLog.publishBatch(
        Array.from({ length: 50 }, (_, index) => ({
          workspaceId: 'ws-live',
          sourceId,
          messageId: `slow-${batch}-${index}`,
          payload: {
            type: 'track',
            event: 'Big',
            messageId: `slow-${batch}-${index}`,
            properties: { padding },
          },
        })),
      );
    }
    // Longer than the server waits for a reader that takes nothing.
    await new Promise((resolve) => setTimeout(resolve, 3 * limits.slowReaderTimeoutMs));
    reader!.response.resume();
    await waitUntil('the stream ends', () => reader!.ended, 20_000);
    // It ended short: the server gave up on the reader rather than keep every message for it.
    expect(reader!.events.length).toBeGreaterThan(0);
    expect(reader!.events.length).toBeLessThan(published);

    // The server is fine: a new reader gets new messages.
    const fresh = await open();
    await track(['after-the-slow-reader']);
    await waitUntil('the new reader gets it', () =>
      fresh.reader!.events.some((event) => event.data.messageId === 'after-the-slow-reader'),
    );
  }, 60_000);

  it('ends its open streams when the server stops, so a graceful stop does not wait for them', async () => {
    const own = await startTributary();
    try {
      const ownAdmin = new ConfigApiClient(own);
      await ownAdmin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/stopping' } });
      await ownAdmin.ok('POST', 'workspaces/stopping/sources', {
        source: { name: 'workspaces/stopping/sources/web', catalog_name: 'catalog/sources/javascript' },
      });
      const opened = await openStream(own, 'workspaces/stopping/sources/web/live-events', own.adminToken);
      expect(opened.status).toBe(200);
      const startedAt = Date.now();
      await own.stop();
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      await waitUntil('the reader sees the end', () => opened.reader!.ended);
    } finally {
      await own.stop({ removeData: true }).catch(() => undefined);
    }
  }, 30_000);
});
