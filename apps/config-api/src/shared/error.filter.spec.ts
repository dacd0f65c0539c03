import { ArgumentsHost, NotFoundException } from '@nestjs/common';
import { ConfigApiError } from './config-api.error';
import { ConfigApiErrorFilter } from './error.filter';

interface Sent {
  status?: number;
  body?: any;
  headers: Record<string, string>;
}

const nothingSent = (): Sent => ({ headers: {} });

function hostFor(sent: Sent): ArgumentsHost {
  const reply = {
    status(code: number) {
      sent.status = code;
      return reply;
    },
    header(name: string, value: string) {
      sent.headers[name] = value;
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  const request = { method: 'POST', url: '/v1beta/workspaces/acme/sources' };
  return { switchToHttp: () => ({ getResponse: () => reply, getRequest: () => request }) } as unknown as ArgumentsHost;
}

describe('ConfigApiErrorFilter', () => {
  const filter = new ConfigApiErrorFilter();
  (filter as unknown as { logger: { error(): void } }).logger = { error: () => undefined };

  it('answers an unexpected fault with 500, code 13, without its details', () => {
    const sent = nothingSent();
    filter.catch(new Error('secret connection string postgres://u:p@db'), hostFor(sent));
    expect(sent.status).toBe(500);
    expect(sent.body).toEqual({ error: 'internal error', code: 13, message: 'internal error' });
    expect(JSON.stringify(sent.body)).not.toMatch(/postgres/);
    expect(sent.headers['content-type']).toMatch(/application\/json/);
  });

  it('passes a client error through with its status, code and headers', () => {
    const sent = nothingSent();
    filter.catch(new ConfigApiError(429, 8, 'slow down', { 'retry-after': '7' }), hostFor(sent));
    expect(sent).toMatchObject({ status: 429, body: { error: 'slow down', code: 8 }, headers: { 'retry-after': '7' } });
  });

  it("turns Nest's unknown-route error into 404, code 5", () => {
    const sent = nothingSent();
    filter.catch(new NotFoundException(), hostFor(sent));
    expect(sent).toMatchObject({ status: 404, body: { code: 5 } });
  });
});
