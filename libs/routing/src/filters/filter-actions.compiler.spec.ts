import { InvalidDestinationFilterError, InvalidFilterActionError } from './destination-filter.errors';
import { compileFilterActions, DEFAULT_SAMPLE_PATH } from './filter-actions.compiler';

describe('compileFilterActions', () => {
  it('compiles every action type of the Config API', () => {
    expect(
      compileFilterActions([
        { type: 'drop_event' },
        { type: 'sample_event', percent: 0.6, path: 'userId' },
        { type: 'whitelist_fields', fields: { properties: { fields: ['total', 'address.city'] } } },
        { type: 'blacklist_fields', fields: { context: { fields: ['ip'] }, traits: { fields: ['email'] } } },
        { type: 'blocklist_fields', fields: { properties: { fields: ['email'] } } },
      ]),
    ).toEqual([
      { kind: 'drop_event' },
      { kind: 'sample_event', percent: 0.6, path: 'userId' },
      { kind: 'allow_fields', fields: { properties: ['total', 'address.city'] } },
      { kind: 'drop_fields', fields: { context: ['ip'], traits: ['email'] } },
      { kind: 'drop_fields', fields: { properties: ['email'] } },
    ]);
  });

  it('samples on the messageId when no path is given', () => {
    expect(DEFAULT_SAMPLE_PATH).toBe('messageId');
    expect(compileFilterActions([{ type: 'sample_event', percent: 0.5 }])).toEqual([
      { kind: 'sample_event', percent: 0.5, path: 'messageId' },
    ]);
    expect(compileFilterActions([{ type: 'sample_event', percent: 0.5, path: '' }])[0]).toMatchObject({
      path: 'messageId',
    });
  });

  it('accepts the edges of the sampling range and an empty field list', () => {
    expect(compileFilterActions([{ type: 'sample_event', percent: 0 }])[0]).toMatchObject({ percent: 0 });
    expect(compileFilterActions([{ type: 'sample_event', percent: 1 }])[0]).toMatchObject({ percent: 1 });
    expect(
      compileFilterActions([{ type: 'whitelist_fields', fields: { properties: { fields: [] } } }])[0],
    ).toEqual({
      kind: 'allow_fields',
      fields: { properties: [] },
    });
  });

  it.each([
    ['not a list', { type: 'drop_event' }, /actions must be a list/],
    ['an empty list', [], /at least one action/],
    ['an action that is not an object', ['drop_event'], /action 0: an action must be an object/],
    [
      'an unknown type',
      [{ type: 'drop_events' }],
      /unknown action type "drop_events"; supported: drop_event, sample_event/,
    ],
    ['a missing type', [{}], /unknown action type undefined/],
    ['a percent above 1', [{ type: 'sample_event', percent: 60 }], /between 0 and 1/],
    ['a negative percent', [{ type: 'sample_event', percent: -0.1 }], /between 0 and 1/],
    ['a percent as a string', [{ type: 'sample_event', percent: '0.5' }], /between 0 and 1/],
    ['a missing percent', [{ type: 'sample_event' }], /needs "percent"/],
    [
      'a path that is not a string',
      [{ type: 'sample_event', percent: 0.5, path: 3 }],
      /"path" must be a field path/,
    ],
    ['fields missing', [{ type: 'whitelist_fields' }], /whitelist_fields needs "fields"/],
    [
      'fields as a list',
      [{ type: 'blacklist_fields', fields: ['email'] }],
      /blacklist_fields needs "fields"/,
    ],
    [
      'an unknown object',
      [{ type: 'blocklist_fields', fields: { integrations: { fields: ['x'] } } }],
      /not "integrations"/,
    ],
    [
      'an object without a fields list',
      [{ type: 'blocklist_fields', fields: { properties: ['email'] } }],
      /"fields.properties" must be an object with a "fields" list/,
    ],
    [
      'an empty field name',
      [{ type: 'blocklist_fields', fields: { properties: { fields: [''] } } }],
      /non-empty field names, got ""/,
    ],
    [
      'a field name with an empty segment',
      [{ type: 'blocklist_fields', fields: { properties: { fields: ['a..b'] } } }],
      /non-empty field names, got "a..b"/,
    ],
    [
      'a field name that is not a string',
      [{ type: 'whitelist_fields', fields: { context: { fields: [7] } } }],
      /got 7/,
    ],
  ])('refuses %s', (_, actions, reason) => {
    let thrown: unknown;
    try {
      compileFilterActions(actions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidFilterActionError);
    expect(thrown).toBeInstanceOf(InvalidDestinationFilterError);
    expect((thrown as InvalidFilterActionError).field).toBe('actions');
    expect((thrown as Error).message).toMatch(reason);
  });

  it('names the index of the bad action', () => {
    expect(() =>
      compileFilterActions([{ type: 'drop_event' }, { type: 'sample_event', percent: 2 }]),
    ).toThrow(/^Invalid filter action 1: /);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses a field path with the segment %s, in every action that takes a path',
    (segment) => {
      const paths = [segment, `${segment}.toString`, `address.${segment}`, `a.${segment}.b`];
      for (const path of paths) {
        for (const type of ['whitelist_fields', 'blacklist_fields', 'blocklist_fields']) {
          for (const object of ['properties', 'context', 'traits']) {
            expect(() =>
              compileFilterActions([{ type, fields: { [object]: { fields: ['ok', path] } } }]),
            ).toThrow(new RegExp(`contains "${segment}".*cannot be used as field names`));
          }
        }
        expect(() => compileFilterActions([{ type: 'sample_event', percent: 0.5, path }])).toThrow(
          InvalidFilterActionError,
        );
      }
    },
  );

  it('accepts field names that only contain a prototype word', () => {
    expect(() =>
      compileFilterActions([
        {
          type: 'blacklist_fields',
          fields: { properties: { fields: ['constructors', 'my_prototype.x', 'proto'] } },
        },
      ]),
    ).not.toThrow();
  });
});
