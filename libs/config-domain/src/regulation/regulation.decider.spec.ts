import { given } from '../testing/given-when-then';
import {
  checkRegulationRequest,
  overallRegulationStatus,
  RegulationCommand,
  regulationDecider,
  RegulationRequestError,
} from './regulation.decider';
import { RegulationEvent, RegulationRecord, RegulationStreamStatus } from './regulation.events';

const T0 = '2026-11-27T10:00:00.000Z';
const T1 = '2026-11-27T10:00:01.000Z';
const identity = { workspaceSlug: 'acme', regulationId: '1qJkfE1tpwvQcklImGksLN629wn' };

const record = (overrides: Partial<RegulationRecord> = {}): RegulationRecord => ({
  ...identity,
  regulationType: 'SUPPRESS_WITH_DELETE',
  subjectType: 'USER_ID',
  subjectIds: ['u1'],
  source: null,
  createTime: T0,
  ...overrides,
});

const streams: RegulationStreamStatus[] = [
  {
    sourceId: 'src-1',
    sourceSlug: 'app',
    destinations: [
      {
        destinationSlug: 'webhooks',
        displayName: 'Webhooks',
        status: 'RUNNING',
        errString: '',
        finishTime: null,
      },
    ],
  },
];

const create = (regulation: RegulationRecord, facts: Partial<RegulationCommand> = {}): RegulationCommand =>
  ({
    type: 'CreateRegulation',
    regulation,
    workspaceExists: true,
    suppressedAtWorkspaceScope: [],
    streams,
    ...facts,
  }) as RegulationCommand;

const created = (regulation = record()): RegulationEvent => ({ type: 'RegulationCreated', data: regulation });
const started: RegulationEvent = { type: 'RegulationStarted', data: { ...identity, streams, startTime: T1 } };

describe('regulation decider', () => {
  it('records a deleting regulation as initialized: the router starts it', () => {
    const { state } = given(regulationDecider).when(create(record())).then([created()]);
    expect(state).toMatchObject({ status: 'active', progress: { status: 'INITIALIZED', streams: [] } });
  });

  it('finishes a suppression at once, its destinations listed as not supported', () => {
    const regulation = record({ regulationType: 'SUPPRESS_ONLY' });
    const { state } = given(regulationDecider)
      .when(create(regulation))
      .then([
        created(regulation),
        {
          type: 'RegulationStarted',
          data: {
            ...identity,
            startTime: T0,
            streams: [
              {
                ...streams[0],
                destinations: [
                  {
                    destinationSlug: 'webhooks',
                    displayName: 'Webhooks',
                    status: 'NOT_SUPPORTED',
                    errString: 'the regulation type sends nothing to destinations',
                    finishTime: T0,
                  },
                ],
              },
            ],
          },
        },
        { type: 'RegulationFinished', data: { ...identity, status: 'FINISHED', finishTime: T0 } },
      ]);
    expect(state).toMatchObject({ progress: { status: 'FINISHED', finishTime: T0 } });
  });

  it('refuses a create in an unknown workspace, and a source-scoped unsuppress of a workspace-wide suppression', () => {
    given(regulationDecider)
      .when(create(record(), { workspaceExists: false }))
      .thenThrows('not_found', 'workspaces/acme not found');
    given(regulationDecider)
      .when(
        create(
          record({
            regulationType: 'UNSUPPRESS',
            source: { sourceId: 's', sourceSlug: 'app', displayName: 'App' },
          }),
          { suppressedAtWorkspaceScope: ['u1'] },
        ),
      )
      .thenThrows('failed_precondition', 'suppressed for the whole workspace');
  });

  it('cancels only an initialized regulation', () => {
    given(regulationDecider, [created()])
      .when({ type: 'DeleteRegulation' })
      .then([{ type: 'RegulationDeleted', data: record() }]);
    given(regulationDecider, [created(), started])
      .when({ type: 'DeleteRegulation' })
      .thenThrows('failed_precondition', 'the regulation is running');
    given(regulationDecider)
      .when({ type: 'DeleteRegulation' })
      .thenThrows('not_found', 'regulation not found');
  });

  it('settles a running destination once, and never changes a final status', () => {
    const settle: RegulationCommand = {
      type: 'SettleRegulationDestination',
      sourceId: 'src-1',
      destinationSlug: 'webhooks',
      status: 'FINISHED',
      errString: '',
      now: T1,
    };
    const settled: RegulationEvent = {
      type: 'RegulationDestinationSettled',
      data: {
        ...identity,
        sourceId: 'src-1',
        destinationSlug: 'webhooks',
        status: 'FINISHED',
        errString: '',
        finishTime: T1,
      },
    };
    given(regulationDecider, [created(), started]).when(settle).then([settled]);
    given(regulationDecider, [created(), started, settled]).when(settle).then([]);
    const finished: RegulationEvent = {
      type: 'RegulationFinished',
      data: { ...identity, status: 'FINISHED', finishTime: T1 },
    };
    given(regulationDecider, [created(), started, settled])
      .when({ type: 'FinishRegulation', status: 'FINISHED', now: T1 })
      .then([finished]);
    given(regulationDecider, [created(), started, settled, finished])
      .when({ type: 'FinishRegulation', status: 'FAILED', now: T1 })
      .then([]);
    // A start after the first is a no-op (a second router replica, a restart).
    given(regulationDecider, [created(), started])
      .when({ type: 'StartRegulation', streams, now: T1 })
      .then([]);
  });
});

describe('overallRegulationStatus', () => {
  const destination = (status: 'FINISHED' | 'FAILED' | 'NOT_SUPPORTED') => ({
    destinationSlug: status,
    displayName: status,
    status,
    errString: '',
    finishTime: T1,
  });
  const of = (...statuses: ('FINISHED' | 'FAILED' | 'NOT_SUPPORTED')[]) => [
    { sourceId: 's', sourceSlug: 's', destinations: statuses.map(destination) },
  ];

  it('ignores destinations without deletion, and tells partial from total failure', () => {
    expect(overallRegulationStatus(true, of('FINISHED', 'NOT_SUPPORTED'))).toBe('FINISHED');
    expect(overallRegulationStatus(true, of('NOT_SUPPORTED'))).toBe('FINISHED');
    expect(overallRegulationStatus(true, of('FINISHED', 'FAILED'))).toBe('PARTIAL_SUCCESS');
    expect(overallRegulationStatus(true, of('FAILED', 'NOT_SUPPORTED'))).toBe('FAILED');
    expect(overallRegulationStatus(false, of('FINISHED'))).toBe('FAILED');
  });
});

describe('checkRegulationRequest', () => {
  const check = (
    request: Record<string, unknown>,
    scope: 'workspace' | 'source' = 'workspace',
    acceptAliases = true,
  ) =>
    checkRegulationRequest(
      { regulationType: 'SUPPRESS_WITH_DELETE', subjectType: 'USER_ID', subjectIds: ['u1'], ...request },
      scope,
      { acceptAliases },
    );
  const refusal = (
    request: Record<string, unknown>,
    scope: 'workspace' | 'source' = 'workspace',
    acceptAliases = true,
  ) => {
    try {
      check(request, scope, acceptAliases);
    } catch (error) {
      if (error instanceof RegulationRequestError) return { field: error.field, message: error.message };
      throw error;
    }
    throw new Error('accepted');
  };

  it('takes the Config API spellings in any case, the Public names as written, and keeps each id once in order', () => {
    expect(check({ regulationType: 'suppress', subjectIds: ['b', 'a', 'b'] })).toEqual({
      regulationType: 'SUPPRESS_ONLY',
      subjectType: 'USER_ID',
      subjectIds: ['b', 'a'],
    });
    expect(check({ regulationType: 'Suppress_With_Delete_Internal' }).regulationType).toBe(
      'SUPPRESS_WITH_DELETE_INTERNAL',
    );
    expect(check({ regulationType: 'Delete' }).regulationType).toBe('DELETE_ONLY');
    expect(check({ regulationType: 'DELETE_ONLY' }, 'workspace', false).regulationType).toBe('DELETE_ONLY');
    expect(refusal({ regulationType: 'Delete' }, 'workspace', false).field).toBe('regulationType');
  });

  it('names the field it refuses', () => {
    expect(refusal({ regulationType: 'FORGET' })).toEqual({
      field: 'regulationType',
      message: expect.stringContaining('unknown regulation type "FORGET"'),
    });
    expect(refusal({ regulationType: 42 }).field).toBe('regulationType');
    expect(refusal({ regulationType: 'DELETE_ARCHIVE_ONLY', subjectType: 'ANONYMOUS_ID' })).toEqual({
      field: 'regulationType',
      message: expect.stringContaining('one source'),
    });
    expect(
      check({ regulationType: 'Delete_Archive_Only', subjectType: 'ANONYMOUS_ID' }, 'source'),
    ).toMatchObject({
      regulationType: 'DELETE_ARCHIVE_ONLY',
      subjectType: 'ANONYMOUS_ID',
    });
    expect(refusal({ subjectType: 'ANONYMOUS_ID' }).field).toBe('subjectType');
    expect(refusal({ subjectType: 'OBJECT_ID' }).message).toContain('no cloud sources');
    expect(refusal({ subjectType: 'EMAIL' }).field).toBe('subjectType');
    expect(refusal({ subjectIds: [] }).field).toBe('subjectIds');
    expect(refusal({ subjectIds: 'u1' }).field).toBe('subjectIds');
    expect(refusal({ subjectIds: ['u1', 7] }).message).toBe('subject id [1] is not a string');
    expect(refusal({ subjectIds: [''] }).message).toContain('1 to 1024 characters');
    expect(refusal({ subjectIds: ['x'.repeat(1025)] }).field).toBe('subjectIds');
    expect(check({ subjectIds: ['x'.repeat(1024)] }).subjectIds).toHaveLength(1);
    const many = Array.from({ length: 5001 }, (_, index) => `u${index}`);
    expect(refusal({ subjectIds: many }).message).toContain(
      '5001 subject ids; a regulation takes at most 5000',
    );
    expect(check({ subjectIds: many.slice(0, 5000) }).subjectIds).toHaveLength(5000);
  });
});
