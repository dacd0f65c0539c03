// A destination function is a destination whose settings are a function's; an insert function is an
// instance of an INSERT_DESTINATION function on a destination, kept on the destination's stream.
import { given, stateAfter } from '../testing/given-when-then';
import { DestinationCommand, destinationDecider, SettingDefinition } from './destination.decider';
import { DestinationEvent, DestinationRecord, InsertFunctionRecord } from './destination.events';

const identity = {
  workspaceSlug: 'ws',
  sourceSlug: 'js',
  sourceId: 'src_first',
  destinationSlug: 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ',
};
const createdAt = '2026-11-27T12:00:00.000Z';
const later = '2026-11-27T12:05:00.000Z';
const functionSettings: SettingDefinition[] = [
  { name: 'apiKey', required: true, defaultValue: '' },
  { name: 'dropEvent', required: false, defaultValue: '' },
];
const functionDestination: DestinationRecord = {
  ...identity,
  catalogSlug: identity.destinationSlug,
  displayName: 'Order relay',
  connectionMode: 'CLOUD',
  enabled: false,
  config: { apiKey: 'enc:v1:secret' },
  createTime: createdAt,
  updateTime: createdAt,
};
const destinationCreated: DestinationEvent = {
  type: 'DestinationCreated',
  data: { ...functionDestination, config: { apiKey: 'enc:v1:secret', dropEvent: '' } },
};
const insertFunction: InsertFunctionRecord = {
  functionId: 'ifnd_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ',
  enabled: true,
  config: { apiKey: 'enc:v1:other' },
  createTime: later,
  updateTime: later,
};
const insertFunctionCreated: DestinationEvent = {
  type: 'DestinationInsertFunctionCreated',
  data: {
    ...identity,
    insertFunction: { ...insertFunction, config: { apiKey: 'enc:v1:other', dropEvent: '' } },
  },
};

describe('destination decider: functions', () => {
  describe('a destination function', () => {
    it('needs its required settings even when created disabled', () => {
      given(destinationDecider)
        .when({
          type: 'CreateDestination',
          destination: { ...functionDestination, config: {} },
          settings: functionSettings,
          requiredWhenDisabled: true,
        })
        .thenThrows('invalid_argument', 'a destination function needs its required settings: apiKey');
    });

    it('is created with every declared setting', () => {
      given(destinationDecider)
        .when({
          type: 'CreateDestination',
          destination: functionDestination,
          settings: functionSettings,
          requiredWhenDisabled: true,
        })
        .then([destinationCreated]);
    });

    it('refuses an update that empties a required setting, and a setting the function does not declare', () => {
      const update = (config: Record<string, unknown>): DestinationCommand => ({
        type: 'UpdateDestination',
        changes: { config },
        settings: functionSettings,
        requiredWhenDisabled: true,
        now: later,
      });
      given(destinationDecider, [destinationCreated])
        .when(update({ apiKey: '' }))
        .thenThrows('invalid_argument', 'needs its required settings: apiKey');
      given(destinationDecider, [destinationCreated])
        .when(update({ region: 'eu' }))
        .thenThrows('invalid_argument', 'destination.config has unknown settings: region');
    });
  });

  describe('insert functions', () => {
    const create: DestinationCommand = {
      type: 'CreateInsertFunction',
      insertFunction,
      settings: functionSettings,
    };

    it('keeps the instance on the destination, every declared setting filled in', () => {
      const { state } = given(destinationDecider, [destinationCreated])
        .when(create)
        .then([insertFunctionCreated]);
      expect(state.status === 'active' && state.destination.insertFunction).toEqual({
        ...insertFunction,
        config: { apiKey: 'enc:v1:other', dropEvent: '' },
      });
    });

    it('refuses a second insert function on one destination', () => {
      given(destinationDecider, [destinationCreated, insertFunctionCreated])
        .when({ ...create, insertFunction: { ...insertFunction, functionId: 'ifnd_other' } })
        .thenThrows('already_exists', 'already has the insert function ifnd_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ');
    });

    it('refuses a missing required setting and an unknown one', () => {
      given(destinationDecider, [destinationCreated])
        .when({ ...create, insertFunction: { ...insertFunction, config: {} } })
        .thenThrows('invalid_argument', 'insert_function.config needs the required settings: apiKey');
      given(destinationDecider, [destinationCreated])
        .when({ ...create, insertFunction: { ...insertFunction, config: { apiKey: 'x', nope: 1 } } })
        .thenThrows('invalid_argument', 'insert_function.config has unknown settings: nope');
    });

    it('needs the destination', () => {
      given(destinationDecider).when(create).thenThrows('not_found', 'destination not found');
    });

    it('merges config changes by name and changes enabled', () => {
      const updated: DestinationEvent = {
        type: 'DestinationInsertFunctionUpdated',
        data: {
          ...identity,
          functionId: insertFunction.functionId,
          changes: { enabled: false, config: { dropEvent: 'Order Placed' } },
          updateTime: '2026-11-27T13:00:00.000Z',
        },
      };
      const { state } = given(destinationDecider, [destinationCreated, insertFunctionCreated])
        .when({
          type: 'UpdateInsertFunction',
          functionId: insertFunction.functionId,
          changes: { enabled: false, config: { dropEvent: 'Order Placed' } },
          settings: functionSettings,
          now: '2026-11-27T13:00:00.000Z',
        })
        .then([updated]);
      expect(state.status === 'active' && state.destination.insertFunction).toEqual({
        ...insertFunction,
        enabled: false,
        config: { apiKey: 'enc:v1:other', dropEvent: 'Order Placed' },
        updateTime: '2026-11-27T13:00:00.000Z',
      });
    });

    it('refuses an update that empties a required setting, or names another function', () => {
      given(destinationDecider, [destinationCreated, insertFunctionCreated])
        .when({
          type: 'UpdateInsertFunction',
          functionId: insertFunction.functionId,
          changes: { config: { apiKey: null } },
          settings: functionSettings,
          now: later,
        })
        .thenThrows('invalid_argument', 'needs the required settings: apiKey');
      given(destinationDecider, [destinationCreated, insertFunctionCreated])
        .when({ type: 'DeleteInsertFunction', functionId: 'ifnd_other' })
        .thenThrows('not_found', 'insert-functions/ifnd_other not found');
    });

    it('deletes the instance, after which another may be added', () => {
      const deleted: DestinationEvent = {
        type: 'DestinationInsertFunctionDeleted',
        data: { ...identity, functionId: insertFunction.functionId },
      };
      const { state } = given(destinationDecider, [destinationCreated, insertFunctionCreated])
        .when({ type: 'DeleteInsertFunction', functionId: insertFunction.functionId })
        .then([deleted]);
      expect(state.status === 'active' && 'insertFunction' in state.destination).toBe(false);
      given(destinationDecider, [destinationCreated, insertFunctionCreated, deleted])
        .when(create)
        .then([insertFunctionCreated]);
    });

    it('keeps the insert function across destination updates', () => {
      const state = stateAfter(destinationDecider, [
        destinationCreated,
        insertFunctionCreated,
        {
          type: 'DestinationUpdated',
          data: { ...identity, changes: { enabled: true }, updateTime: later },
        },
      ]);
      expect(state.status === 'active' && state.destination.insertFunction?.functionId).toBe(
        insertFunction.functionId,
      );
    });
  });
});
