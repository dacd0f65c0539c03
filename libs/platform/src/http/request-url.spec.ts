import { normalizeRequestUrl } from './request-url';

describe('normalizeRequestUrl', () => {
  it.each([
    ['/v1beta//catalog/sources/', '/v1beta/catalog/sources'],
    ['/v1beta/workspaces/ws/sources/', '/v1beta/workspaces/ws/sources'],
    ['/v1beta/workspaces/ws/sources?&page_size=10', '/v1beta/workspaces/ws/sources?&page_size=10'],
    [
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections:batchCreateConnections',
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections/@batchCreateConnections',
    ],
    [
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections%3AbatchCreateConnections',
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections/@batchCreateConnections',
    ],
    ['/v1beta/workspaces/ws/sources/workspaces/ws/sources/js', '/v1beta/workspaces/ws/sources/js'],
    [
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections/workspaces/ws/sources/js',
      '/v1beta/workspaces/ws/tracking-plans/rs_1/source-connections/js',
    ],
    ['//token', '/token'],
    ['/v1/batch/', '/v1/batch'],
    ['/', '/'],
  ])('%s -> %s', (input, expected) => expect(normalizeRequestUrl(input)).toBe(expected));
});
