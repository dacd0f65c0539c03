import { given, stateAfter } from '../testing/given-when-then';
import { checkFunctionSettings, MAX_FUNCTION_SETTINGS } from './function-settings';
import { FunctionCommand, functionDecider, FunctionLimits } from './function.decider';
import { FunctionEvent } from './function.events';

const T0 = '2026-11-27T12:00:00.000Z';
const T1 = '2026-11-27T12:05:00.000Z';
const T2 = '2026-11-27T12:10:00.000Z';
const identity = { workspaceSlug: 'acme', functionId: 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ' };
const limits: FunctionLimits = { maxCodeBytes: 1_024, maxFunctions: 3 };
const CODE_V1 = 'async function onTrack(event, settings) { return event; }';
const CODE_V2 = 'async function onIdentify(event) { return event; }';
const apiKey = {
  name: 'apiKey',
  label: 'API key',
  type: 'string' as const,
  description: '',
  required: true,
  sensitive: true,
};

const create = (
  overrides: Partial<Extract<FunctionCommand, { type: 'CreateFunction' }>> = {},
): FunctionCommand => ({
  type: 'CreateFunction',
  ...identity,
  workspaceId: 'e5bdb0902b',
  kind: 'DESTINATION',
  draft: { displayName: ' Order relay ', description: '', logoUrl: '', code: CODE_V1, settings: [apiKey] },
  workspaceExists: true,
  functionsInWorkspace: 0,
  limits,
  now: T0,
  actor: 'access-tokens/4',
  ...overrides,
});

const created: FunctionEvent = {
  type: 'FunctionCreated',
  data: {
    ...identity,
    workspaceId: 'e5bdb0902b',
    type: 'DESTINATION',
    displayName: 'Order relay',
    description: '',
    logoUrl: '',
    code: CODE_V1,
    settings: [apiKey],
    createTime: T0,
    createdBy: 'access-tokens/4',
  },
};

const codeUpdated: FunctionEvent = {
  type: 'FunctionUpdated',
  data: {
    ...identity,
    changes: {},
    version: { version: 2, code: CODE_V2, settings: [apiKey], createTime: T1, createdBy: 'access-tokens/5' },
    updateTime: T1,
  },
};

const update = (changes: Record<string, unknown>, now = T1): FunctionCommand => ({
  type: 'UpdateFunction',
  changes,
  limits,
  now,
  actor: 'access-tokens/5',
});

describe('function decider', () => {
  it('creates version 1 deployed at once, the display name trimmed', () => {
    const { state } = given(functionDecider).when(create()).then([created]);
    expect(state).toMatchObject({
      status: 'active',
      function: {
        version: 1,
        deployedVersion: 1,
        code: CODE_V1,
        settings: [apiKey],
        versions: [{ version: 1, code: CODE_V1, createTime: T0, createdBy: 'access-tokens/4' }],
        updateTime: T0,
        deployTime: T0,
      },
    });
  });

  it('refuses a create in an unknown workspace, twice the same id, and past the workspace cap', () => {
    given(functionDecider)
      .when(create({ workspaceExists: false }))
      .thenThrows('not_found', 'workspaces/acme');
    given(functionDecider, [created]).when(create()).thenThrows('already_exists', identity.functionId);
    given(functionDecider)
      .when(create({ functionsInWorkspace: 3 }))
      .thenThrows('resource_exhausted', 'WORKSPACE_MAX_FUNCTIONS');
    given(functionDecider)
      .when(create({ functionsInWorkspace: 2 }))
      .then([created]);
  });

  it('refuses empty code, code past FUNCTION_MAX_CODE_BYTES counted in UTF-8 bytes, and an empty name', () => {
    const draft = (changes: object) => ({ ...(create() as { draft: object }).draft, ...changes });
    given(functionDecider)
      .when(create({ draft: draft({ code: '  ' }) as never }))
      .thenThrows('invalid_argument', 'code is required');
    // 400 characters of three bytes each: 1,200 bytes, past 1,024, though only 400 characters.
    given(functionDecider)
      .when(create({ draft: draft({ code: `// ${'€'.repeat(400)}\n${CODE_V1}` }) as never }))
      .thenThrows('invalid_argument', 'FUNCTION_MAX_CODE_BYTES');
    given(functionDecider)
      .when(create({ draft: draft({ displayName: ' ' }) as never }))
      .thenThrows('invalid_argument', 'display_name is required');
    given(functionDecider)
      .when(create({ draft: draft({ logoUrl: 'javascript:alert(1)' }) as never }))
      .thenThrows('invalid_argument', 'logo_url');
  });

  it('makes a new version when code or settings are written, not deployed until a deploy', () => {
    const { state } = given(functionDecider, [created])
      .when(update({ code: CODE_V2 }))
      .then([codeUpdated]);
    expect(state).toMatchObject({
      function: { version: 2, deployedVersion: 1, code: CODE_V2, updateTime: T1, deployTime: T0 },
    });
    const settingsOnly = given(functionDecider, [created, codeUpdated])
      .when(update({ settings: [{ name: 'region', type: 'STRING' }] }, T2))
      .then([
        {
          type: 'FunctionUpdated',
          data: {
            ...identity,
            changes: {},
            version: {
              version: 3,
              code: CODE_V2,
              settings: [
                {
                  name: 'region',
                  label: 'region',
                  type: 'string',
                  description: '',
                  required: false,
                  sensitive: false,
                },
              ],
              createTime: T2,
              createdBy: 'access-tokens/5',
            },
            updateTime: T2,
          },
        },
      ]);
    expect(settingsOnly.state).toMatchObject({ function: { version: 3, versions: [{}, {}, {}] } });
  });

  it('changes the display name without a new version', () => {
    const { state } = given(functionDecider, [created])
      .when(update({ displayName: 'Renamed' }))
      .then([
        {
          type: 'FunctionUpdated',
          data: { ...identity, changes: { displayName: 'Renamed' }, updateTime: T1 },
        },
      ]);
    expect(state).toMatchObject({ function: { displayName: 'Renamed', version: 1, deployedVersion: 1 } });
  });

  it('refuses an update of a function that does not exist or was deleted, and oversize code', () => {
    given(functionDecider)
      .when(update({ code: CODE_V2 }))
      .thenThrows('not_found', 'function not found');
    given(functionDecider, [created, { type: 'FunctionDeleted', data: identity }])
      .when(update({ code: CODE_V2 }))
      .thenThrows('not_found', 'function not found');
    given(functionDecider, [created])
      .when(update({ code: 'x'.repeat(1_025) }))
      .thenThrows('invalid_argument', 'FUNCTION_MAX_CODE_BYTES');
  });

  it('deploys the latest version, and refuses one the sandbox no longer compiles with code 9', () => {
    const { state } = given(functionDecider, [created, codeUpdated])
      .when({ type: 'DeployFunction', codeCompiles: { ok: true }, now: T2 })
      .then([{ type: 'FunctionDeployed', data: { ...identity, deployedVersion: 2, deployTime: T2 } }]);
    expect(state).toMatchObject({ function: { version: 2, deployedVersion: 2, deployTime: T2 } });
    given(functionDecider, [created, codeUpdated])
      .when({ type: 'DeployFunction', codeCompiles: { ok: false, message: 'SyntaxError (1:3)' }, now: T2 })
      .thenThrows('failed_precondition', 'SyntaxError (1:3)');
  });

  it('restores an earlier version as a new one', () => {
    const { state } = given(functionDecider, [created, codeUpdated])
      .when({ type: 'RestoreFunctionVersion', version: 1, now: T2, actor: 'access-tokens/6' })
      .then([
        {
          type: 'FunctionUpdated',
          data: {
            ...identity,
            changes: {},
            version: {
              version: 3,
              code: CODE_V1,
              settings: [apiKey],
              createTime: T2,
              createdBy: 'access-tokens/6',
            },
            updateTime: T2,
          },
        },
      ]);
    expect(state).toMatchObject({ function: { version: 3, code: CODE_V1, deployedVersion: 1 } });
    given(functionDecider, [created])
      .when({ type: 'RestoreFunctionVersion', version: 7, now: T2, actor: 'access-tokens/6' })
      .thenThrows('not_found', 'no version 7');
  });

  it('refuses a delete while an instance uses the function (400 code 9), deletes it otherwise', () => {
    given(functionDecider, [created])
      .when({ type: 'DeleteFunction', instances: 2 })
      .thenThrows('failed_precondition', 'used by 2 instances');
    const { state } = given(functionDecider, [created])
      .when({ type: 'DeleteFunction', instances: 0 })
      .then([{ type: 'FunctionDeleted', data: identity }]);
    expect(state).toEqual({ status: 'deleted' });
    expect(stateAfter(functionDecider, [created, { type: 'FunctionDeleted', data: identity }])).toEqual({
      status: 'deleted',
    });
  });
});

describe('function setting declarations', () => {
  it('normalizes both APIs spellings and fills defaults', () => {
    expect(
      checkFunctionSettings([
        { name: 'apiKey', label: 'API key', type: 'STRING', required: true, sensitive: true },
        { name: 'enabled', type: 'BOOLEAN' },
        { name: 'events', type: 'ARRAY', description: 'which events' },
        { name: 'headers', type: 'TEXT_MAP' },
        { name: 'tags_2', type: 'text-map' },
      ]),
    ).toEqual([
      { name: 'apiKey', label: 'API key', type: 'string', description: '', required: true, sensitive: true },
      {
        name: 'enabled',
        label: 'enabled',
        type: 'boolean',
        description: '',
        required: false,
        sensitive: false,
      },
      {
        name: 'events',
        label: 'events',
        type: 'array',
        description: 'which events',
        required: false,
        sensitive: false,
      },
      {
        name: 'headers',
        label: 'headers',
        type: 'text-map',
        description: '',
        required: false,
        sensitive: false,
      },
      {
        name: 'tags_2',
        label: 'tags_2',
        type: 'text-map',
        description: '',
        required: false,
        sensitive: false,
      },
    ]);
    expect(checkFunctionSettings(null)).toEqual([]);
    expect(checkFunctionSettings(undefined)).toEqual([]);
  });

  it.each([
    ['not a list', { name: 'a' }, 'settings must be a list'],
    ['an entry that is no object', ['apiKey'], 'settings[0] must be an object'],
    ['a name starting with a digit', [{ name: '1key', type: 'string' }], 'settings[0].name'],
    ['a name with a dash', [{ name: 'api-key', type: 'string' }], 'settings[0].name'],
    ['a name of 65 characters', [{ name: `a${'b'.repeat(64)}`, type: 'string' }], 'settings[0].name'],
    ['a missing name', [{ type: 'string' }], 'settings[0].name'],
    [
      'a name declared twice',
      [
        { name: 'a', type: 'string' },
        { name: 'a', type: 'boolean' },
      ],
      'declared twice',
    ],
    ['an unknown type', [{ name: 'a', type: 'number' }], 'settings[0].type'],
    ['a type in mixed case', [{ name: 'a', type: 'String' }], 'settings[0].type'],
    ['a non-boolean required', [{ name: 'a', type: 'string', required: 'yes' }], 'settings[0].required'],
    ['a sensitive boolean', [{ name: 'a', type: 'boolean', sensitive: true }], 'only a string setting'],
    ['a label that is no string', [{ name: 'a', type: 'string', label: 3 }], 'settings[0].label'],
    [
      `${MAX_FUNCTION_SETTINGS + 1} declarations`,
      Array.from({ length: MAX_FUNCTION_SETTINGS + 1 }, (_, index) => ({
        name: `s${index}`,
        type: 'string',
      })),
      'at most 50',
    ],
  ])('refuses %s', (_case, settings, messagePart) => {
    given(functionDecider)
      .when(
        create({
          draft: { displayName: 'x', description: '', logoUrl: '', code: CODE_V1, settings },
        }),
      )
      .thenThrows('invalid_argument', messagePart);
  });

  it('accepts exactly 50 declarations and a 64-character name', () => {
    expect(
      checkFunctionSettings(
        Array.from({ length: MAX_FUNCTION_SETTINGS }, (_, index) => ({ name: `s${index}`, type: 'string' })),
      ),
    ).toHaveLength(MAX_FUNCTION_SETTINGS);
    expect(checkFunctionSettings([{ name: `a${'b'.repeat(63)}`, type: 'array' }])[0].name).toHaveLength(64);
  });
});
