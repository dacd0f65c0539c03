import { DEFAULT_SCHEMA_CONFIG } from '@tributary/config-domain';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import type { RecordedEvent } from '@tributary/event-store';
import { ConfigApiError } from './config-api.error';
import { PathResourcesPipe } from './path-resources.pipe';
import { ResourceLookup } from './resource-lookup.service';

const metadata = { actor: 'system', requestId: 'req', time: '2026-01-01T00:00:00.000Z' };

function recorded(position: number, type: string, data: Record<string, unknown>): RecordedEvent {
  return { streamName: `stream-${position}`, type, data, metadata, revision: 0, position: BigInt(position) };
}

describe('PathResourcesPipe', () => {
  const projections = new ConfigProjectionRunner();
  const readModel = new ConfigReadModel(projections);
  projections.apply(
    recorded(1, 'WorkspaceCreated', {
      slug: 'ws',
      id: 'e5bdb0902b',
      displayName: 'WS',
      region: 'us',
      createTime: metadata.time,
    }),
  );
  projections.apply(
    recorded(2, 'SourceCreated', {
      workspaceSlug: 'ws',
      sourceSlug: 'js',
      sourceId: 'src1',
      catalogName: 'catalog/sources/javascript',
      displayName: 'js',
      writeKey: 'k'.repeat(32),
      createTime: metadata.time,
      schemaConfig: DEFAULT_SCHEMA_CONFIG,
    }),
  );
  projections.apply(
    recorded(3, 'DestinationCreated', {
      workspaceSlug: 'ws',
      sourceSlug: 'js',
      sourceId: 'src1',
      destinationSlug: 'webhooks',
      catalogSlug: 'webhooks',
      displayName: 'Webhooks',
      connectionMode: 'CLOUD',
      enabled: false,
      config: {},
      createTime: metadata.time,
      updateTime: metadata.time,
    }),
  );
  const pipe = new PathResourcesPipe(new ResourceLookup(readModel));
  const resolve = (params: Record<string, string>, data: Record<string, unknown>) => () =>
    pipe.transform(params, { type: 'custom', data: data as never });

  it('resolves the resource a path names, with its parents', () => {
    expect(resolve({ workspace: 'ws' }, { resource: 'workspace' })()).toMatchObject({ slug: 'ws' });
    expect(resolve({ workspace: 'ws', source: 'js' }, { resource: 'source' })()).toMatchObject({
      source: { sourceId: 'src1' },
    });
    expect(
      resolve({ workspace: 'ws', source: 'js', destination: 'webhooks' }, { resource: 'destination' })(),
    ).toMatchObject({
      destination: { destinationSlug: 'webhooks' },
      sourceView: { source: { sourceSlug: 'js' } },
    });
  });

  it('answers 404 naming the first resource of the path that is missing', () => {
    const destination = { resource: 'destination' };
    expect(resolve({ workspace: 'nope', source: 'js', destination: 'webhooks' }, destination)).toThrow(
      ConfigApiError.notFound('workspaces/nope not found'),
    );
    expect(resolve({ workspace: 'ws', source: 'ghost', destination: 'webhooks' }, destination)).toThrow(
      ConfigApiError.notFound('workspaces/ws/sources/ghost not found'),
    );
    expect(resolve({ workspace: 'ws', source: 'js', destination: 'ghost' }, destination)).toThrow(
      ConfigApiError.notFound('workspaces/ws/sources/js/destinations/ghost not found'),
    );
    expect(resolve({ workspace: 'ws', plan: 'rs_x' }, { resource: 'plan' })).toThrow(
      ConfigApiError.notFound('workspaces/ws/tracking-plans/rs_x not found'),
    );
    expect(resolve({ workspace: 'ws', application: 'oa_x' }, { resource: 'application' })).toThrow(
      ConfigApiError.notFound('workspaces/ws/oauth-applications/oa_x not found'),
    );
  });

  it('reads a full name in the last parameter only where the route accepts one (docs/config-api.md §5.12)', () => {
    const fullName = {
      workspace: 'ws',
      source: 'js',
      destination: 'workspaces/ws/sources/js/destinations/webhooks',
    };
    expect(resolve(fullName, { resource: 'destination', acceptFullName: true })()).toMatchObject({
      destination: { destinationSlug: 'webhooks' },
    });
    expect(resolve(fullName, { resource: 'destination' })).toThrow(ConfigApiError);
  });
});
