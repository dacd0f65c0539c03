// A source function's webhook URL: PUBLIC_BASE_URL when the deployment names one, else the scheme and
// host the request came with; the write key travels as base64url (docs/functions.md §1).
import { functionWebhookUrl, publicBaseUrl } from './source.presenter';

describe('source function webhook URL', () => {
  it('starts at PUBLIC_BASE_URL, keeping a path prefix and dropping trailing slashes', () => {
    const request = { protocol: 'http', host: 'internal:3000' };
    expect(publicBaseUrl('https://t.example.com', request)).toBe('https://t.example.com');
    expect(publicBaseUrl('https://t.example.com/', request)).toBe('https://t.example.com');
    expect(publicBaseUrl('https://edge.example.com/tributary//', request)).toBe(
      'https://edge.example.com/tributary',
    );
  });

  it('starts at the request scheme and host without PUBLIC_BASE_URL', () => {
    expect(publicBaseUrl(undefined, { protocol: 'http', host: '127.0.0.1:8080' })).toBe(
      'http://127.0.0.1:8080',
    );
    expect(publicBaseUrl(undefined, { protocol: 'https', host: 'fn.example' })).toBe('https://fn.example');
  });

  it('carries the write key as base64url in b', () => {
    const url = new URL(
      functionWebhookUrl('https://t.example.com/prefix', 'LxKXARX9IuqR9v0gn7y2Fw1iHi0ephbF'),
    );
    expect(url.pathname).toBe('/prefix/v1/fn');
    expect(Buffer.from(url.searchParams.get('b')!, 'base64url').toString()).toBe(
      'LxKXARX9IuqR9v0gn7y2Fw1iHi0ephbF',
    );
    expect(url.searchParams.get('b')).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
