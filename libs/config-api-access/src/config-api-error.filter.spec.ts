import { ArgumentsHost, Logger, NotFoundException } from '@nestjs/common';
import { DomainError } from '@tributary/config-domain';
import { WrongExpectedRevisionError } from '@tributary/event-store';
import { ConfigApiError } from './config-api.error';
import { ConfigApiErrorFilter } from './config-api-error.filter';

/** A Fastify reply that records what the filter sends. */
function fakeReply() {
  const sent: { status?: number; headers: Record<string, string>; body?: unknown } = { headers: {} };
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header(name: string, value: string) {
      sent.headers[name.toLowerCase()] = value;
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  return { reply, sent };
}

function hostFor(
  reply: unknown,
  request = { method: 'POST', url: '/v1beta/workspaces/ws/sources?page_size=1' },
) {
  return {
    switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request, getNext: () => undefined }),
  } as unknown as ArgumentsHost;
}

describe('ConfigApiErrorFilter', () => {
  let loggedErrors: jest.SpyInstance;

  beforeEach(() => {
    loggedErrors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => loggedErrors.mockRestore());

  it('answers an unexpected Error with 500, code 13, and no detail of the error in the body', () => {
    const { reply, sent } = fakeReply();
    const secretDetail = 'connect ECONNREFUSED 10.0.0.7:5432 password=hunter2';
    new ConfigApiErrorFilter().catch(new Error(secretDetail), hostFor(reply));

    expect(sent.status).toBe(500);
    expect(sent.headers['content-type']).toMatch(/^application\/json/);
    expect(sent.body).toMatchObject({ error: 'internal error', code: 13 });
    const text = JSON.stringify(sent.body);
    expect(text).not.toContain('ECONNREFUSED');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('at ');
    // The detail goes to the log, where an operator can find it.
    expect(loggedErrors).toHaveBeenCalledWith(expect.stringContaining(secretDetail));
  });

  it('answers a thrown non-Error value with 500, code 13', () => {
    const { reply, sent } = fakeReply();
    new ConfigApiErrorFilter().catch('a string thrown by a library', hostFor(reply));
    expect(sent.status).toBe(500);
    expect(sent.body).toMatchObject({ error: 'internal error', code: 13 });
  });

  it.each<[string, number, number, unknown]>([
    ['a ConfigApiError', 503, 14, ConfigApiError.unavailable('store down')],
    ['a domain not_found', 404, 5, new DomainError('not_found', 'gone')],
    ['a domain already_exists', 409, 6, new DomainError('already_exists', 'twice')],
    ['a domain invalid_argument', 400, 3, new DomainError('invalid_argument', 'bad')],
    ['a lost append race', 409, 10, new WrongExpectedRevisionError('source-x', 1, 2)],
    ['an unknown route', 404, 5, new NotFoundException()],
  ])('maps %s to %i, code %i', (_label, status, code, exception) => {
    const { reply, sent } = fakeReply();
    new ConfigApiErrorFilter().catch(exception, hostFor(reply));
    expect(sent.status).toBe(status);
    expect(sent.body).toMatchObject({ code });
    expect(typeof (sent.body as { error: unknown }).error).toBe('string');
  });

  it('sets the headers an error carries, such as Retry-After', () => {
    const { reply, sent } = fakeReply();
    new ConfigApiErrorFilter().catch(
      new ConfigApiError(429, 8, 'slow down', { 'retry-after': '17' }),
      hostFor(reply),
    );
    expect(sent.status).toBe(429);
    expect(sent.headers['retry-after']).toBe('17');
  });
});
