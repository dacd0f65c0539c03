import type { DestinationRecord } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import { presentDestination } from './destination.presenter';

function webhook(config: Record<string, unknown>): DestinationRecord {
  return {
    workspaceSlug: 'ws',
    sourceSlug: 'web',
    sourceId: 'src_1',
    destinationSlug: 'webhooks',
    catalogSlug: 'webhooks',
    displayName: 'Webhooks',
    connectionMode: 'CLOUD',
    enabled: true,
    config,
    createTime: '2026-01-02T03:04:05.000Z',
    updateTime: '2026-01-02T03:04:05.000Z',
  };
}

const valueOf = (presented: ReturnType<typeof presentDestination>, key: string) =>
  presented.config.find((entry) => entry.name.endsWith(`/config/${key}`))?.value;

describe('presentDestination masks webhook secrets', () => {
  it('masks encrypted values: a URL with credentials, header values, the shared secret', () => {
    const presented = presentDestination(
      webhook({
        url: 'enc:v1:abc',
        headers: { Authorization: 'enc:v1:def', 'X-Empty': '' },
        shared_secret: 'enc:v1:ghi',
      }),
    );
    expect(valueOf(presented, 'url')).toBe(MASKED_SECRET);
    expect(valueOf(presented, 'headers')).toEqual({ Authorization: MASKED_SECRET, 'X-Empty': '' });
    expect(valueOf(presented, 'shared_secret')).toBe(MASKED_SECRET);
  });

  it('masks values stored in plaintext before they were secrets', () => {
    const presented = presentDestination(
      webhook({
        url: 'https://hook-user:pa55@hooks.example.com/in?x=1',
        headers: { 'X-Api-Key': 'plain-key' },
      }),
    );
    expect(valueOf(presented, 'url')).toBe(
      `https://${MASKED_SECRET}:${MASKED_SECRET}@hooks.example.com/in?x=1`,
    );
    expect(valueOf(presented, 'headers')).toEqual({ 'X-Api-Key': MASKED_SECRET });
    expect(JSON.stringify(presented)).not.toMatch(/pa55|hook-user|plain-key/);
  });

  it('shows a URL without credentials as it is', () => {
    const presented = presentDestination(webhook({ url: 'https://hooks.example.com/in' }));
    expect(valueOf(presented, 'url')).toBe('https://hooks.example.com/in');
  });
});
