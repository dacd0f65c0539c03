import { DomainError } from './decider';
import { resolveUpdateMask } from './update-mask';
import { SCHEMA_CONFIG_ZERO_VALUES } from '../source/schema-config';

/** Updatable fields of a destination-like resource, with their zero values. */
const destinationZeroValues = { enabled: false, connection_mode: 'UNSPECIFIED', config: [] };
/** A resource with a string, a number and nested rule parts. */
const planZeroValues = {
  display_name: '',
  priority: 0,
  rules: { events: [], identify_traits: [], group_traits: [] },
  'rules.events': [],
  'rules.global': null,
};

function refusalOf(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a refusal');
}

describe('resolveUpdateMask (docs/config-api.md §1.6)', () => {
  describe('the four rows of the table', () => {
    it('in the mask and in the body: the field is set to the body value', () => {
      expect(
        resolveUpdateMask('destination', { enabled: true }, ['destination.enabled'], destinationZeroValues),
      ).toEqual({ enabled: true });
    });

    it('in the mask and absent from the body: the field takes its zero value (false, "", 0, [])', () => {
      // C1 marshals with omitempty: `enabled:false` never reaches the body, yet the mask names it.
      expect(
        resolveUpdateMask(
          'destination',
          {},
          ['destination.enabled', 'destination.connection_mode', 'destination.config'],
          destinationZeroValues,
        ),
      ).toStrictEqual({ enabled: false, connection_mode: 'UNSPECIFIED', config: [] });
      expect(
        resolveUpdateMask(
          'tracking_plan',
          {},
          ['tracking_plan.display_name', 'tracking_plan.priority'],
          planZeroValues,
        ),
      ).toStrictEqual({ display_name: '', priority: 0 });
    });

    it('treats a null body value like an absent one: zero value', () => {
      expect(
        resolveUpdateMask(
          'destination',
          { enabled: null, config: null },
          ['enabled', 'config'],
          destinationZeroValues,
        ),
      ).toStrictEqual({ enabled: false, config: [] });
    });

    it('keeps falsy body values that are present (false, "", 0) as they are', () => {
      expect(
        resolveUpdateMask(
          'tracking_plan',
          { display_name: '', priority: 0 },
          ['display_name', 'priority'],
          planZeroValues,
        ),
      ).toStrictEqual({ display_name: '', priority: 0 });
    });

    it('not in the mask but in the body: ignored, the field stays unchanged', () => {
      const changes = resolveUpdateMask(
        'destination',
        { enabled: true, connection_mode: 'DEVICE', config: [{ name: 'apiKey', value: 'k' }] },
        ['destination.enabled'],
        destinationZeroValues,
      );
      expect(changes).toStrictEqual({ enabled: true });
    });

    it('neither in the mask nor in the body: unchanged (no key in the changes)', () => {
      const changes = resolveUpdateMask(
        'destination',
        { enabled: true },
        ['destination.enabled'],
        destinationZeroValues,
      );
      expect(Object.keys(changes)).toEqual(['enabled']);
    });
  });

  it('resolves a schema-config PATCH as C1 sends it: all 13 paths masked, false values left out of the body', () => {
    const paths = Object.keys(SCHEMA_CONFIG_ZERO_VALUES).map((field) => `schema_config.${field}`);
    const body = {
      allow_unplanned_track_events: true,
      forwarding_violations_to: 'violations',
      common_group_event_on_violations: 'BLOCK',
    };
    expect(resolveUpdateMask('schema_config', body, paths, SCHEMA_CONFIG_ZERO_VALUES)).toStrictEqual({
      ...SCHEMA_CONFIG_ZERO_VALUES,
      ...body,
    });
    expect(
      Object.values(resolveUpdateMask('schema_config', {}, paths, SCHEMA_CONFIG_ZERO_VALUES)).filter(
        (value) => value === false,
      ),
    ).toHaveLength(8);
  });

  it('gives each resolution its own copy of a zero value, so one change cannot alter the next', () => {
    const first = resolveUpdateMask('destination', {}, ['config'], destinationZeroValues);
    (first.config as unknown[]).push('mutated');
    const second = resolveUpdateMask('destination', {}, ['config'], destinationZeroValues);
    expect(second.config).toEqual([]);
    expect(destinationZeroValues.config).toEqual([]);
  });

  describe('path forms', () => {
    it('accepts prefixed paths and bare paths (filters send `if`, `enabled`, ...) alike', () => {
      const prefixed = resolveUpdateMask(
        'destination',
        { enabled: true, connection_mode: 'CLOUD' },
        ['destination.enabled', 'destination.connection_mode'],
        destinationZeroValues,
      );
      const bare = resolveUpdateMask(
        'destination',
        { enabled: true, connection_mode: 'CLOUD' },
        ['enabled', 'connection_mode'],
        destinationZeroValues,
      );
      expect(prefixed).toStrictEqual({ enabled: true, connection_mode: 'CLOUD' });
      expect(bare).toStrictEqual(prefixed);
    });

    it('accepts a mix of prefixed and bare paths, and trims stray whitespace', () => {
      expect(
        resolveUpdateMask('filter', { if: 'all', enabled: true }, [' filter.if ', 'enabled'], {
          if: '',
          enabled: false,
        }),
      ).toStrictEqual({ if: 'all', enabled: true });
    });

    it('strips only its own resource prefix: another resource key is an unknown path', () => {
      const refusal = refusalOf(() =>
        resolveUpdateMask('destination', { enabled: true }, ['source.enabled'], destinationZeroValues),
      );
      expect(refusal.kind).toBe('invalid_argument');
      expect(refusal.message).toContain('"source.enabled"');
    });

    it('resolves nested paths such as tracking_plan.rules.events from inside the body', () => {
      const events = [{ name: 'Order Completed', version: 1, rules: {} }];
      expect(
        resolveUpdateMask(
          'tracking_plan',
          { rules: { events, global: { type: 'object' } } },
          ['tracking_plan.rules.events'],
          planZeroValues,
        ),
      ).toStrictEqual({ 'rules.events': events });
      expect(
        resolveUpdateMask('tracking_plan', { rules: { events } }, ['rules.events'], planZeroValues),
      ).toStrictEqual({
        'rules.events': events,
      });
    });

    it('gives a nested path its zero value when the body lacks it, or lacks its parent, or the parent is not an object', () => {
      expect(
        resolveUpdateMask('tracking_plan', { rules: {} }, ['tracking_plan.rules.events'], planZeroValues),
      ).toStrictEqual({ 'rules.events': [] });
      expect(
        resolveUpdateMask('tracking_plan', {}, ['tracking_plan.rules.events'], planZeroValues),
      ).toStrictEqual({
        'rules.events': [],
      });
      expect(
        resolveUpdateMask(
          'tracking_plan',
          { rules: 'nonsense' },
          ['tracking_plan.rules.events'],
          planZeroValues,
        ),
      ).toStrictEqual({ 'rules.events': [] });
      expect(
        resolveUpdateMask('tracking_plan', {}, ['tracking_plan.rules.global'], planZeroValues),
      ).toStrictEqual({
        'rules.global': null,
      });
    });

    it('resolves the whole-rules path and a narrower one side by side', () => {
      const rules = { events: [{ name: 'A' }], identify_traits: [], group_traits: [] };
      expect(
        resolveUpdateMask(
          'tracking_plan',
          { rules },
          ['tracking_plan.rules', 'tracking_plan.rules.events'],
          planZeroValues,
        ),
      ).toStrictEqual({ rules, 'rules.events': [{ name: 'A' }] });
    });
  });

  describe('unknown paths', () => {
    it.each([
      ['a field the resource does not have', 'destination.colour'],
      ['a read-only field', 'destination.create_time'],
      ['the bare resource key', 'destination'],
      ['an empty path', ''],
      ['a nested path that is not updatable', 'tracking_plan.rules.whatever'],
    ])('refuses %s with invalid_argument naming the path', (_case, path) => {
      const zeroValues = path.startsWith('tracking_plan') ? planZeroValues : destinationZeroValues;
      const resourceKey = path.startsWith('tracking_plan') ? 'tracking_plan' : 'destination';
      const refusal = refusalOf(() => resolveUpdateMask(resourceKey, { enabled: true }, [path], zeroValues));
      expect(refusal.kind).toBe('invalid_argument');
      expect(refusal.message).toContain(`"${path}"`);
      expect(refusal.message).toContain('updatable:');
    });

    it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'destination.constructor'])(
      'refuses "%s": names inherited by every object are not fields',
      (path) => {
        const refusal = refusalOf(() => resolveUpdateMask('destination', {}, [path], destinationZeroValues));
        expect(refusal.kind).toBe('invalid_argument');
        expect(refusal.message).toContain(`"${path}"`);
      },
    );

    it('refuses the whole mask when one path is unknown, even if the others are fine', () => {
      const refusal = refusalOf(() =>
        resolveUpdateMask(
          'destination',
          { enabled: true },
          ['destination.enabled', 'destination.nope'],
          destinationZeroValues,
        ),
      );
      expect(refusal.message).toContain('"destination.nope"');
    });
  });

  describe('without a mask', () => {
    it('uses the updatable top-level fields present in the body', () => {
      expect(
        resolveUpdateMask(
          'destination',
          { enabled: false, config: [{ name: 'k', value: 1 }] },
          undefined,
          destinationZeroValues,
        ),
      ).toStrictEqual({ enabled: false, config: [{ name: 'k', value: 1 }] });
    });

    it('leaves absent fields unchanged instead of zeroing them', () => {
      expect(
        resolveUpdateMask('destination', { connection_mode: 'CLOUD' }, undefined, destinationZeroValues),
      ).toStrictEqual({
        connection_mode: 'CLOUD',
      });
      expect(resolveUpdateMask('destination', {}, undefined, destinationZeroValues)).toStrictEqual({});
    });

    it('ignores read-only and unknown fields in the body (clients echo name, create_time, ...)', () => {
      expect(
        resolveUpdateMask(
          'destination',
          {
            name: 'workspaces/ws/sources/js/destinations/ga',
            create_time: '0001-01-01T00:00:00Z',
            enabled: true,
          },
          undefined,
          destinationZeroValues,
        ),
      ).toStrictEqual({ enabled: true });
    });

    it('replaces whole top-level fields only, never a nested part', () => {
      const rules = { events: [{ name: 'A' }] };
      expect(resolveUpdateMask('tracking_plan', { rules }, undefined, planZeroValues)).toStrictEqual({
        rules,
      });
    });

    it('counts a field sent as null as present, which sets its zero value', () => {
      expect(
        resolveUpdateMask('destination', { enabled: null }, undefined, destinationZeroValues),
      ).toStrictEqual({
        enabled: false,
      });
    });
  });
});
