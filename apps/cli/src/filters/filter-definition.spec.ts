import { CliError } from '../shared/cli-context';
import { filterFromFlags } from './filter-definition';

describe('filterFromFlags', () => {
  it('builds the Config API filter from one flag per action', () => {
    expect(
      filterFromFlags({
        if: "type = 'track'",
        drop: true,
        sample: '25',
        samplePath: 'userId',
        allowFields: 'properties.total, context.page',
        blockFields: 'traits.email',
        title: 'Tracks',
      }),
    ).toEqual({
      if: "type = 'track'",
      title: 'Tracks',
      enabled: true,
      actions: [
        { type: 'drop_event' },
        { type: 'sample_event', percent: 0.25, path: 'userId' },
        {
          type: 'whitelist_fields',
          fields: { properties: { fields: ['total'] }, context: { fields: ['page'] } },
        },
        { type: 'blacklist_fields', fields: { traits: { fields: ['email'] } } },
      ],
    });
  });

  it('takes the actions as JSON, and is created disabled on request', () => {
    expect(filterFromFlags({ if: 'all', actions: '[{"type":"drop_event"}]', disabled: true })).toEqual({
      if: 'all',
      title: 'all',
      enabled: false,
      actions: [{ type: 'drop_event' }],
    });
  });

  it.each([
    [{ if: 'all' }, /needs an action/],
    [{ if: 'all', sample: '101' }, /percentage from 0 to 100/],
    [{ if: 'all', sample: '' }, /percentage from 0 to 100/],
    [{ if: 'all', drop: true, samplePath: 'userId' }, /--sample-path goes with --sample/],
    [{ if: 'all', allowFields: 'properties.' }, /--allow-fields takes/],
    [{ if: 'all', blockFields: 'payload.x' }, /--block-fields takes/],
    [{ if: 'all', actions: '{"type":"drop_event"}' }, /JSON array/],
    [{ if: 'all', actions: 'drop' }, /--actions is not JSON/],
  ])('refuses %j as a usage error', (flags, message) => {
    const attempt = () => filterFromFlags(flags);
    expect(attempt).toThrow(CliError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (error) {
      expect((error as CliError).exitCode).toBe(1);
    }
  });
});
