// A source function is a source that runs one of the workspace's SOURCE functions, with values for
// the settings it declares (docs/functions.md §1, §2).
import { given } from '../testing/given-when-then';
import { SettingDefinition } from '../shared/instance-settings';
import { DEFAULT_SCHEMA_CONFIG } from './schema-config';
import { SourceCommand, sourceDecider } from './source.decider';
import { SourceEvent, SourceRecord } from './source.events';

const functionId = 'sfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ';
const functionSettings: SettingDefinition[] = [
  { name: 'sharedSecret', required: true, defaultValue: '' },
  { name: 'tag', required: false, defaultValue: '' },
];
const shopSource: SourceRecord = {
  workspaceSlug: 'ws',
  sourceSlug: 'shop',
  sourceId: 'src_shop',
  catalogName: `catalog/sources/${functionId}`,
  displayName: 'shop',
  writeKey: 'LxKXARX9IuqR9v0gn7y2Fw1iHi0ephbF',
  createTime: '2026-11-27T12:00:00.000Z',
  functionId,
  functionConfig: { sharedSecret: 'enc:v1:secret' },
};
const identity = { workspaceSlug: 'ws', sourceSlug: 'shop', sourceId: 'src_shop' };
const createShop: SourceCommand = {
  type: 'CreateSource',
  source: shopSource,
  catalogSourceExists: true,
  workspaceExists: true,
  functionSettings,
};
const shopCreated: SourceEvent = {
  type: 'SourceCreated',
  data: {
    ...shopSource,
    functionConfig: { sharedSecret: 'enc:v1:secret', tag: '' },
    schemaConfig: DEFAULT_SCHEMA_CONFIG,
  },
};

describe('source decider: source functions', () => {
  it('creates the source with every declared setting', () => {
    given(sourceDecider).when(createShop).then([shopCreated]);
  });

  it('refuses a missing required setting and one the function does not declare', () => {
    given(sourceDecider)
      .when({ ...createShop, source: { ...shopSource, functionConfig: {} } })
      .thenThrows('invalid_argument', 'source.function_config needs the required settings: sharedSecret');
    given(sourceDecider)
      .when({ ...createShop, source: { ...shopSource, functionConfig: { sharedSecret: 'x', other: 'y' } } })
      .thenThrows('invalid_argument', 'source.function_config has unknown settings: other');
  });

  it('replaces the function config on update, checked again', () => {
    const update = (functionConfig: Record<string, unknown>): SourceCommand => ({
      type: 'UpdateSource',
      changes: { functionConfig },
      functionSettings,
    });
    const { state } = given(sourceDecider, [shopCreated])
      .when(update({ sharedSecret: 'enc:v1:secret', tag: 'x' }))
      .then([
        {
          type: 'SourceUpdated',
          data: { ...identity, changes: { functionConfig: { sharedSecret: 'enc:v1:secret', tag: 'x' } } },
        },
      ]);
    expect(state.status === 'active' && state.source.functionConfig).toEqual({
      sharedSecret: 'enc:v1:secret',
      tag: 'x',
    });
    given(sourceDecider, [shopCreated])
      .when(update({ sharedSecret: '', tag: 'x' }))
      .thenThrows('invalid_argument', 'needs the required settings: sharedSecret');
  });

  it('refuses a function config on a source that runs no function', () => {
    const { functionId: _id, functionConfig: _config, ...plainSource } = shopSource;
    given(sourceDecider, [
      {
        type: 'SourceCreated',
        data: {
          ...plainSource,
          catalogName: 'catalog/sources/javascript',
          schemaConfig: DEFAULT_SCHEMA_CONFIG,
        },
      },
    ])
      .when({ type: 'UpdateSource', changes: { functionConfig: { tag: 'x' } } })
      .thenThrows('invalid_argument', 'runs no function: it has no function_config');
  });
});
