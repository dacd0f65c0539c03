import { given, stateAfter } from '../testing/given-when-then';
import { DestinationCommand, destinationDecider, SettingDefinition } from './destination.decider';
import { DestinationEvent, DestinationRecord, FilterAction, FilterRecord } from './destination.events';

const identity = {
  workspaceSlug: 'ws',
  sourceSlug: 'js',
  sourceId: 'src_first',
  destinationSlug: 'google-analytics',
};
const settings: SettingDefinition[] = [
  { name: 'trackingId', required: true, defaultValue: '' },
  { name: 'anonymizeIp', required: false, defaultValue: false },
  { name: 'dimensions', required: false, defaultValue: {} },
  { name: 'siteSpeedSampleRate', required: true, defaultValue: 1 },
];
const createdAt = '2018-09-24T17:08:04.138Z';
const later = '2018-09-25T10:00:00.000Z';

/** A destination as a client sends it on create: only some settings named. */
const requested: DestinationRecord = {
  ...identity,
  catalogSlug: 'google-analytics',
  displayName: 'Google Analytics',
  connectionMode: 'CLOUD',
  enabled: false,
  config: { trackingId: 'UA-970334309-1' },
  createTime: createdAt,
  updateTime: createdAt,
};
const createCommand: DestinationCommand = {
  type: 'CreateDestination',
  destination: requested,
  settings,
};
const fullConfig = {
  trackingId: 'UA-970334309-1',
  anonymizeIp: false,
  dimensions: {},
  siteSpeedSampleRate: 1,
};
const destinationCreated: DestinationEvent = {
  type: 'DestinationCreated',
  data: { ...requested, config: fullConfig },
};
const destinationDeleted: DestinationEvent = { type: 'DestinationDeleted', data: identity };

const dropNonTrack: FilterRecord = {
  filterId: 'df_1JjE7f3gz8OXU6lVbUGuDhHcyKl',
  title: 'Drop non-track',
  description: 'only track events reach GA',
  if: "type != 'track'",
  enabled: true,
  actions: [{ type: 'drop_event' }],
  createTime: createdAt,
  updateTime: createdAt,
};
const filterCreated: DestinationEvent = {
  type: 'DestinationFilterCreated',
  data: { ...identity, filter: dropNonTrack },
};

function activeState(history: DestinationEvent[]) {
  const state = stateAfter(destinationDecider, history);
  if (state.status !== 'active') throw new Error(`expected an active destination, got ${state.status}`);
  return state;
}

describe('destination decider', () => {
  describe('CreateDestination', () => {
    it('creates a disabled destination listing every catalog setting, defaults filled in', () => {
      const { state } = given(destinationDecider).when(createCommand).then([destinationCreated]);
      expect(state).toEqual({
        status: 'active',
        destination: { ...requested, config: fullConfig },
        filters: [],
        replays: [],
        pendingRedriveIds: [],
      });
    });

    it('keeps the values the client sent over the defaults, falsy ones included', () => {
      const config = { trackingId: 'UA-1', anonymizeIp: true, siteSpeedSampleRate: 0 };
      given(destinationDecider)
        .when({ ...createCommand, destination: { ...requested, config } })
        .then([
          { type: 'DestinationCreated', data: { ...requested, config: { ...config, dimensions: {} } } },
        ]);
    });

    it('gives each destination its own copy of an object default', () => {
      const { events } = given(destinationDecider).when(createCommand).then([destinationCreated]);
      const config = (events[0].data as DestinationRecord).config;
      expect(config.dimensions).toEqual({});
      expect(config.dimensions).not.toBe(settings[2].defaultValue);
    });

    it('refuses settings the catalog entry does not have, naming them and the known ones', () => {
      given(destinationDecider)
        .when({
          ...createCommand,
          destination: { ...requested, config: { trackingId: 'UA-1', colour: 'red', size: 3 } },
        })
        .thenThrows(
          'invalid_argument',
          'destination.config has unknown settings: colour, size; known: trackingId, anonymizeIp, dimensions, siteSpeedSampleRate',
        );
    });

    it('lets a disabled destination leave a required setting empty', () => {
      given(destinationDecider)
        .when({ ...createCommand, destination: { ...requested, config: {} } })
        .then([
          { type: 'DestinationCreated', data: { ...requested, config: { ...fullConfig, trackingId: '' } } },
        ]);
    });

    it.each<[string, Record<string, unknown>]>([
      ['left at its empty default', {}],
      ['sent as ""', { trackingId: '' }],
      ['sent as null', { trackingId: null }],
    ])('refuses an enabled destination whose required setting is %s', (_case, config) => {
      given(destinationDecider)
        .when({ ...createCommand, destination: { ...requested, enabled: true, config } })
        .thenThrows('invalid_argument', 'an enabled destination needs its required settings: trackingId');
    });

    it('counts a required setting with a non-empty default as set, and false or 0 as values', () => {
      const config = { trackingId: 'UA-1', siteSpeedSampleRate: 0 };
      given(destinationDecider)
        .when({ ...createCommand, destination: { ...requested, enabled: true, config } })
        .then([
          {
            type: 'DestinationCreated',
            data: { ...requested, enabled: true, config: { ...fullConfig, ...config } },
          },
        ]);
    });

    it('names every missing required setting', () => {
      given(destinationDecider)
        .when({
          ...createCommand,
          destination: { ...requested, enabled: true, config: { siteSpeedSampleRate: null } },
        })
        .thenThrows('invalid_argument', 'trackingId, siteSpeedSampleRate');
    });

    it('refuses a second destination of the same catalog type on the source with already_exists', () => {
      given(destinationDecider, [destinationCreated])
        .when(createCommand)
        .thenThrows(
          'already_exists',
          'workspaces/ws/sources/js/destinations/google-analytics already exists',
        );
    });

    it('re-creates a deleted destination from scratch: new config, no old filters', () => {
      const config = { trackingId: 'UA-2' };
      const { state } = given(destinationDecider, [destinationCreated, filterCreated, destinationDeleted])
        .when({ ...createCommand, destination: { ...requested, config } })
        .then([{ type: 'DestinationCreated', data: { ...requested, config: { ...fullConfig, ...config } } }]);
      expect(state.status === 'active' && state.filters).toEqual([]);
    });
  });

  describe('UpdateDestination', () => {
    it('merges config by setting name: settings not named keep their values', () => {
      const changes = { config: { anonymizeIp: true } };
      const { state } = given(destinationDecider, [destinationCreated])
        .when({ type: 'UpdateDestination', changes, settings, now: later })
        .then([{ type: 'DestinationUpdated', data: { ...identity, changes, updateTime: later } }]);
      expect(state.status === 'active' && state.destination).toEqual({
        ...requested,
        config: { ...fullConfig, anonymizeIp: true },
        updateTime: later,
      });
    });

    it('changes enabled and connection mode without touching the config', () => {
      const changes = { enabled: true, connectionMode: 'DEVICE' as const };
      const { state } = given(destinationDecider, [destinationCreated])
        .when({ type: 'UpdateDestination', changes, settings, now: later })
        .then([{ type: 'DestinationUpdated', data: { ...identity, changes, updateTime: later } }]);
      expect(state.status === 'active' && state.destination).toEqual({
        ...requested,
        ...changes,
        config: fullConfig,
        updateTime: later,
      });
    });

    it('disables an enabled destination when the mask names enabled and the body leaves it out (false)', () => {
      const enabled: DestinationEvent = {
        type: 'DestinationUpdated',
        data: { ...identity, changes: { enabled: true }, updateTime: later },
      };
      const { state } = given(destinationDecider, [destinationCreated, enabled])
        .when({ type: 'UpdateDestination', changes: { enabled: false }, settings, now: later })
        .then([
          {
            type: 'DestinationUpdated',
            data: { ...identity, changes: { enabled: false }, updateTime: later },
          },
        ]);
      expect(state.status === 'active' && state.destination.enabled).toBe(false);
    });

    it('refuses unknown settings in a config change, even on a disabled destination', () => {
      given(destinationDecider, [destinationCreated])
        .when({ type: 'UpdateDestination', changes: { config: { nope: 1 } }, settings, now: later })
        .thenThrows('invalid_argument', 'destination.config has unknown settings: nope');
    });

    it('refuses enabling a destination whose required setting is still empty', () => {
      const emptyRequired: DestinationEvent = {
        type: 'DestinationCreated',
        data: { ...requested, config: { ...fullConfig, trackingId: '' } },
      };
      given(destinationDecider, [emptyRequired])
        .when({ type: 'UpdateDestination', changes: { enabled: true }, settings, now: later })
        .thenThrows('invalid_argument', 'an enabled destination needs its required settings: trackingId');
    });

    it('allows enabling and filling the required setting in one update', () => {
      const emptyRequired: DestinationEvent = {
        type: 'DestinationCreated',
        data: { ...requested, config: { ...fullConfig, trackingId: '' } },
      };
      const changes = { enabled: true, config: { trackingId: 'UA-3' } };
      given(destinationDecider, [emptyRequired])
        .when({ type: 'UpdateDestination', changes, settings, now: later })
        .then([{ type: 'DestinationUpdated', data: { ...identity, changes, updateTime: later } }]);
    });

    it('refuses clearing a required setting of an enabled destination, but allows it once disabled', () => {
      const enabled: DestinationEvent = {
        type: 'DestinationUpdated',
        data: { ...identity, changes: { enabled: true }, updateTime: later },
      };
      given(destinationDecider, [destinationCreated, enabled])
        .when({ type: 'UpdateDestination', changes: { config: { trackingId: '' } }, settings, now: later })
        .thenThrows('invalid_argument', 'required settings: trackingId');
      const clearing = { enabled: false, config: { trackingId: '' } };
      given(destinationDecider, [destinationCreated, enabled])
        .when({ type: 'UpdateDestination', changes: clearing, settings, now: later })
        .then([{ type: 'DestinationUpdated', data: { ...identity, changes: clearing, updateTime: later } }]);
    });

    it('refuses to update a destination that does not exist, or was deleted, with not_found', () => {
      const update: DestinationCommand = {
        type: 'UpdateDestination',
        changes: { enabled: true },
        settings,
        now: later,
      };
      given(destinationDecider).when(update).thenThrows('not_found', 'destination not found');
      given(destinationDecider, [destinationCreated, destinationDeleted])
        .when(update)
        .thenThrows('not_found', 'destination not found');
    });
  });

  describe('DeleteDestination', () => {
    it('deletes an active destination', () => {
      const { state } = given(destinationDecider, [destinationCreated, filterCreated])
        .when({ type: 'DeleteDestination' })
        .then([destinationDeleted]);
      expect(state).toEqual({ status: 'deleted' });
    });

    it('refuses to delete a destination that does not exist, or twice, with not_found', () => {
      given(destinationDecider)
        .when({ type: 'DeleteDestination' })
        .thenThrows('not_found', 'destination not found');
      given(destinationDecider, [destinationCreated, destinationDeleted])
        .when({ type: 'DeleteDestination' })
        .thenThrows('not_found', 'destination not found');
    });
  });

  describe('filters', () => {
    describe('CreateFilter', () => {
      it('adds a filter to the destination', () => {
        const { state } = given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter: dropNonTrack })
          .then([filterCreated]);
        expect(state.status === 'active' && state.filters).toEqual([dropNonTrack]);
      });

      it('keeps filters in the order they were created', () => {
        const second = { ...dropNonTrack, filterId: 'df_2', if: 'all' };
        const { state } = given(destinationDecider, [destinationCreated, filterCreated])
          .when({ type: 'CreateFilter', filter: second })
          .then([{ type: 'DestinationFilterCreated', data: { ...identity, filter: second } }]);
        expect(state.status === 'active' && state.filters.map((filter) => filter.filterId)).toEqual([
          dropNonTrack.filterId,
          'df_2',
        ]);
      });

      it('refuses a second filter with the id of an existing one with already_exists', () => {
        given(destinationDecider, [destinationCreated, filterCreated])
          .when({ type: 'CreateFilter', filter: { ...dropNonTrack, title: 'copy' } })
          .thenThrows('already_exists', dropNonTrack.filterId);
      });

      it('refuses a filter on a destination that does not exist with not_found', () => {
        given(destinationDecider)
          .when({ type: 'CreateFilter', filter: dropNonTrack })
          .thenThrows('not_found', 'destination not found');
        given(destinationDecider, [destinationCreated, destinationDeleted])
          .when({ type: 'CreateFilter', filter: dropNonTrack })
          .thenThrows('not_found', 'destination not found');
      });

      it.each(['', '   '])('refuses a blank `if` (%j)', (condition) => {
        given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter: { ...dropNonTrack, if: condition } })
          .thenThrows('invalid_argument', 'filter.if is required');
      });

      it('refuses a non-string `if`', () => {
        given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter: { ...dropNonTrack, if: 42 as never } })
          .thenThrows('invalid_argument', 'filter.if is required');
      });

      it('refuses a filter without actions, or with actions that are not a list', () => {
        given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter: { ...dropNonTrack, actions: [] } })
          .thenThrows('invalid_argument', 'filter.actions must list at least one action');
        given(destinationDecider, [destinationCreated])
          .when({
            type: 'CreateFilter',
            filter: { ...dropNonTrack, actions: { type: 'drop_event' } as never },
          })
          .thenThrows('invalid_argument', 'filter.actions must list at least one action');
      });

      const fields = {
        context: { fields: ['ip'] },
        properties: { fields: ['email'] },
        traits: { fields: [] },
      };
      it.each<[string, FilterAction]>([
        ['drop_event', { type: 'drop_event' }],
        ['sample_event at 0', { type: 'sample_event', percent: 0, path: 'userId' }],
        ['sample_event at 0.6', { type: 'sample_event', percent: 0.6, path: 'userId' }],
        ['sample_event at 1', { type: 'sample_event', percent: 1 }],
        ['whitelist_fields', { type: 'whitelist_fields', fields }],
        ['blacklist_fields (C1 spelling)', { type: 'blacklist_fields', fields }],
        [
          'blocklist_fields (docs spelling)',
          { type: 'blocklist_fields', fields: { properties: { fields: ['email'] } } },
        ],
        ['an empty fields object', { type: 'whitelist_fields', fields: {} }],
      ])('accepts the action %s and stores it as sent', (_case, action) => {
        const filter = { ...dropNonTrack, actions: [action] };
        const { state } = given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter })
          .then([{ type: 'DestinationFilterCreated', data: { ...identity, filter } }]);
        expect(state.status === 'active' && state.filters[0].actions).toEqual([action]);
      });

      it.each<[string, unknown, string]>([
        [
          'an unknown type',
          { type: 'drop_property' },
          'filter.actions[0].type must be one of drop_event, sample_event',
        ],
        ['a missing type', { percent: 0.5 }, 'filter.actions[0].type must be one of'],
        ['a null action', null, 'filter.actions[0].type must be one of'],
        ['a type in upper case', { type: 'DROP_EVENT' }, 'filter.actions[0].type must be one of'],
        [
          'a sample percent below 0',
          { type: 'sample_event', percent: -0.01 },
          'filter.actions[0].percent must be a number between 0 and 1',
        ],
        [
          'a sample percent above 1',
          { type: 'sample_event', percent: 1.5 },
          'filter.actions[0].percent must be a number between 0 and 1',
        ],
        [
          'a sample percent given as 60 (per cent)',
          { type: 'sample_event', percent: 60 },
          'percent must be a number between 0 and 1',
        ],
        [
          'a sample percent as a string',
          { type: 'sample_event', percent: '0.5' },
          'percent must be a number between 0 and 1',
        ],
        [
          'a sample without percent',
          { type: 'sample_event', path: 'userId' },
          'percent must be a number between 0 and 1',
        ],
        ['fields missing', { type: 'whitelist_fields' }, 'filter.actions[0].fields must be an object'],
        [
          'fields null',
          { type: 'blacklist_fields', fields: null },
          'filter.actions[0].fields must be an object',
        ],
        [
          'fields as a list',
          { type: 'blocklist_fields', fields: ['email'] },
          'filter.actions[0].fields must be an object',
        ],
        [
          'fields as a string',
          { type: 'whitelist_fields', fields: 'email' },
          'filter.actions[0].fields must be an object',
        ],
      ])('refuses an action with %s', (_case, action, message) => {
        given(destinationDecider, [destinationCreated])
          .when({ type: 'CreateFilter', filter: { ...dropNonTrack, actions: [action as FilterAction] } })
          .thenThrows('invalid_argument', message);
      });

      it('names the index of the bad action among good ones', () => {
        given(destinationDecider, [destinationCreated])
          .when({
            type: 'CreateFilter',
            filter: {
              ...dropNonTrack,
              actions: [{ type: 'drop_event' }, { type: 'sample_event', percent: 2 }],
            },
          })
          .thenThrows('invalid_argument', 'filter.actions[1].percent');
      });
    });

    describe('UpdateFilter', () => {
      it('changes the named fields, keeps the others, and stamps the update time', () => {
        const changes = {
          title: 'Sample',
          enabled: false,
          actions: [{ type: 'sample_event', percent: 0.25 }],
        };
        const { state } = given(destinationDecider, [destinationCreated, filterCreated])
          .when({ type: 'UpdateFilter', filterId: dropNonTrack.filterId, changes, now: later })
          .then([
            {
              type: 'DestinationFilterUpdated',
              data: { ...identity, filterId: dropNonTrack.filterId, changes, updateTime: later },
            },
          ]);
        expect(state.status === 'active' && state.filters).toEqual([
          { ...dropNonTrack, ...changes, updateTime: later },
        ]);
      });

      it('updates only the filter it names', () => {
        const other = { ...dropNonTrack, filterId: 'df_other' };
        const { state } = given(destinationDecider, [
          destinationCreated,
          filterCreated,
          { type: 'DestinationFilterCreated', data: { ...identity, filter: other } },
        ])
          .when({ type: 'UpdateFilter', filterId: 'df_other', changes: { if: 'all' }, now: later })
          .then([
            {
              type: 'DestinationFilterUpdated',
              data: { ...identity, filterId: 'df_other', changes: { if: 'all' }, updateTime: later },
            },
          ]);
        expect(state.status === 'active' && state.filters).toEqual([
          dropNonTrack,
          { ...other, if: 'all', updateTime: later },
        ]);
      });

      it('validates the filter as it would be after the change', () => {
        given(destinationDecider, [destinationCreated, filterCreated])
          .when({ type: 'UpdateFilter', filterId: dropNonTrack.filterId, changes: { if: '' }, now: later })
          .thenThrows('invalid_argument', 'filter.if is required');
        given(destinationDecider, [destinationCreated, filterCreated])
          .when({
            type: 'UpdateFilter',
            filterId: dropNonTrack.filterId,
            changes: { actions: [] },
            now: later,
          })
          .thenThrows('invalid_argument', 'filter.actions must list at least one action');
        given(destinationDecider, [destinationCreated, filterCreated])
          .when({
            type: 'UpdateFilter',
            filterId: dropNonTrack.filterId,
            changes: { actions: [{ type: 'whitelist_fields', fields: [] }] },
            now: later,
          })
          .thenThrows('invalid_argument', 'filter.actions[0].fields must be an object');
      });

      it('refuses an unknown filter, or one of a missing destination, with not_found', () => {
        given(destinationDecider, [destinationCreated, filterCreated])
          .when({ type: 'UpdateFilter', filterId: 'df_missing', changes: { title: 'x' }, now: later })
          .thenThrows('not_found', 'filter df_missing not found');
        given(destinationDecider)
          .when({
            type: 'UpdateFilter',
            filterId: dropNonTrack.filterId,
            changes: { title: 'x' },
            now: later,
          })
          .thenThrows('not_found', 'destination not found');
      });
    });

    describe('DeleteFilter', () => {
      it('removes the filter and keeps the others', () => {
        const other = { ...dropNonTrack, filterId: 'df_other' };
        const { state } = given(destinationDecider, [
          destinationCreated,
          filterCreated,
          { type: 'DestinationFilterCreated', data: { ...identity, filter: other } },
        ])
          .when({ type: 'DeleteFilter', filterId: dropNonTrack.filterId })
          .then([
            { type: 'DestinationFilterDeleted', data: { ...identity, filterId: dropNonTrack.filterId } },
          ]);
        expect(state.status === 'active' && state.filters).toEqual([other]);
      });

      it('refuses an unknown or already deleted filter with not_found', () => {
        given(destinationDecider, [destinationCreated])
          .when({ type: 'DeleteFilter', filterId: dropNonTrack.filterId })
          .thenThrows('not_found', `filter ${dropNonTrack.filterId} not found`);
        given(destinationDecider, [
          destinationCreated,
          filterCreated,
          { type: 'DestinationFilterDeleted', data: { ...identity, filterId: dropNonTrack.filterId } },
        ])
          .when({ type: 'DeleteFilter', filterId: dropNonTrack.filterId })
          .thenThrows('not_found', `filter ${dropNonTrack.filterId} not found`);
      });
    });
  });

  it('ignores changes to a destination that is not active when folding', () => {
    expect(
      stateAfter(destinationDecider, [
        destinationCreated,
        destinationDeleted,
        filterCreated,
        { type: 'DestinationUpdated', data: { ...identity, changes: { enabled: true }, updateTime: later } },
      ]),
    ).toEqual({ status: 'deleted' });
    expect(activeState([destinationCreated]).destination.config).toEqual(fullConfig);
  });
});
