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
    ['http://collector.example/v1/batch', '/v1/batch'],
    ['https://collector.example:8443//v1beta/workspaces/?page_size=1', '/v1beta/workspaces?page_size=1'],
    ['http://collector.example', '/'],
    ['http://collector.example?x=1', '/?x=1'],
  ])('%s -> %s', (input, expected) => expect(normalizeRequestUrl(input)).toBe(expected));
});
