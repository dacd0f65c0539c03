import { isOriginAllowed, parseAllowedOrigin } from './allowed-origins';

describe('allowed origins', () => {
  it.each([
    ['https://www.example.com', 'https://www.example.com'],
    ['HTTPS://WWW.Example.COM/', 'https://www.example.com'],
    ['https://example.com:443', 'https://example.com'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['https://*.example.com', 'https://*.example.com'],
    ['http://*.example.com:3000', 'http://*.example.com:3000'],
  ])('normalizes %s to %s', (entry, origin) => {
    expect(parseAllowedOrigin(entry)).toEqual({ origin });
  });

  it.each([
    ['', 'non-empty'],
    [42, 'non-empty'],
    ['example.com', 'not an origin'],
    ['ftp://example.com', 'http:// or https://'],
    ['https://example.com/path', 'without a path'],
    ['https://example.com?q=1', 'without a path'],
    ['https://user@example.com', 'without a path'],
  ])('refuses %p', (entry, problem) => {
    const result = parseAllowedOrigin(entry);
    expect('problem' in result && result.problem).toContain(problem);
  });

  it('accepts any origin when the list is empty or absent', () => {
    expect(isOriginAllowed([], 'https://anything.test')).toBe(true);
    expect(isOriginAllowed(undefined, 'null')).toBe(true);
  });

  it('accepts listed origins exactly, case-insensitively, and nothing else', () => {
    const allowed = ['https://www.example.com', 'http://localhost:8080'];
    expect(isOriginAllowed(allowed, 'https://www.example.com')).toBe(true);
    expect(isOriginAllowed(allowed, 'HTTPS://WWW.EXAMPLE.COM')).toBe(true);
    expect(isOriginAllowed(allowed, 'http://localhost:8080')).toBe(true);
    expect(isOriginAllowed(allowed, 'http://www.example.com')).toBe(false);
    expect(isOriginAllowed(allowed, 'https://www.example.com.evil.test')).toBe(false);
    expect(isOriginAllowed(allowed, 'http://localhost:8081')).toBe(false);
    expect(isOriginAllowed(allowed, 'null')).toBe(false);
  });

  it('accepts any subdomain of a wildcard entry, with the same scheme and port, but not the bare domain', () => {
    const allowed = ['https://*.example.com'];
    expect(isOriginAllowed(allowed, 'https://shop.example.com')).toBe(true);
    expect(isOriginAllowed(allowed, 'https://a.b.example.com')).toBe(true);
    expect(isOriginAllowed(allowed, 'https://example.com')).toBe(false);
    expect(isOriginAllowed(allowed, 'https://evilexample.com')).toBe(false);
    expect(isOriginAllowed(allowed, 'http://shop.example.com')).toBe(false);
    expect(isOriginAllowed(allowed, 'https://shop.example.com:8443')).toBe(false);
  });
});
