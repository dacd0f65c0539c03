import type { DestinationRecord } from '@tributary/config-domain';
import {
  isPlanCurrent,
  planDestinationDelivery,
  type PlannableFunction,
} from './destination-delivery.planner';

function destination(fields: Partial<DestinationRecord> = {}): DestinationRecord {
  return {
    workspaceSlug: 'acme',
    sourceSlug: 'web',
    sourceId: 'src-1',
    destinationSlug: 'webhooks',
    catalogSlug: 'webhooks',
    displayName: 'Webhooks',
    connectionMode: 'CLOUD',
    enabled: true,
    config: { url: 'https://example.com/hook' },
    createTime: '2026-01-01T00:00:00Z',
    updateTime: '2026-01-01T00:00:00Z',
    ...fields,
  };
}

function fn(
  fields: Partial<PlannableFunction> & Pick<PlannableFunction, 'functionId' | 'type'>,
): PlannableFunction {
  return {
    workspaceId: 'ws-1',
    displayName: 'Order relay',
    deployedVersion: 1,
    versions: [
      { version: 1, code: 'async function onTrack() {} // v1' },
      { version: 2, code: 'async function onTrack() {} // v2' },
    ],
    ...fields,
  };
}

function insertFunction(functionId: string, enabled: boolean, config: Record<string, unknown>) {
  const time = '2026-01-01T00:00:00Z';
  return { functionId, enabled, config, createTime: time, updateTime: time };
}

const relay = fn({ functionId: 'dfn_relay', type: 'DESTINATION', deployedVersion: 1 });
const masker = fn({
  functionId: 'ifnd_masker',
  type: 'INSERT_DESTINATION',
  displayName: 'Masker',
  deployedVersion: 2,
});
const shop = fn({ functionId: 'sfn_shop', type: 'SOURCE' });
const functions = new Map([relay, masker, shop].map((record) => [record.functionId, record]));
const lookup = (workspaceSlug: string, functionId: string) =>
  workspaceSlug === 'acme' ? functions.get(functionId) : undefined;

describe('planDestinationDelivery', () => {
  it('delivers a catalog destination with its adapter, routed as its catalog entry says', () => {
    const plan = planDestinationDelivery(destination(), lookup)!;
    expect(plan.deliverer).toEqual({ kind: 'adapter', catalogSlug: 'webhooks' });
    expect(plan.displayName).toBe('Webhooks');
    expect(plan.capabilities).toEqual({
      acceptsHistoricalTimestampsUpToMs: null,
      destinationFiltersApply: true,
    });
    expect(plan.insertFunction).toBeUndefined();
  });

  it('has nothing to deliver with for a catalog entry this build lacks', () => {
    expect(planDestinationDelivery(destination({ catalogSlug: 'retired-vendor' }), lookup)).toBeUndefined();
  });

  it("delivers a destination function's instance by invoking its deployed version, not its latest", () => {
    const record = destination({
      destinationSlug: 'dfn_relay-2',
      catalogSlug: 'dfn_relay',
      displayName: 'Old name',
    });
    const plan = planDestinationDelivery(record, lookup)!;
    expect(plan.deliverer).toEqual({
      kind: 'function',
      fn: {
        workspaceId: 'ws-1',
        functionId: 'dfn_relay',
        version: 1,
        kind: 'DESTINATION',
        code: 'async function onTrack() {} // v1',
      },
      instance: 'workspaces/acme/sources/web/destinations/dfn_relay-2',
      gathers: false,
    });
    // The `integrations` object names it by the function's display name; filters apply as to a webhook.
    expect(plan.displayName).toBe('Order relay');
    expect(plan.capabilities).toEqual({
      acceptsHistoricalTimestampsUpToMs: null,
      destinationFiltersApply: true,
    });
  });

  it('gathers the messages of a destination function whose deployed version declares onBatch', () => {
    const batching = fn({
      functionId: 'dfn_batcher',
      type: 'DESTINATION',
      deployedVersion: 2,
      versions: [
        { version: 1, code: 'async function onTrack() {}' },
        { version: 2, code: 'async function onTrack() {}\nasync function onBatch(events) {}' },
        { version: 3, code: 'async function onTrack() {}' },
      ],
    });
    const record = destination({ destinationSlug: 'dfn_batcher', catalogSlug: 'dfn_batcher' });
    const plan = planDestinationDelivery(record, (_, id) => (id === 'dfn_batcher' ? batching : undefined))!;
    expect(plan.deliverer).toMatchObject({ kind: 'function', gathers: true });
    const redeployed = { ...batching, deployedVersion: 3 };
    expect(planDestinationDelivery(record, () => redeployed)!.deliverer).toMatchObject({
      kind: 'function',
      gathers: false,
    });
  });

  it('refuses, with a reason, a function that is gone, of another kind or of another workspace', () => {
    for (const record of [
      destination({ destinationSlug: 'dfn_gone', catalogSlug: 'dfn_gone' }),
      destination({ workspaceSlug: 'other', destinationSlug: 'dfn_relay', catalogSlug: 'dfn_relay' }),
    ]) {
      expect(planDestinationDelivery(record, lookup)!.deliverer).toEqual({
        kind: 'refused',
        reason: `${record.catalogSlug} is not a deployed destination function of the workspace`,
      });
    }
    const wrongKind = (workspaceSlug: string, functionId: string) =>
      functionId === 'dfn_relay' ? { ...relay, type: 'SOURCE' as const } : lookup(workspaceSlug, functionId);
    expect(
      planDestinationDelivery(
        destination({ destinationSlug: 'dfn_relay', catalogSlug: 'dfn_relay' }),
        wrongKind,
      )!.deliverer.kind,
    ).toBe('refused');
  });

  it('puts an enabled insert function in front, with its deployed version and instance name', () => {
    const config = { mask: 'email' };
    const plan = planDestinationDelivery(
      destination({ insertFunction: insertFunction('ifnd_masker', true, config) }),
      lookup,
    )!;
    expect(plan.deliverer).toEqual({ kind: 'adapter', catalogSlug: 'webhooks' });
    expect(plan.insertFunction).toEqual({
      fn: {
        workspaceId: 'ws-1',
        functionId: 'ifnd_masker',
        version: 2,
        kind: 'INSERT_DESTINATION',
        code: 'async function onTrack() {} // v2',
      },
      config,
      instance: 'workspaces/acme/sources/web/destinations/webhooks/insert-functions/ifnd_masker',
    });
  });

  it('passes messages by a disabled insert function, and refuses to deliver past a missing one', () => {
    const disabled = planDestinationDelivery(
      destination({ insertFunction: insertFunction('ifnd_gone', false, {}) }),
      lookup,
    )!;
    expect(disabled.insertFunction).toBeUndefined();
    expect(disabled.deliverer.kind).toBe('adapter');

    const missing = planDestinationDelivery(
      destination({ insertFunction: insertFunction('ifnd_gone', true, {}) }),
      lookup,
    )!;
    expect(missing.deliverer).toEqual({
      kind: 'refused',
      reason: 'insert function ifnd_gone is not a deployed insert function of the workspace',
    });
    const notAnInsertFunction = planDestinationDelivery(
      destination({ insertFunction: insertFunction('dfn_relay', true, {}) }),
      lookup,
    )!;
    expect(notAnInsertFunction.deliverer.kind).toBe('refused');
  });
});

describe('isPlanCurrent', () => {
  it('holds until a function the plan was made from is replaced (a deploy), and not for other changes', () => {
    const record = destination({
      destinationSlug: 'dfn_relay',
      catalogSlug: 'dfn_relay',
      insertFunction: insertFunction('ifnd_masker', true, {}),
    });
    const current = new Map(functions);
    const currentLookup = (_: string, functionId: string) => current.get(functionId);
    const plan = planDestinationDelivery(record, currentLookup)!;
    expect(isPlanCurrent(plan, record, currentLookup)).toBe(true);

    current.set('sfn_shop', { ...shop, deployedVersion: 2 });
    expect(isPlanCurrent(plan, record, currentLookup)).toBe(true);

    current.set('ifnd_masker', { ...masker, deployedVersion: 1 });
    expect(isPlanCurrent(plan, record, currentLookup)).toBe(false);
    const replanned = planDestinationDelivery(record, currentLookup)!;
    expect(replanned.insertFunction!.fn.version).toBe(1);
    expect(isPlanCurrent(replanned, record, currentLookup)).toBe(true);

    current.delete('dfn_relay');
    expect(isPlanCurrent(replanned, record, currentLookup)).toBe(false);
  });

  it('always holds for a catalog destination without functions', () => {
    const record = destination();
    const plan = planDestinationDelivery(record, lookup)!;
    expect(isPlanCurrent(plan, record, () => undefined)).toBe(true);
  });
});
