import { frozenMapping, installMappingValidationCache } from './actions-mapping-validation.cache';

/* eslint-disable @typescript-eslint/no-require-imports */
const validation = require('@segment/actions-core/mapping-kit/validate') as {
  default: (mapping: unknown, ...rest: unknown[]) => void;
};
const { transform } = require('@segment/actions-core') as {
  transform: (mapping: unknown, data: unknown) => Record<string, unknown>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

describe('the cached check of prepared Actions mappings', () => {
  const checked: unknown[] = [];
  beforeAll(() => {
    // Counts the checks that reach mapping-kit's own.
    const check = validation.default;
    validation.default = (mapping, ...rest) => {
      checked.push(mapping);
      check(mapping, ...rest);
    };
    installMappingValidationCache();
  });
  beforeEach(() => {
    checked.length = 0;
  });

  const event = { type: 'track', event: 'Song Played', userId: 'u-1', properties: { plays: 3 } };
  const mapping = {
    user_id: { '@path': '$.userId' },
    event_type: { '@template': '{{event}}!' },
    plays: { '@path': '$.properties.plays' },
    literal: 'x',
  };

  it('checks a prepared mapping once, and maps every message as before', () => {
    const prepared = frozenMapping(mapping);
    const expected = transform(mapping, event);
    expect(checked).toHaveLength(1);
    for (let index = 0; index < 3; index += 1) expect(transform(prepared, event)).toEqual(expected);
    expect(checked).toHaveLength(2);
  });

  it('checks every other mapping each time, a copy of a prepared one with another value too', () => {
    const prepared = frozenMapping(mapping);
    transform(prepared, event);
    checked.length = 0;
    transform(mapping, event);
    transform(mapping, event);
    transform({ ...prepared, literal: 'y' }, event);
    transform({ literal: 'x', ...prepared }, event);
    expect(checked).toHaveLength(4);
  });

  it('refuses an invalid prepared mapping at every message', () => {
    const invalid = frozenMapping({ user_id: { '@path': 42 } as never, other: { '@path': '$.userId' } });
    expect(() => transform(invalid, event)).toThrow();
    expect(() => transform(invalid, event)).toThrow();
    expect(checked).toHaveLength(2);
  });

  it('makes a copy that no one can change, leaving the original as it was', () => {
    const original = { nested: { '@path': '$.userId' }, list: [{ a: 1 }] };
    const prepared = frozenMapping(original) as typeof original;
    expect(prepared).toEqual(original);
    expect(Object.isFrozen(prepared.nested) && Object.isFrozen(prepared.list[0])).toBe(true);
    expect(Object.isFrozen(original.nested)).toBe(false);
    expect(prepared.nested).not.toBe(original.nested);
  });
});
