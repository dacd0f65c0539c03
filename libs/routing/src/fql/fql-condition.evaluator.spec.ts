import { matches } from '@segment/tsub';
import fc from 'fast-check';
import { compileFilterCondition } from './fql-condition.compiler';
import { conditionMatches, parseCondition } from './fql-condition.evaluator';

/** Generated FQL over a small vocabulary of paths and values, so that conditions often hold. */
const path = fc.constantFrom(
  'properties.a',
  'properties.b',
  'properties.n',
  'event',
  'properties.list',
  'context.x',
);
const stringLiteral = fc.constantFrom("'x'", "'X'", "'ab'", "''", "'a*'", "'?b'", "'1.2.3'", "'[a-b]*'");
const numberLiteral = fc.constantFrom('0', '1', '2.5', '-3');
const operand = fc.oneof(path, stringLiteral, numberLiteral, fc.constantFrom('true', 'false', 'null'));
const comparison = fc.oneof(
  fc.tuple(operand, fc.constantFrom('=', '!='), operand).map(([left, op, right]) => `${left} ${op} ${right}`),
  fc
    .tuple(
      fc.oneof(
        path,
        numberLiteral,
        path.map((p) => `length(${p})`),
      ),
      fc.constantFrom('<', '<=', '>', '>='),
      numberLiteral,
    )
    .map(([left, op, right]) => `${left} ${op} ${right}`),
  fc
    .tuple(operand, fc.array(fc.oneof(stringLiteral, numberLiteral), { maxLength: 3 }))
    .map(([item, list]) => `${item} in [${list.join(', ')}]`),
  fc.tuple(path, stringLiteral).map(([p, s]) => `contains(${p}, ${s})`),
  fc.tuple(path, stringLiteral).map(([p, s]) => `match(${p}, ${s})`),
  fc.tuple(path, stringLiteral).map(([p, s]) => `lowercase(${p}) = ${s}`),
  fc.tuple(path, fc.constantFrom("'string'", "'number'", "'bool'")).map(([p, t]) => `typeof(${p}) = ${t}`),
  fc
    .tuple(path, fc.constantFrom("'>='", "'<'", "'='", "'!='"), stringLiteral)
    .map(([p, op, v]) => `semver(${p}, ${op}, ${v})`),
  path,
);
const condition: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    comparison,
    fc
      .tuple(tie('node'), fc.constantFrom('and', 'or'), tie('node'))
      .map(([l, op, r]) => `(${l}) ${op} (${r})`),
    tie('node').map((inner) => `!(${inner})`),
  ),
})).node;

const value = fc.oneof(
  fc.constantFrom('x', 'X', 'ab', '', 'abc', '1.2.3', '2.0', 'a-b'),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(2.5, true, false, null),
  fc.array(fc.constantFrom('x', 1), { maxLength: 2 }),
);
const message = fc.record(
  {
    type: fc.constant('track'),
    event: fc.constantFrom('x', 'ab', 'Order'),
    properties: fc.record({ a: value, b: value, n: value, list: value }, { requiredKeys: [] }),
    context: fc.record({ x: value }, { requiredKeys: [] }),
  },
  { requiredKeys: ['type', 'properties'] },
);

describe('conditionMatches', () => {
  it("gives tsub's verdict on generated conditions and messages", () => {
    let evaluated = 0;
    let matched = 0;
    fc.assert(
      fc.property(condition, message, (text, event) => {
        let matcher;
        try {
          matcher = compileFilterCondition(text);
        } catch {
          return; // refused when written: never evaluated
        }
        const verdict = conditionMatches(event, parseCondition(matcher));
        expect(verdict).toBe(matches(event, matcher));
        evaluated += 1;
        if (verdict) matched += 1;
      }),
      { numRuns: 3_000 },
    );
    // The generator must exercise both verdicts, not only conditions the compiler refuses.
    expect(evaluated).toBeGreaterThan(1_000);
    expect(matched).toBeGreaterThan(100);
    expect(evaluated - matched).toBeGreaterThan(100);
  });

  it("matches everything for 'all'", () => {
    expect(conditionMatches({ type: 'track' }, parseCondition(compileFilterCondition('all')))).toBe(true);
  });
});
