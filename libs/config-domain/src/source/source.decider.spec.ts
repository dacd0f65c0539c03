import { given, stateAfter } from '../testing/given-when-then';
import {
  DEFAULT_SCHEMA_CONFIG,
  SchemaConfig,
  SCHEMA_CONFIG_ZERO_VALUES,
  schemaConfigValueProblem,
} from './schema-config';
import { SourceCommand, sourceDecider } from './source.decider';
import { SourceEvent, SourceRecord, writeKeysOf } from './source.events';

const jsSource: SourceRecord = {
  workspaceSlug: 'ws',
  sourceSlug: 'js',
  sourceId: 'src_first',
  catalogName: 'catalog/sources/javascript',
  displayName: 'js',
  writeKey: 'LxKXARX9IuqR9v0gn7y2Fw1iHi0ephbF',
  createTime: '2018-09-12T21:15:54.169Z',
};
const identity = { workspaceSlug: 'ws', sourceSlug: 'js', sourceId: 'src_first' };
const sourceCreated: SourceEvent = {
  type: 'SourceCreated',
  data: { ...jsSource, schemaConfig: DEFAULT_SCHEMA_CONFIG },
};
const sourceDeleted: SourceEvent = { type: 'SourceDeleted', data: identity };
const createJs: SourceCommand = {
  type: 'CreateSource',
  source: jsSource,
  catalogSourceExists: true,
  workspaceExists: true,
};

const schemaConfigFields = Object.keys(DEFAULT_SCHEMA_CONFIG) as (keyof SchemaConfig)[];

const OTHER_SOURCES = ['violations', 'blocked'];

describe('source decider', () => {
  describe('CreateSource', () => {
    it('creates a source whose schema config lets everything through', () => {
      const { state } = given(sourceDecider).when(createJs).then([sourceCreated]);
      expect(state).toEqual({ status: 'active', source: jsSource, schemaConfig: DEFAULT_SCHEMA_CONFIG });
      expect(
        Object.values(DEFAULT_SCHEMA_CONFIG).every(
          (value) => value === true || value === '' || value === 'ALLOW',
        ),
      ).toBe(true);
    });

    it('refuses a duplicate with already_exists, naming the source', () => {
      given(sourceDecider, [sourceCreated])
        .when({ ...createJs, source: { ...jsSource, sourceId: 'src_second' } })
        .thenThrows('already_exists', 'workspaces/ws/sources/js already exists');
    });

    it('refuses a source in a workspace that does not exist with not_found', () => {
      given(sourceDecider)
        .when({ ...createJs, workspaceExists: false })
        .thenThrows('not_found', 'workspaces/ws not found');
    });

    it('reports the missing workspace before a duplicate: the name cannot exist there', () => {
      given(sourceDecider, [sourceCreated])
        .when({ ...createJs, workspaceExists: false })
        .thenThrows('not_found', 'workspaces/ws not found');
    });

    it('refuses a catalog name the catalog does not know with invalid_argument', () => {
      given(sourceDecider)
        .when({
          ...createJs,
          source: { ...jsSource, catalogName: 'catalog/sources/nope' },
          catalogSourceExists: false,
        })
        .thenThrows('invalid_argument', 'source.catalog_name "catalog/sources/nope" is not in the catalog');
    });

    it('re-creates a deleted source under a new id, with a fresh default schema config', () => {
      const reborn = { ...jsSource, sourceId: 'src_second', writeKey: 'b'.repeat(32) };
      const tightened: SourceEvent = {
        type: 'SchemaConfigUpdated',
        data: { ...identity, changes: { allow_unplanned_track_events: false } },
      };
      const { state } = given(sourceDecider, [sourceCreated, tightened, sourceDeleted])
        .when({ ...createJs, source: reborn })
        .then([{ type: 'SourceCreated', data: { ...reborn, schemaConfig: DEFAULT_SCHEMA_CONFIG } }]);
      expect(state).toEqual({ status: 'active', source: reborn, schemaConfig: DEFAULT_SCHEMA_CONFIG });
    });
  });

  describe('UpdateSchemaConfig', () => {
    it('accepts forwarding targets that are other sources of the workspace, and "" to turn forwarding off', () => {
      const changes: Partial<SchemaConfig> = {
        forwarding_blocked_events_to: 'blocked',
        forwarding_violations_to: '',
      };
      given(sourceDecider, [sourceCreated])
        .when({ type: 'UpdateSchemaConfig', workspaceSourceSlugs: OTHER_SOURCES, changes })
        .then([{ type: 'SchemaConfigUpdated', data: { ...identity, changes } }]);
    });

    it.each<[string, Partial<SchemaConfig>, string]>([
      [
        'a source that does not exist',
        { forwarding_violations_to: 'ghost' },
        'forwarding_violations_to: workspaces/',
      ],
      ['the source itself', { forwarding_blocked_events_to: 'js' }, 'must name another source than js'],
    ])('refuses a forwarding target that is %s with invalid_argument', (_case, changes, message) => {
      given(sourceDecider, [sourceCreated])
        .when({ type: 'UpdateSchemaConfig', workspaceSourceSlugs: [...OTHER_SOURCES, 'js'], changes })
        .thenThrows('invalid_argument', message);
    });

    it('merges the changed fields into the current schema config', () => {
      const changes: Partial<SchemaConfig> = {
        allow_unplanned_track_events: false,
        common_track_event_on_violations: 'OMIT_PROPERTIES',
        forwarding_violations_to: 'violations',
      };
      const { state } = given(sourceDecider, [sourceCreated])
        .when({ type: 'UpdateSchemaConfig', workspaceSourceSlugs: OTHER_SOURCES, changes })
        .then([{ type: 'SchemaConfigUpdated', data: { ...identity, changes } }]);
      expect(state).toEqual({
        status: 'active',
        source: jsSource,
        schemaConfig: { ...DEFAULT_SCHEMA_CONFIG, ...changes },
      });
    });

    it('keeps earlier changes that a later update does not name', () => {
      const first: SourceEvent = {
        type: 'SchemaConfigUpdated',
        data: {
          ...identity,
          changes: { allow_unplanned_identify_traits: false, forwarding_blocked_events_to: 'blocked' },
        },
      };
      const { state } = given(sourceDecider, [sourceCreated, first])
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: { allow_unplanned_identify_traits: true },
        })
        .then([
          {
            type: 'SchemaConfigUpdated',
            data: { ...identity, changes: { allow_unplanned_identify_traits: true } },
          },
        ]);
      expect(state.status === 'active' && state.schemaConfig).toEqual({
        ...DEFAULT_SCHEMA_CONFIG,
        allow_unplanned_identify_traits: true,
        forwarding_blocked_events_to: 'blocked',
      });
    });

    it('accepts all 13 fields at their zero values, as C1 sends them (every path masked, false left out)', () => {
      const zeroes = SCHEMA_CONFIG_ZERO_VALUES as Partial<SchemaConfig>;
      const { state } = given(sourceDecider, [sourceCreated])
        .when({ type: 'UpdateSchemaConfig', workspaceSourceSlugs: OTHER_SOURCES, changes: zeroes })
        .then([{ type: 'SchemaConfigUpdated', data: { ...identity, changes: zeroes } }]);
      expect(state.status === 'active' && state.schemaConfig).toEqual(SCHEMA_CONFIG_ZERO_VALUES);
      expect(schemaConfigFields).toHaveLength(13);
    });

    it.each<[string, Partial<Record<keyof SchemaConfig, unknown>>, string]>([
      [
        'a string for a boolean',
        { allow_unplanned_track_events: 'false' },
        'allow_unplanned_track_events must be a boolean',
      ],
      [
        'a number for a boolean',
        { allow_group_traits_on_violations: 0 },
        'allow_group_traits_on_violations must be a boolean',
      ],
      [
        'a boolean for a forwarding slug',
        { forwarding_violations_to: true },
        'forwarding_violations_to must be a string',
      ],
      [
        'null for a forwarding slug',
        { forwarding_blocked_events_to: null },
        'forwarding_blocked_events_to must be a string',
      ],
      [
        'a trait action for the track action',
        { common_track_event_on_violations: 'OMIT_TRAITS' },
        'common_track_event_on_violations must be one of ALLOW, OMIT_PROPERTIES, BLOCK',
      ],
      [
        'a track action for an identify action',
        { common_identify_event_on_violations: 'OMIT_PROPERTIES' },
        'common_identify_event_on_violations must be one of ALLOW, OMIT_TRAITS, BLOCK',
      ],
      [
        'a lower-case enum value',
        { common_group_event_on_violations: 'block' },
        'common_group_event_on_violations must be one of ALLOW, OMIT_TRAITS, BLOCK',
      ],
    ])('refuses %s with invalid_argument', (_case, changes, message) => {
      given(sourceDecider, [sourceCreated])
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: changes as Partial<SchemaConfig>,
        })
        .thenThrows('invalid_argument', `schema_config.${message}`);
    });

    it('refuses the whole update when one value is bad, even after good ones', () => {
      given(sourceDecider, [sourceCreated])
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: { allow_unplanned_track_events: false, common_track_event_on_violations: 'NOPE' as never },
        })
        .thenThrows('invalid_argument', 'common_track_event_on_violations');
    });

    it('refuses a field that is not part of the schema config with invalid_argument', () => {
      given(sourceDecider, [sourceCreated])
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: { allow_everything: true } as never,
        })
        .thenThrows('invalid_argument', 'allow_everything');
    });

    it('refuses to update the schema config of a source that does not exist, or no longer does', () => {
      given(sourceDecider)
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: { allow_unplanned_track_events: false },
        })
        .thenThrows('not_found', 'source not found');
      given(sourceDecider, [sourceCreated, sourceDeleted])
        .when({
          type: 'UpdateSchemaConfig',
          workspaceSourceSlugs: OTHER_SOURCES,
          changes: { allow_unplanned_track_events: false },
        })
        .thenThrows('not_found', 'source not found');
    });
  });

  describe('allowed origins (UpdateSource)', () => {
    it('creates a source with its allowed origins normalized and deduplicated', () => {
      const command: SourceCommand = {
        ...createJs,
        source: { ...jsSource, allowedOrigins: ['HTTPS://Shop.Example.com/', 'https://shop.example.com'] },
      };
      const { state } = given(sourceDecider)
        .when(command)
        .then([
          {
            type: 'SourceCreated',
            data: {
              ...jsSource,
              allowedOrigins: ['https://shop.example.com'],
              schemaConfig: DEFAULT_SCHEMA_CONFIG,
            },
          },
        ]);
      expect(state).toMatchObject({ source: { allowedOrigins: ['https://shop.example.com'] } });
    });

    it('replaces the list, and an empty list means any origin again', () => {
      const restricted: SourceEvent = {
        type: 'SourceUpdated',
        data: {
          ...identity,
          changes: { allowedOrigins: ['https://*.example.com', 'http://localhost:8080'] },
        },
      };
      const { state } = given(sourceDecider, [sourceCreated])
        .when({
          type: 'UpdateSource',
          changes: { allowedOrigins: ['https://*.Example.com', 'http://localhost:8080'] },
        })
        .then([restricted]);
      expect(state).toMatchObject({
        source: { allowedOrigins: ['https://*.example.com', 'http://localhost:8080'] },
      });
      const { state: reopened } = given(sourceDecider, [sourceCreated, restricted])
        .when({ type: 'UpdateSource', changes: { allowedOrigins: [] } })
        .then([{ type: 'SourceUpdated', data: { ...identity, changes: { allowedOrigins: [] } } }]);
      expect(reopened).toMatchObject({ source: { ...jsSource, allowedOrigins: [] } });
    });

    it('refuses a bad entry, naming it, and changes nothing', () => {
      given(sourceDecider, [sourceCreated])
        .when({
          type: 'UpdateSource',
          changes: { allowedOrigins: ['https://ok.test', 'https://x.test/path'] },
        })
        .thenThrows('invalid_argument', 'source.allowed_origins[1]');
      given(sourceDecider)
        .when({ ...createJs, source: { ...jsSource, allowedOrigins: ['example.com'] } })
        .thenThrows('invalid_argument', 'source.allowed_origins[0]');
      given(sourceDecider, [sourceCreated])
        .when({ type: 'UpdateSource', changes: { allowedOrigins: 'https://x.test' as unknown as string[] } })
        .thenThrows('invalid_argument', 'must be a list');
    });

    it('refuses to update a source that does not exist or was deleted', () => {
      given(sourceDecider)
        .when({ type: 'UpdateSource', changes: { allowedOrigins: [] } })
        .thenThrows('not_found', 'source not found');
      given(sourceDecider, [sourceCreated, sourceDeleted])
        .when({ type: 'UpdateSource', changes: { allowedOrigins: [] } })
        .thenThrows('not_found', 'source not found');
    });
  });

  describe('DeleteSource', () => {
    it('deletes an active source', () => {
      const { state } = given(sourceDecider, [sourceCreated])
        .when({ type: 'DeleteSource' })
        .then([sourceDeleted]);
      expect(state).toEqual({ status: 'deleted' });
    });

    it('refuses to delete a source that does not exist, or twice, with not_found', () => {
      given(sourceDecider).when({ type: 'DeleteSource' }).thenThrows('not_found', 'source not found');
      given(sourceDecider, [sourceCreated, sourceDeleted])
        .when({ type: 'DeleteSource' })
        .thenThrows('not_found', 'source not found');
    });
  });

  it('ignores a schema-config update of a deleted source when folding', () => {
    expect(
      stateAfter(sourceDecider, [
        sourceCreated,
        sourceDeleted,
        {
          type: 'SchemaConfigUpdated',
          data: { ...identity, changes: { allow_unplanned_track_events: false } },
        },
      ]),
    ).toEqual({ status: 'deleted' });
  });
});

describe('schemaConfigValueProblem', () => {
  it.each(schemaConfigFields)('accepts the default and the zero value of %s', (field) => {
    expect(schemaConfigValueProblem(field, DEFAULT_SCHEMA_CONFIG[field])).toBeUndefined();
    expect(schemaConfigValueProblem(field, SCHEMA_CONFIG_ZERO_VALUES[field])).toBeUndefined();
  });

  it('accepts every action its field allows', () => {
    for (const action of ['ALLOW', 'OMIT_PROPERTIES', 'BLOCK']) {
      expect(schemaConfigValueProblem('common_track_event_on_violations', action)).toBeUndefined();
    }
    for (const field of [
      'common_identify_event_on_violations',
      'common_group_event_on_violations',
    ] as const) {
      for (const action of ['ALLOW', 'OMIT_TRAITS', 'BLOCK']) {
        expect(schemaConfigValueProblem(field, action)).toBeUndefined();
      }
    }
  });

  describe('write keys', () => {
    const second = 'SecondKeyXXXXXXXXXXXXXXXXXXXXXXX';
    const keyAdded: SourceEvent = {
      type: 'SourceUpdated',
      data: { ...identity, changes: { additionalWriteKeys: [second] } },
    };

    it('adds a key after the existing ones', () => {
      const { state } = given(sourceDecider, [sourceCreated])
        .when({ type: 'AddWriteKey', writeKey: second })
        .then([keyAdded]);
      expect(state.status === 'active' && writeKeysOf(state.source)).toEqual([jsSource.writeKey, second]);
    });

    it('removes the oldest key, the next one taking its place', () => {
      const { state } = given(sourceDecider, [sourceCreated, keyAdded])
        .when({ type: 'RemoveWriteKey', writeKey: jsSource.writeKey })
        .then([
          {
            type: 'SourceUpdated',
            data: { ...identity, changes: { writeKey: second, additionalWriteKeys: [] } },
          },
        ]);
      expect(state.status === 'active' && writeKeysOf(state.source)).toEqual([second]);
    });

    it('keeps the last key, refuses a key the source does not hold, and holds at most five', () => {
      given(sourceDecider, [sourceCreated])
        .when({ type: 'RemoveWriteKey', writeKey: jsSource.writeKey })
        .thenThrows('invalid_argument', 'the last write key of a source cannot be removed');
      given(sourceDecider, [sourceCreated])
        .when({ type: 'RemoveWriteKey', writeKey: second })
        .thenThrows('not_found', 'no write key');
      const four = ['k1', 'k2', 'k3', 'k4'];
      given(sourceDecider, [
        sourceCreated,
        { type: 'SourceUpdated', data: { ...identity, changes: { additionalWriteKeys: four } } },
      ])
        .when({ type: 'AddWriteKey', writeKey: 'k5' })
        .thenThrows('invalid_argument', 'at most 5 write keys');
    });
  });
});
