import type { NormalizedMessage } from '@tributary/contracts';
import { deepFrozen, identifyMessage, trackMessage } from '../routing-messages.fixture';
import { applyDestinationFilters, type RoutableFilter } from './destination-filters.decider';
import type { FilterActionInput } from './filter-actions.compiler';

let filterCount = 0;
function filter(
  condition: string,
  actions: FilterActionInput[],
  overrides: Partial<RoutableFilter> = {},
): RoutableFilter {
  filterCount += 1;
  return {
    filterId: `df_${filterCount}`,
    title: `filter ${filterCount}`,
    if: condition,
    enabled: true,
    actions,
    ...overrides,
  };
}

function passed(message: NormalizedMessage, filters: RoutableFilter[]): Record<string, any> {
  const result = applyDestinationFilters(message, filters);
  if (result.outcome !== 'pass')
    throw new Error(`expected the message to pass, got ${JSON.stringify(result)}`);
  return result.message;
}

const sample = (percent: number, path?: string): FilterActionInput => ({
  type: 'sample_event',
  percent,
  ...(path ? { path } : {}),
});
const drop: FilterActionInput = { type: 'drop_event' };
const blockFields = (fields: Record<string, string[]>, type = 'blocklist_fields'): FilterActionInput => ({
  type,
  fields: Object.fromEntries(Object.entries(fields).map(([object, names]) => [object, { fields: names }])),
});
const allowFields = (fields: Record<string, string[]>): FilterActionInput =>
  blockFields(fields, 'whitelist_fields');

describe('applyDestinationFilters', () => {
  it('passes the very same message when there are no filters, or none applies', () => {
    const message = trackMessage();
    expect(applyDestinationFilters(message, [])).toEqual({ outcome: 'pass', message });
    expect(passed(message, [filter("event = 'Signed Up'", [drop])])).toBe(message);
  });

  it('ignores disabled filters, even invalid ones', () => {
    const message = trackMessage();
    expect(
      passed(message, [
        filter('all', [drop], { enabled: false }),
        filter('type = = x', [drop], { enabled: false }),
      ]),
    ).toBe(message);
  });

  describe('drop_event', () => {
    it('drops a message the condition matches and names the filter', () => {
      const dropNonTrack = filter("type != 'track'", [drop], {
        filterId: 'df_drop',
        title: 'Drop non-track',
      });
      expect(applyDestinationFilters(identifyMessage(), [dropNonTrack])).toEqual({
        outcome: 'filter',
        reason: 'dropped',
        filterId: 'df_drop',
        filterTitle: 'Drop non-track',
      });
      expect(applyDestinationFilters(trackMessage(), [dropNonTrack]).outcome).toBe('pass');
    });

    it('drops everything with if: all', () => {
      expect(applyDestinationFilters(trackMessage(), [filter('all', [drop])])).toMatchObject({
        reason: 'dropped',
      });
    });

    it('evaluates conditions on properties and context', () => {
      const bigOrders = filter('properties.total > 50', [drop]);
      expect(applyDestinationFilters(trackMessage(), [bigOrders]).outcome).toBe('filter');
      expect(applyDestinationFilters(trackMessage({ properties: { total: 10 } }), [bigOrders]).outcome).toBe(
        'pass',
      );
      const python = filter("match(context.library.name, 'analytics-py*')", [drop]);
      expect(applyDestinationFilters(trackMessage(), [python]).outcome).toBe('filter');
    });
  });

  describe('blocklist_fields / blacklist_fields', () => {
    it('removes the listed properties, context and traits fields, nested paths included', () => {
      const message = passed(trackMessage(), [
        filter('all', [
          blockFields({ properties: ['email', 'address.street'], context: ['ip', 'device.id'] }),
        ]),
      ]);
      expect(message.properties).toEqual({
        total: 99.5,
        currency: 'EUR',
        address: { city: 'Lyon', zip: '69001' },
        products: (trackMessage() as { properties: Record<string, unknown> }).properties.products,
      });
      expect(message.context.ip).toBeUndefined();
      expect(message.context.device).toEqual({ model: 'Pixel' });
      expect(message.context.library).toEqual({ name: 'analytics-python', version: '2.3.4' });
      expect(message.event).toBe('Order Completed');
    });

    it('accepts the blacklist_fields spelling and removes traits of an identify', () => {
      const message = passed(identifyMessage(), [
        filter("type = 'identify'", [blockFields({ traits: ['email', 'address.city'] }, 'blacklist_fields')]),
      ]);
      expect(message.traits).toEqual({ name: 'Someone', plan: 'pro', address: {} });
    });

    it('removes a field from every element of a list of objects', () => {
      const message = passed(trackMessage(), [
        filter('all', [blockFields({ properties: ['products.internalCost'] })]),
      ]);
      expect(message.properties.products).toEqual([
        { sku: 'A', price: 10 },
        { sku: 'B', price: 20 },
      ]);
    });

    it('ignores fields and objects the message does not have', () => {
      const message = passed(trackMessage(), [
        filter('all', [blockFields({ properties: ['missing', 'total.deeper'], traits: ['email'] })]),
      ]);
      expect(message).toEqual(trackMessage());
    });
  });

  describe('whitelist_fields', () => {
    it('keeps only the listed fields of each listed object and leaves the other objects alone', () => {
      const message = passed(trackMessage(), [
        filter('all', [allowFields({ properties: ['total', 'address.city'] })]),
      ]);
      expect(message.properties).toEqual({ total: 99.5, address: { city: 'Lyon' } });
      expect(message.context).toEqual(trackMessage().context);
      expect(message.userId).toBe('user-1');
    });

    it('keeps a field listed whole, with everything beneath it', () => {
      const message = passed(trackMessage(), [
        filter('all', [allowFields({ properties: ['address', 'address.city'] })]),
      ]);
      expect(message.properties).toEqual({
        address: { city: 'Lyon', street: '1 rue de la Paix', zip: '69001' },
      });
    });

    it('keeps nothing of an object listed with no fields', () => {
      const message = passed(trackMessage(), [filter('all', [allowFields({ context: [] })])]);
      expect(message.context).toEqual({});
      expect(message.properties).toEqual(trackMessage().properties);
    });
  });

  describe('sample_event', () => {
    const userIds = Array.from({ length: 10_000 }, (_, index) => `user-${index}`);
    const keptShare = (percent: number, path = 'userId') => {
      const sampling = [filter('all', [sample(percent, path)])];
      const kept = userIds.filter(
        (userId) =>
          applyDestinationFilters(trackMessage({ userId, messageId: `m-${userId}` }), sampling).outcome ===
          'pass',
      );
      return kept.length / userIds.length;
    };

    it('keeps roughly `percent` of the users', () => {
      expect(keptShare(0.3)).toBeGreaterThan(0.28);
      expect(keptShare(0.3)).toBeLessThan(0.32);
      expect(keptShare(0.75)).toBeGreaterThan(0.73);
      expect(keptShare(0.75)).toBeLessThan(0.77);
    });

    it('keeps nothing at 0 and everything at 1', () => {
      expect(keptShare(0)).toBe(0);
      expect(keptShare(1)).toBe(1);
    });

    it('is deterministic on the value at path: the same user always gets the same outcome', () => {
      const sampling = [filter('all', [sample(0.5, 'userId')])];
      for (const userId of userIds.slice(0, 200)) {
        const outcomes = new Set(
          ['a', 'b', 'c'].map(
            (suffix) =>
              applyDestinationFilters(
                trackMessage({ userId, messageId: `${userId}-${suffix}`, event: suffix }),
                sampling,
              ).outcome,
          ),
        );
        expect(outcomes.size).toBe(1);
      }
    });

    it('a user kept at a lower percent is kept at every higher one', () => {
      const keptAt = (percent: number) =>
        new Set(
          userIds
            .slice(0, 2_000)
            .filter(
              (userId) =>
                applyDestinationFilters(trackMessage({ userId }), [
                  filter('all', [sample(percent, 'userId')]),
                ]).outcome === 'pass',
            ),
        );
      const low = keptAt(0.2);
      const high = keptAt(0.6);
      expect(low.size).toBeGreaterThan(0);
      for (const userId of low) expect(high.has(userId)).toBe(true);
    });

    it('hashes the messageId when no path is given, so a redelivery gets the same answer', () => {
      const sampling = [filter('all', [sample(0.5)])];
      const outcomes = userIds
        .slice(0, 400)
        .map((id) => applyDestinationFilters(trackMessage({ messageId: id }), sampling).outcome);
      expect(outcomes).toContain('pass');
      expect(outcomes).toContain('filter');
      const again = userIds
        .slice(0, 400)
        .map(
          (id) => applyDestinationFilters(trackMessage({ messageId: id, userId: 'other' }), sampling).outcome,
        );
      expect(again).toEqual(outcomes);
    });

    it('reports the sampling filter', () => {
      const sampling = filter('all', [sample(0, 'userId')], { filterId: 'df_sample', title: 'Sample 0' });
      expect(applyDestinationFilters(trackMessage(), [sampling])).toEqual({
        outcome: 'filter',
        reason: 'sampled_out',
        filterId: 'df_sample',
        filterTitle: 'Sample 0',
      });
    });

    it('samples only the messages its condition matches', () => {
      const sampling = [filter("event = 'Page Scrolled'", [sample(0, 'userId')])];
      expect(applyDestinationFilters(trackMessage(), sampling).outcome).toBe('pass');
      expect(applyDestinationFilters(trackMessage({ event: 'Page Scrolled' }), sampling).outcome).toBe(
        'filter',
      );
    });
  });

  describe('order: sample, then drop, then drop fields, then allow fields', () => {
    it('sampling is decided before dropping, whatever the list order', () => {
      const result = applyDestinationFilters(trackMessage(), [
        filter('all', [drop]),
        filter('all', [sample(0, 'userId')]),
      ]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'sampled_out' });
    });

    it('dropping wins over field actions listed before it', () => {
      const result = applyDestinationFilters(trackMessage(), [
        filter('all', [allowFields({ properties: ['total'] })]),
        filter('all', [drop]),
      ]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'dropped' });
    });

    it('a kept sample goes on to the drop and field stages', () => {
      expect(
        applyDestinationFilters(trackMessage(), [
          filter('all', [sample(1, 'userId')]),
          filter('all', [drop]),
        ]),
      ).toMatchObject({
        reason: 'dropped',
      });
      const message = passed(trackMessage(), [
        filter('all', [sample(1, 'userId'), blockFields({ properties: ['email'] })]),
      ]);
      expect(message.properties.email).toBeUndefined();
    });

    it('removes blocked fields before keeping allowed ones, whatever the list order', () => {
      const message = passed(trackMessage(), [
        filter('all', [allowFields({ properties: ['total', 'email', 'currency'] })]),
        filter('all', [blockFields({ properties: ['email'] })]),
      ]);
      expect(message.properties).toEqual({ total: 99.5, currency: 'EUR' });
    });

    it('evaluates every condition on the message as it arrived, before any action changes it', () => {
      // The first filter removes properties.email; the second still sees it and drops the message.
      const result = applyDestinationFilters(trackMessage(), [
        filter('all', [blockFields({ properties: ['email'] })]),
        filter("contains(properties.email, '@')", [drop]),
      ]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'dropped' });
    });

    it('runs several actions of one filter, and several filters of one kind', () => {
      const message = passed(trackMessage(), [
        filter('all', [blockFields({ properties: ['email'] }), blockFields({ context: ['ip'] })]),
        filter("type = 'track'", [blockFields({ properties: ['address'] })]),
        filter("type = 'identify'", [blockFields({ properties: ['total'] })]),
      ]);
      expect(Object.keys(message.properties).sort()).toEqual(['currency', 'products', 'total']);
      expect(message.context.ip).toBeUndefined();
    });
  });

  describe('invalid filters fail closed', () => {
    it('holds the message back when a stored condition does not compile', () => {
      const broken = filter('userId = oops"', [blockFields({ properties: ['email'] })], {
        filterId: 'df_broken',
        title: 'Broken',
      });
      const result = applyDestinationFilters(trackMessage(), [broken]);
      expect(result).toMatchObject({
        outcome: 'filter',
        reason: 'invalid_filter',
        filterId: 'df_broken',
        filterTitle: 'Broken',
      });
      expect(result.outcome === 'filter' && result.detail).toMatch(/unterminated string/);
    });

    it('holds the message back when stored actions do not compile', () => {
      const result = applyDestinationFilters(trackMessage(), [filter('all', [{ type: 'hash_fields' }])]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'invalid_filter' });
      expect(result.outcome === 'filter' && result.detail).toMatch(/unknown action type "hash_fields"/);
    });
  });

  describe('field paths through prototypes (stored before the Config API refused them)', () => {
    const prototypePaths = [
      '__proto__.hasOwnProperty',
      'constructor.prototype.toString',
      'address.__proto__.valueOf',
      '__proto__',
    ];

    it.each([
      ['block list', blockFields({ properties: prototypePaths, context: ['__proto__.isPrototypeOf'] })],
      ['allow list', allowFields({ properties: ['constructor.prototype.x'], traits: ['prototype'] })],
      ['sample path', sample(0.5, 'properties.__proto__.toString')],
    ])('fail closed through the %s and leave every intrinsic in place', (_, action) => {
      const intrinsics = [Object.prototype, Array.prototype, Function.prototype, String.prototype];
      const before = intrinsics.map((intrinsic) => Reflect.ownKeys(intrinsic).length);
      const result = applyDestinationFilters(trackMessage({ properties: { address: { city: 'Oslo' } } }), [
        filter('all', [action], { filterId: 'df_hostile', title: 'Hostile' }),
      ]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'invalid_filter', filterId: 'df_hostile' });
      expect(result.outcome === 'filter' && result.detail).toMatch(/cannot be used as field names/);
      expect(intrinsics.map((intrinsic) => Reflect.ownKeys(intrinsic).length)).toEqual(before);
      expect(typeof Object.prototype.hasOwnProperty).toBe('function');
      expect(typeof Object.prototype.toString).toBe('function');
    });

    it('a condition through a prototype fails closed too', () => {
      const result = applyDestinationFilters(trackMessage(), [
        filter("properties.constructor.name = 'Object'", [drop]),
      ]);
      expect(result).toMatchObject({ outcome: 'filter', reason: 'invalid_filter' });
    });

    it('a message key named like a prototype link is data: own-property lookups leave it alone', () => {
      const message = JSON.parse(
        '{"type":"track","event":"x","userId":"u","messageId":"m","properties":{"__proto__":{"polluted":1},"kept":2}}',
      ) as NormalizedMessage;
      const output = passed(message, [filter('all', [blockFields({ properties: ['kept'] })])]);
      expect(Object.hasOwn(output.properties, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(output.properties)).toBe(Object.prototype);
      expect(output.properties.kept).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('never mutates its input', () => {
    it.each([
      ['drop', [filter('all', [drop])]],
      ['sample', [filter('all', [sample(0.5, 'userId')])]],
      [
        'block fields',
        [
          filter('all', [
            blockFields({ properties: ['email', 'products.internalCost', 'address.city'], context: ['ip'] }),
          ]),
        ],
      ],
      [
        'allow fields',
        [filter('all', [allowFields({ properties: ['total', 'address.city'], context: ['library'] })])],
      ],
      [
        'everything',
        [
          filter('all', [
            sample(1, 'userId'),
            blockFields({ properties: ['email'] }),
            allowFields({ properties: ['total'] }),
          ]),
        ],
      ],
    ])('%s', (_, filters) => {
      const input = deepFrozen(trackMessage());
      const before = structuredClone(input);
      const frozenFilters = deepFrozen(filters);
      const result = applyDestinationFilters(input, frozenFilters);
      expect(input).toEqual(before);
      // Objects a field action edited are copies; untouched ones may be shared with the input.
      if (result.outcome === 'pass' && result.message !== input) {
        expect(result.message.properties).not.toBe((input as { properties?: unknown }).properties);
      }
    });
  });
});
