import { matches } from '@segment/tsub';
import {
  InvalidDestinationFilterError,
  InvalidFilterConditionError,
} from '../filters/destination-filter.errors';
import { compileFilterCondition, MAX_FILTER_CONDITION_LENGTH } from './fql-condition.compiler';

// The example object of Segment's FQL reference, with a few more fields.
const event = {
  type: 'track',
  event: 'Button Clicked',
  userId: 'user-1',
  context: { library: { name: 'analytics.js', version: '1.0' }, ip: '10.0.0.1' },
  properties: {
    features: ['discounts', 'dark-mode'],
    total: 42.5,
    count: 3,
    enabled: true,
    disabled: false,
    email: 'Someone@Example.COM',
    nothing: null,
    'product 1': { price: '19.99' },
    app_version: '2.1.0',
  },
};

function evaluate(condition: string, message: object = event): boolean {
  return matches(message, compileFilterCondition(condition) as { type: string; ir: string });
}

function ir(condition: string): unknown {
  const matcher = compileFilterCondition(condition);
  return matcher.type === 'fql' ? JSON.parse(matcher.ir) : matcher;
}

function compileError(condition: string): InvalidFilterConditionError {
  try {
    compileFilterCondition(condition);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidFilterConditionError);
    expect(error).toBeInstanceOf(InvalidDestinationFilterError);
    return error as InvalidFilterConditionError;
  }
  throw new Error(`expected ${JSON.stringify(condition)} to be refused`);
}

describe('compileFilterCondition', () => {
  describe('all', () => {
    it.each(['all', "'all'", '"all"', '  all  '])('%s matches every message', (condition) => {
      expect(compileFilterCondition(condition)).toEqual({ type: 'all', ir: '' });
      expect(evaluate(condition, {})).toBe(true);
      expect(evaluate(condition, event)).toBe(true);
    });
  });

  describe("Segment's documented examples evaluate as documented", () => {
    it.each([
      ["event = 'Button Clicked'", true],
      ["event = 'Screen Tapped'", false],
      ["context.path.path = '/login'", false],
      ["type = 'identify' or type = 'track'", true],
      ["event = 'Button Clicked' and type = 'track'", true],
      ["match( context.library.version, '1.*' )", true],
      ["match( context.library.version, '2.*' )", false],
      ["type = 'track' and ( event = 'Click' or match( event, 'Button *' ) )", true],
      ["!contains( context.library.name, 'js' )", false],
      ["!( type in ['track', 'identify'] )", false],
      ["properties.product\\ 1.price = '19.99'", true],
    ])('%s → %s', (condition, expected) => {
      expect(evaluate(condition)).toBe(expected);
    });
  });

  describe('emits the IR tsub evaluates', () => {
    it.each([
      ["type = 'track'", ['=', 'type', { value: 'track' }]],
      ["event != 'Order Completed'", ['!=', 'event', { value: 'Order Completed' }]],
      ['properties.total > 10', ['>', 'properties.total', { value: 10 }]],
      ['properties.total >= -1.5', ['>=', 'properties.total', { value: -1.5 }]],
      ['properties.total < 1e3', ['<', 'properties.total', { value: 1000 }]],
      ['properties.total <= 0', ['<=', 'properties.total', { value: 0 }]],
      [
        "a = 'x' and b = 'y' and c = 'z'",
        ['and', ['=', 'a', { value: 'x' }], ['=', 'b', { value: 'y' }], ['=', 'c', { value: 'z' }]],
      ],
      [
        'a = 1 or b = 2 and c = 3',
        ['or', ['=', 'a', { value: 1 }], ['and', ['=', 'b', { value: 2 }], ['=', 'c', { value: 3 }]]],
      ],
      ["not type = 'track'", ['!', ['=', 'type', { value: 'track' }]]],
      ["!(type = 'track')", ['!', ['=', 'type', { value: 'track' }]]],
      ["contains(context.ip, '10.')", ['contains', 'context.ip', { value: '10.' }]],
      ["match(event, 'Order *')", ['match', 'event', { value: 'Order *' }]],
      ['length(userId) > 0', ['>', ['length', 'userId'], { value: 0 }]],
      ["lowercase(event) = 'signup'", ['=', ['lowercase', 'event'], { value: 'signup' }]],
      ["typeof(properties.total) = 'number'", ['=', ['typeof', 'properties.total'], { value: 'number' }]],
      ["typeof(properties.enabled) = 'bool'", ['=', ['typeof', 'properties.enabled'], { value: 'boolean' }]],
      ["'string' = typeof(userId)", ['=', { value: 'string' }, ['typeof', 'userId']]],
      ["type in ['track', 'page']", ['in', 'type', { value: [{ value: 'track' }, { value: 'page' }] }]],
      ['properties.nothing = null', ['=', 'properties.nothing', { value: null }]],
      ['properties.enabled', 'properties.enabled'],
      ['properties.enabled = true', ['=', 'properties.enabled', { value: true }]],
      ['true', { value: true }],
      ['"double quoted" = event', ['=', { value: 'double quoted' }, 'event']],
      [
        "semver(properties.app_version, '>=', '2.0.0')",
        ['semver', 'properties.app_version', { value: '>=' }, { value: '2.0.0' }],
      ],
      ["properties.my-field = 'x'", ['=', 'properties.my-field', { value: 'x' }]],
      ['properties.items.0.sku = 1', ['=', 'properties.items.0.sku', { value: 1 }]],
    ])('%s', (condition, expected) => {
      expect(ir(condition)).toEqual(expected);
    });
  });

  describe('evaluates every supported form against a message', () => {
    it.each([
      ["type = 'track'", true],
      ["type = 'identify'", false],
      ["type != 'identify'", true],
      ["type != 'track'", false],
      ["event = 'Button Clicked' and type = 'track'", true],
      ["event = 'Button Clicked' and type = 'page'", false],
      ["type = 'page' or userId = 'user-1'", true],
      ["type = 'page' or userId = 'user-2'", false],
      ["not type = 'page'", true],
      ["not (type = 'page' or type = 'track')", false],
      ["!!(type = 'track')", true],
      ['properties.total > 42', true],
      ['properties.total > 42.5', false],
      ['properties.total >= 42.5', true],
      ['properties.total < 43', true],
      ['properties.total <= 42', false],
      ['properties.count = 3', true],
      ["properties.count = '3'", false], // FQL is type strict
      ['properties.missing > 0', false],
      ["contains(properties.email, 'Example')", true],
      ["contains(properties.email, 'example')", false],
      ["contains(properties.missing, 'x')", false],
      ["match(properties.email, '*@Example.COM')", true],
      ["match(properties.email, '*@example.com')", false],
      ["match(lowercase_is_not_needed, '*')", false],
      ["match(context.ip, '10.0.0.?')", true],
      ["match(event, 'Button [A-Z]licked')", true],
      ['length(properties.features) = 2', true],
      ['length(userId) > 0', true],
      ['length(properties.nothing) = 0', true],
      ['length(properties.total) > 0', false],
      ["lowercase(properties.email) = 'someone@example.com'", true],
      ["lowercase(properties.missing) = 'x'", false],
      ["typeof(userId) = 'string'", true],
      ["typeof(properties.total) = 'number'", true],
      ["typeof(properties.enabled) = 'bool'", true],
      ["typeof(properties.enabled) = 'boolean'", true],
      ["typeof(userId) = 'number'", false],
      ["typeof(userId) != 'number'", true],
      ["type in ['track', 'page']", true],
      ["type in ['identify', 'page']", false],
      ['properties.count in [1, 2, 3]', true],
      ['properties.enabled', true],
      ['properties.disabled', false],
      ['properties.total', false], // only the boolean true counts
      ['!properties.disabled', true],
      ['properties.nothing = null', true],
      ['true', true],
      ['false', false],
      ["semver(properties.app_version, '>=', '2.0.0')", true],
      ["semver(properties.app_version, '<', '2.0.0')", false],
      ["  type   =   'track'  ", true],
      ["type='track'and event='Button Clicked'", true],
      ["event = 'it\\'s'", false],
    ])('%s → %s', (condition, expected) => {
      expect(evaluate(condition)).toBe(expected);
    });

    it('reads escaped quotes and backslashes inside strings', () => {
      expect(evaluate("properties.quote = 'it\\'s'", { properties: { quote: "it's" } })).toBe(true);
      expect(evaluate('properties.quote = "say \\"hi\\""', { properties: { quote: 'say "hi"' } })).toBe(true);
      expect(evaluate("properties.path = 'a\\\\b'", { properties: { path: 'a\\b' } })).toBe(true);
    });

    it('keeps glob escapes in match patterns, as the FQL reference shows', () => {
      expect(ir("match(properties.code, 'ab\\*d')")).toEqual([
        'match',
        'properties.code',
        { value: 'ab\\*d' },
      ]);
      expect(evaluate("match(properties.code, 'ab\\*d')", { properties: { code: 'ab*d' } })).toBe(true);
      expect(evaluate("match(properties.code, 'ab\\*d')", { properties: { code: 'abcd' } })).toBe(false);
    });
  });

  describe('refuses invalid conditions with a clear error', () => {
    it.each([
      ['', /empty/],
      ['   ', /empty/],
      ["type = 'track", /unterminated string/],
      ["type == 'track'", /use '=' to compare/],
      ["type = 'track' and", /ends where a value was expected/],
      ["type = 'track' or or event = 'x'", /expected a value, found 'or'/],
      ["(type = 'track'", /expected '\)' to close '\('/],
      ["type = 'track')", /expected 'and', 'or' or the end of the condition, found '\)'/],
      ["type 'track'", /found the string "track"/],
      ['userId = oops"', /unterminated string/],
      ['type = #', /unexpected character '#'/],
      ["type = 'a' && event = 'b'", /unexpected character '&'/],
      ["foo('x')", /unknown function 'foo'/],
      ["properties.contains('x')", /unknown function 'properties.contains'/],
      ['contains(event)', /contains\(\) takes 2 arguments, got 1/],
      ["length(event, 'x') > 1", /length\(\) takes 1 argument, got 2/],
      ["contains(lowercase(event), 'x')", /must be field paths or literals, not function calls/],
      ['contains(event, 5)', /works on strings, not the number 5/],
      ["match(event, ['a'])", /works on strings, not a list/],
      ['lowercase(event)', /must be true or false, but lowercase\(…\) is not/],
      ["properties.__proto__.x = 'a'", /contains "__proto__".*cannot be used as field names/],
      ["constructor.name = 'Object'", /contains "constructor"/],
      ["contains(properties.prototype, 'x')", /contains "prototype"/],
      ["properties.\\_\\_proto\\_\\_.x = 'a'", /contains "__proto__"/],
      ['length(userId)', /must be true or false/],
      ["'just a string'", /must be true or false, but the string "just a string" is not/],
      ['42', /must be true or false, but the number 42 is not/],
      ['null', /must be true or false/],
      ["['a']", /must be true or false, but a list is not/],
      ["type = 'track' and 'x'", /each side of 'and' must be true or false/],
      ["type = 'track' or lowercase(event)", /each side of 'or' must be true or false/],
      ["!'x'", /operand of negation must be true or false/],
      ["properties.total > 'ten'", /'>' compares numbers/],
      ['lowercase(event) < 3', /'<' compares numbers: .* not lowercase\(…\)/],
      ['type in properties.types', /right side of 'in' must be a list literal/],
      ["lowercase(type) in ['a']", /left side of 'in' must be a field path or a literal/],
      ['type in [properties.a]', /list items must be literals, not the field path 'properties.a'/],
      ["type in ['a', 'b'", /expected '\]' to close the list/],
      ["typeof(properties.x) = 'list'", /typeof\(…\) can be compared with 'string', 'number' or 'bool'/],
      ['typeof(properties.x) = 5', /typeof\(…\) can be compared with/],
      ["(type = 'track') = true", /parenthesized condition cannot be compared/],
      ["semver(properties.v, '~', '1.0.0')", /second argument of semver\(\)/],
      ["properties. = 'x'", /cannot end with '\.'/],
      ["properties..x = 'x'", /cannot end with '\.' or contain '\.\.'/],
      ["properties.a\\.b = 'x'", /escaped '\.' .* not supported/],
      ['properties.x = 12abc', /malformed number "12a"/],
      ['properties.x = 1.2.3', /malformed number/],
      ["type = 'track' and = 'x'", /expected a value, found '='/],
    ])('%j', (condition, reason) => {
      const error = compileError(condition);
      expect(error.message).toMatch(reason);
      expect(error.message).toContain(JSON.stringify(condition));
      expect(error.field).toBe('if');
    });

    it('reports the position of the problem', () => {
      const error = compileError("type = 'track' and event = #");
      expect(error.position).toBe(27);
      expect(error.message).toMatch(/at character 28/);
    });

    it('refuses a condition that is not a string', () => {
      expect(() => compileFilterCondition(undefined as unknown as string)).toThrow(
        InvalidFilterConditionError,
      );
      expect(() => compileFilterCondition(5 as unknown as string)).toThrow(/must be a string/);
    });

    it.each([
      ['parentheses', '('.repeat(4_000) + "event = 'a'" + ')'.repeat(4_000)],
      ['negations', '!'.repeat(9_000) + "event = 'a'"],
      ['not', 'not '.repeat(2_400) + "event = 'a'"],
    ])('refuses %s nested past the limit with a clear error, not a stack overflow', (_, condition) => {
      expect(() => compileFilterCondition(condition)).toThrow(InvalidFilterConditionError);
      expect(() => compileFilterCondition(condition)).toThrow(/nest deeper than 64 levels/);
    });

    it('accepts nesting up to the limit', () => {
      const condition = '('.repeat(32) + '!'.repeat(31) + "event = 'a'" + ')'.repeat(32);
      expect(matches({ event: 'b' }, compileFilterCondition(condition))).toBe(true);
    });

    it('refuses an absurdly long condition', () => {
      const condition = "type = 'track' or ".repeat(MAX_FILTER_CONDITION_LENGTH / 10) + "type = 'page'";
      expect(() => compileFilterCondition(condition)).toThrow(/longer than 10000 characters/);
    });

    it('accepts a long but reasonable condition', () => {
      const condition = Array.from({ length: 200 }, (_, index) => `event = 'Event ${index}'`).join(' or ');
      expect(evaluate(condition, { event: 'Event 199' })).toBe(true);
      expect(evaluate(condition, { event: 'Event 200' })).toBe(false);
    });
  });
});
