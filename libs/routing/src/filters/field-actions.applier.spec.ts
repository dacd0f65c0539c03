import { transform } from '@segment/tsub';
import type { NormalizedMessage } from '@tributary/contracts';
import fc from 'fast-check';
import { allowTargets, applyFieldEdits, dropTargets, type FieldEdit } from './field-actions.applier';
import { FORBIDDEN_FIELD_PATH_SEGMENTS } from './field-path';
import type { FieldSelection } from './filter-actions.compiler';

// Field names the generated messages and selections share, so that selections hit existing fields.
const KEY = fc.constantFrom('a', 'b', 'c', 'email', 'items', '0', '1', 'address', 'city');
const leaf = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null));
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.dictionary(KEY, tie('tree'), { maxKeys: 4 }),
    fc.array(tie('tree'), { maxLength: 3 }),
  ),
}));
const object = fc.dictionary(KEY, tree, { maxKeys: 5 });
const message = fc
  .record({ properties: object, context: object, traits: object })
  .map(
    (fields) =>
      ({ type: 'track', event: 'e', userId: 'u', messageId: 'm', ...fields }) as unknown as NormalizedMessage,
  );
const fieldPath = fc.array(KEY, { minLength: 1, maxLength: 3 }).map((segments) => segments.join('.'));
const selection: fc.Arbitrary<FieldSelection> = fc.dictionary(
  fc.constantFrom('properties', 'context', 'traits'),
  fc.array(fieldPath, { maxLength: 4 }),
  { maxKeys: 3 },
);
const edits = fc.array(
  fc.tuple(fc.constantFrom('drop_fields' as const, 'allow_fields' as const), selection),
  { maxLength: 3 },
);

function withTsub(input: NormalizedMessage, steps: [FieldEdit['kind'], FieldSelection][]): unknown {
  const copy = structuredClone(input);
  for (const [kind, fields] of steps) {
    transform(
      copy,
      kind === 'drop_fields'
        ? [{ type: 'drop_properties', config: { drop: dropTargets(fields) as Record<string, string[]> } }]
        : [{ type: 'allow_properties', config: { allow: allowTargets(fields) as Record<string, string[]> } }],
    );
  }
  return copy;
}

function withApplier(input: NormalizedMessage, steps: [FieldEdit['kind'], FieldSelection][]): unknown {
  return applyFieldEdits(
    input,
    steps.map(([kind, fields]) => ({
      kind,
      targets: kind === 'drop_fields' ? dropTargets(fields) : allowTargets(fields),
    })),
  );
}

describe('applyFieldEdits', () => {
  it("gives tsub's verdict for every field path without a prototype segment", () => {
    fc.assert(
      fc.property(message, edits, (input, steps) => {
        const before = structuredClone(input);
        expect(withApplier(input, steps)).toEqual(withTsub(input, steps));
        expect(input).toEqual(before);
      }),
      { numRuns: 2_000, seed: 20_261_126 },
    );
  });

  it('never follows an inherited property, whatever the path', () => {
    for (const segment of FORBIDDEN_FIELD_PATH_SEGMENTS) {
      const targets = { [`properties.${segment}`]: ['hasOwnProperty', 'toString'], properties: [segment] };
      const output = applyFieldEdits(
        {
          type: 'track',
          event: 'e',
          userId: 'u',
          messageId: 'm',
          properties: { a: 1 },
        } as unknown as NormalizedMessage,
        [
          { kind: 'drop_fields', targets },
          { kind: 'allow_fields', targets: { [`properties.${segment}`]: [] } },
        ],
      );
      expect(output).toMatchObject({ properties: { a: 1 } });
    }
    expect(typeof Object.prototype.hasOwnProperty).toBe('function');
    expect(typeof Object.prototype.toString).toBe('function');
    expect(Object.prototype.toString.call([])).toBe('[object Array]');
  });

  it('edits arrays of objects element by element and shares what it did not touch', () => {
    const input = {
      type: 'track',
      event: 'e',
      userId: 'u',
      messageId: 'm',
      properties: { items: [{ sku: 'a', cost: 1 }, 'text', { sku: 'b', cost: 2 }] },
      context: { ip: '1.2.3.4' },
    } as unknown as NormalizedMessage;
    const output = applyFieldEdits(input, [
      { kind: 'drop_fields', targets: dropTargets({ properties: ['items.cost'] }) },
    ]);
    expect(output).toEqual({ ...input, properties: { items: [{ sku: 'a' }, 'text', { sku: 'b' }] } });
    expect(output.context).toBe(input.context);
    expect(
      (input as unknown as { properties: { items: { cost?: number }[] } }).properties.items[0].cost,
    ).toBe(1);
  });

  it('walks a deeply nested message without recursion', () => {
    let deep: Record<string, unknown> = { leaf: true, secret: 1 };
    for (let depth = 0; depth < 100_000; depth += 1) deep = { a: deep };
    const input = {
      type: 'track',
      event: 'e',
      userId: 'u',
      messageId: 'm',
      properties: deep,
    } as NormalizedMessage;
    const output = applyFieldEdits(input, [
      { kind: 'drop_fields', targets: dropTargets({ properties: ['a.a.secret'] }) },
    ]);
    expect(output.properties).not.toBe(input.properties);
  });
});
