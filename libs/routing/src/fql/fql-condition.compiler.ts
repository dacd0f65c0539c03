/**
 * Compiles a destination filter's `if` (Segment's Filter Query Language, FQL) into the matcher that
 * `@segment/tsub` evaluates: `{ type: 'all' }`, or `{ type: 'fql', ir }` where `ir` is the JSON text of
 * tsub's intermediate representation. Segment compiles FQL on its servers and ships only the IR to
 * analytics.js, so the package has no compiler; this is ours.
 *
 * The IR, as tsub's evaluator reads it:
 * - a field path is a bare string (`"properties.total"`), resolved with dot-separated lookup;
 * - a literal is `{"value": x}`; a list literal is `{"value": [{"value": a}, {"value": b}]}`;
 * - an operation is an array: `["and", a, b, …]`, `["or", …]`, `["!", a]`, `["=", l, r]`, `["!=", l, r]`,
 *   `["<", l, r]` (and `<=`, `>`, `>=`), `["in", item, list]`, and the functions `["contains", s, sub]`,
 *   `["match", s, glob]`, `["lowercase", s]`, `["length", v]`, `["typeof", v]`, `["semver", v, op, v]`.
 *
 * Accepted syntax (Segment's FQL reference, plus `not` as a spelling of `!`):
 *   condition  := or
 *   or         := and ( 'or' and )*
 *   and        := unary ( 'and' unary )*
 *   unary      := ( '!' | 'not' ) unary | '(' or ')' | comparison
 *   comparison := operand [ ( '=' | '!=' | '<' | '<=' | '>' | '>=' ) operand | 'in' list ]
 *   operand    := 'string' | "string" | number | true | false | null | list | path | function '(' args ')'
 * Field paths are dot-separated segments of `a-z A-Z 0-9 _ -`; any other character is escaped with `\`
 * (`properties.product\ 1.price`). The whole condition `all` (or `'all'`) matches every message.
 * No segment may be `__proto__`, `constructor` or `prototype`: they lead out of the message into
 * built-in prototypes (`filters/field-path.ts`).
 *
 * Conditions that tsub would evaluate to a constant `false` whatever the message are refused here, so a
 * filter that can never work is a 400 at create time rather than a silent no-op:
 * - the condition (and each side of `and`, `or`, `!`) must be true/false-valued: a comparison, `in`,
 *   `contains`, `match`, `semver`, a field path (true when the field is the boolean `true`) or `true`/`false`;
 * - function arguments must be field paths or literals (tsub does not evaluate nested calls);
 * - `<`, `<=`, `>`, `>=` take numbers: a field path, a number or `length(…)`;
 * - the right side of `in` must be a list literal (tsub cannot look inside a list read from the message);
 * - `typeof(…)` is compared with `'string'`, `'number'` or `'bool'`; tsub reports JavaScript's `typeof`,
 *   so `'bool'` is compiled to `'boolean'` (FQL's `'list'` and `'null'` have no tsub equivalent).
 * A parenthesized condition is a condition, not a value, so `(a = b) = true` is refused as well.
 */
import { InvalidFilterConditionError } from '../filters/destination-filter.errors';
import { describeForbiddenSegment, forbiddenFieldPathSegment } from '../filters/field-path';
import { MAX_MATCH_GLOB_LENGTH } from './fql-glob';

/** The matcher shape `matches(event, matcher)` of `@segment/tsub` takes. */
export type FilterConditionMatcher =
  { readonly type: 'all'; readonly ir: '' } | { readonly type: 'fql'; readonly ir: string };

export const MATCH_ALL_CONDITION: FilterConditionMatcher = { type: 'all', ir: '' };

/** Longest condition accepted; a guard against pathological input, far above any real filter. */
export const MAX_FILTER_CONDITION_LENGTH = 10_000;

/**
 * Deepest nesting of parentheses and negations accepted. The parser, the IR and tsub's evaluator all
 * recurse once per level, so without a bound a condition of a few thousand `(` would exhaust the stack
 * (in the Config API and in every router); real conditions nest a handful of levels.
 */
export const MAX_FILTER_CONDITION_NESTING = 64;

/**
 * Compiles `condition` (a filter's `if`) into a tsub matcher.
 * @throws InvalidFilterConditionError naming what is wrong and where.
 */
export function compileFilterCondition(condition: string): FilterConditionMatcher {
  if (typeof condition !== 'string') {
    throw new InvalidFilterConditionError(String(condition), 'the condition must be a string');
  }
  if (condition.length > MAX_FILTER_CONDITION_LENGTH) {
    throw new InvalidFilterConditionError(
      condition.slice(0, 40) + '…',
      `the condition is longer than ${MAX_FILTER_CONDITION_LENGTH} characters`,
    );
  }
  const trimmed = condition.trim();
  if (trimmed === 'all' || trimmed === "'all'" || trimmed === '"all"') {
    return MATCH_ALL_CONDITION;
  }
  if (trimmed === '') {
    throw new InvalidFilterConditionError(
      condition,
      "the condition is empty; use 'all' to match every message",
    );
  }
  const tokens = tokenize(condition);
  const parser = new ConditionParser(condition, tokens);
  const root = parser.parseCondition();
  requireTrueFalseValued(condition, root, 'the condition');
  return { type: 'fql', ir: JSON.stringify(toIntermediateRepresentation(root)) };
}

// ---------------------------------------------------------------------------------------------------
// Tokens

type Token =
  | { kind: 'string'; value: string; position: number }
  | { kind: 'number'; value: number; position: number }
  | { kind: 'path'; segments: string[]; escaped: boolean; position: number }
  | { kind: 'symbol'; value: SymbolText; position: number }
  | { kind: 'end'; position: number };

type SymbolText = '(' | ')' | '[' | ']' | ',' | '=' | '!=' | '!' | '<' | '<=' | '>' | '>=';

const PATH_SEGMENT_CHARACTER = /[A-Za-z0-9_-]/;
const PATH_START_CHARACTER = /[A-Za-z_]/;
const DIGIT = /[0-9]/;
const WHITESPACE = /\s/;

function tokenize(condition: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  const fail = (reason: string, at: number): never => {
    throw new InvalidFilterConditionError(condition, reason, at);
  };

  while (index < condition.length) {
    const character = condition[index];
    if (WHITESPACE.test(character)) {
      index += 1;
      continue;
    }
    const start = index;

    if ('()[],='.includes(character)) {
      if (character === '=' && condition[index + 1] === '=') fail("use '=' to compare, not '=='", start);
      tokens.push({ kind: 'symbol', value: character as SymbolText, position: start });
      index += 1;
      continue;
    }
    if (character === '!' || character === '<' || character === '>') {
      const withEquals = condition[index + 1] === '=';
      tokens.push({
        kind: 'symbol',
        value: (withEquals ? character + '=' : character) as SymbolText,
        position: start,
      });
      index += withEquals ? 2 : 1;
      continue;
    }

    if (character === "'" || character === '"') {
      let value = '';
      index += 1;
      for (;;) {
        if (index >= condition.length) fail('unterminated string', start);
        const next = condition[index];
        if (next === character) {
          index += 1;
          break;
        }
        // Only the quote and the backslash itself are escapes; any other backslash stays, so glob
        // escapes such as 'ab\*d' reach match() intact (Segment's documented example).
        if (next === '\\' && (condition[index + 1] === character || condition[index + 1] === '\\')) {
          value += condition[index + 1];
          index += 2;
          continue;
        }
        value += next;
        index += 1;
      }
      tokens.push({ kind: 'string', value, position: start });
      continue;
    }

    if (DIGIT.test(character) || (character === '-' && DIGIT.test(condition[index + 1] ?? ''))) {
      const match = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(condition.slice(index));
      const text = match![0];
      index += text.length;
      if (
        index < condition.length &&
        (PATH_SEGMENT_CHARACTER.test(condition[index]) || condition[index] === '.')
      ) {
        fail(`malformed number "${text}${condition[index]}"`, start);
      }
      tokens.push({ kind: 'number', value: Number(text), position: start });
      continue;
    }

    if (PATH_START_CHARACTER.test(character) || character === '\\') {
      const segments: string[] = [];
      let segment = '';
      let escaped = false;
      for (;;) {
        const next = condition[index];
        if (next === '\\') {
          const escapedCharacter = condition[index + 1];
          if (escapedCharacter === undefined) fail("a field path cannot end with '\\'", index);
          if (escapedCharacter === '.') {
            fail(
              "an escaped '.' inside a field name is not supported (tsub splits paths on every '.')",
              index,
            );
          }
          segment += escapedCharacter;
          escaped = true;
          index += 2;
          continue;
        }
        if (next !== undefined && PATH_SEGMENT_CHARACTER.test(next)) {
          segment += next;
          index += 1;
          continue;
        }
        if (next === '.') {
          const after = condition[index + 1];
          if (after === undefined || !(PATH_SEGMENT_CHARACTER.test(after) || after === '\\')) {
            fail("a field path cannot end with '.' or contain '..'", index);
          }
          segments.push(segment);
          segment = '';
          index += 1;
          continue;
        }
        break;
      }
      segments.push(segment);
      const forbidden = forbiddenFieldPathSegment(segments);
      if (forbidden !== undefined) fail(describeForbiddenSegment(segments.join('.'), forbidden), start);
      tokens.push({ kind: 'path', segments, escaped, position: start });
      continue;
    }

    fail(`unexpected character '${character}'`, start);
  }
  tokens.push({ kind: 'end', position: condition.length });
  return tokens;
}

// ---------------------------------------------------------------------------------------------------
// Syntax tree

type Literal = string | number | boolean | null;

type ConditionNode =
  | { kind: 'literal'; value: Literal; position: number }
  | { kind: 'list'; items: Literal[]; position: number }
  | { kind: 'path'; path: string; position: number }
  | { kind: 'call'; name: FunctionName; args: ConditionNode[]; position: number }
  | { kind: 'not'; operand: ConditionNode; position: number }
  | { kind: 'logical'; operator: 'and' | 'or'; operands: ConditionNode[]; position: number }
  | {
      kind: 'comparison';
      operator: ComparisonOperator;
      left: ConditionNode;
      right: ConditionNode;
      position: number;
    }
  | { kind: 'in'; item: ConditionNode; list: ConditionNode; position: number };

type ComparisonOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';
const COMPARISON_OPERATORS: readonly string[] = ['=', '!=', '<', '<=', '>', '>='];
const NUMERIC_OPERATORS: readonly string[] = ['<', '<=', '>', '>='];

type FunctionName = 'contains' | 'match' | 'lowercase' | 'length' | 'typeof' | 'semver';
const FUNCTION_ARITY: Readonly<Record<FunctionName, number>> = {
  contains: 2,
  match: 2,
  lowercase: 1,
  length: 1,
  typeof: 1,
  semver: 3,
};
const TRUE_FALSE_FUNCTIONS: readonly FunctionName[] = ['contains', 'match', 'semver'];
const SEMVER_OPERATORS: readonly string[] = ['=', '!=', '<', '<=', '>', '>='];
/** FQL's type names for typeof(), and what tsub's JavaScript typeof returns for them. */
const TYPEOF_NAMES: Readonly<Record<string, string>> = {
  string: 'string',
  number: 'number',
  bool: 'boolean',
  boolean: 'boolean',
};

const KEYWORDS = ['and', 'or', 'not', 'in', 'true', 'false', 'null'] as const;
type Keyword = (typeof KEYWORDS)[number];

class ConditionParser {
  private index = 0;
  private nesting = 0;

  constructor(
    private readonly condition: string,
    private readonly tokens: Token[],
  ) {}

  parseCondition(): ConditionNode {
    const node = this.parseOr();
    const next = this.peek();
    if (next.kind !== 'end') {
      this.fail(`expected 'and', 'or' or the end of the condition, found ${describe(next)}`, next.position);
    }
    return node;
  }

  private parseOr(): ConditionNode {
    const first = this.parseAnd();
    const operands = [first];
    while (this.keywordAhead('or')) {
      this.index += 1;
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? first : this.logical('or', operands);
  }

  private parseAnd(): ConditionNode {
    const first = this.parseUnary();
    const operands = [first];
    while (this.keywordAhead('and')) {
      this.index += 1;
      operands.push(this.parseUnary());
    }
    return operands.length === 1 ? first : this.logical('and', operands);
  }

  private logical(operator: 'and' | 'or', operands: ConditionNode[]): ConditionNode {
    for (const operand of operands)
      requireTrueFalseValued(this.condition, operand, `each side of '${operator}'`);
    return { kind: 'logical', operator, operands, position: operands[0].position };
  }

  private parseUnary(): ConditionNode {
    const token = this.peek();
    if (this.symbolAhead('!') || this.keywordAhead('not')) {
      this.index += 1;
      const operand = this.nested(token.position, () => this.parseUnary());
      requireTrueFalseValued(this.condition, operand, 'the operand of negation');
      return { kind: 'not', operand, position: token.position };
    }
    if (this.symbolAhead('(')) {
      this.index += 1;
      const inner = this.nested(token.position, () => this.parseOr());
      this.expectSymbol(')', "')' to close '('");
      const after = this.peek();
      if (after.kind === 'symbol' && COMPARISON_OPERATORS.includes(after.value)) {
        this.fail(
          'a parenthesized condition cannot be compared; compare field paths, literals or function results',
          after.position,
        );
      }
      return inner;
    }
    return this.parseComparison();
  }

  private nested(position: number, parse: () => ConditionNode): ConditionNode {
    if (this.nesting >= MAX_FILTER_CONDITION_NESTING) {
      this.fail(
        `parentheses and negations nest deeper than ${MAX_FILTER_CONDITION_NESTING} levels`,
        position,
      );
    }
    this.nesting += 1;
    try {
      return parse();
    } finally {
      this.nesting -= 1;
    }
  }

  private parseComparison(): ConditionNode {
    const left = this.parseOperand();
    const next = this.peek();
    if (next.kind === 'symbol' && COMPARISON_OPERATORS.includes(next.value)) {
      this.index += 1;
      const operator = next.value as ComparisonOperator;
      const right = this.parseOperand();
      return this.comparison(operator, left, right, next.position);
    }
    if (this.keywordAhead('in')) {
      this.index += 1;
      const list = this.parseOperand();
      if (left.kind !== 'path' && !(left.kind === 'literal')) {
        this.fail("the left side of 'in' must be a field path or a literal", left.position);
      }
      if (list.kind !== 'list') {
        this.fail("the right side of 'in' must be a list literal such as ['a', 'b']", list.position);
      }
      return { kind: 'in', item: left, list, position: left.position };
    }
    return left;
  }

  private comparison(
    operator: ComparisonOperator,
    left: ConditionNode,
    right: ConditionNode,
    position: number,
  ): ConditionNode {
    if (NUMERIC_OPERATORS.includes(operator)) {
      for (const side of [left, right]) {
        const numeric =
          side.kind === 'path' ||
          (side.kind === 'literal' && typeof side.value === 'number') ||
          (side.kind === 'call' && side.name === 'length');
        if (!numeric) {
          this.fail(
            `'${operator}' compares numbers: use a field path, a number or length(…), not ${describeNode(side)}`,
            side.position,
          );
        }
      }
      return { kind: 'comparison', operator, left, right, position };
    }
    // typeof() against a type name: FQL spells the boolean type 'bool', tsub (JavaScript) 'boolean'.
    const typeofSide = [left, right].find((side) => side.kind === 'call' && side.name === 'typeof');
    const otherSide = typeofSide === left ? right : left;
    if (typeofSide && otherSide.kind === 'literal') {
      const typeName = typeof otherSide.value === 'string' ? TYPEOF_NAMES[otherSide.value] : undefined;
      if (typeName === undefined) {
        this.fail(
          `typeof(…) can be compared with 'string', 'number' or 'bool', not ${describeNode(otherSide)}`,
          otherSide.position,
        );
      }
      const mapped: ConditionNode = { ...otherSide, value: typeName };
      return typeofSide === left
        ? { kind: 'comparison', operator, left, right: mapped, position }
        : { kind: 'comparison', operator, left: mapped, right, position };
    }
    return { kind: 'comparison', operator, left, right, position };
  }

  private parseOperand(): ConditionNode {
    const token = this.peek();
    switch (token.kind) {
      case 'string':
        this.index += 1;
        return { kind: 'literal', value: token.value, position: token.position };
      case 'number':
        this.index += 1;
        return { kind: 'literal', value: token.value, position: token.position };
      case 'path': {
        const keyword = asKeyword(token);
        if (keyword === 'true' || keyword === 'false' || keyword === 'null') {
          this.index += 1;
          return {
            kind: 'literal',
            value: keyword === 'null' ? null : keyword === 'true',
            position: token.position,
          };
        }
        if (keyword !== undefined) this.fail(`expected a value, found '${keyword}'`, token.position);
        this.index += 1;
        if (this.symbolAhead('(')) return this.parseCall(token);
        return { kind: 'path', path: token.segments.join('.'), position: token.position };
      }
      case 'symbol':
        if (token.value === '[') return this.parseList();
        return this.fail(`expected a value, found ${describe(token)}`, token.position);
      case 'end':
        return this.fail('the condition ends where a value was expected', token.position);
    }
  }

  private parseCall(nameToken: Extract<Token, { kind: 'path' }>): ConditionNode {
    const name = nameToken.segments.join('.');
    if (nameToken.segments.length !== 1 || nameToken.escaped || !(name in FUNCTION_ARITY)) {
      this.fail(
        `unknown function '${name}'; supported: ${Object.keys(FUNCTION_ARITY).join(', ')}`,
        nameToken.position,
      );
    }
    const functionName = name as FunctionName;
    this.index += 1; // '('
    const args: ConditionNode[] = [];
    if (!this.symbolAhead(')')) {
      for (;;) {
        const argument = this.parseOperand();
        if (argument.kind === 'call') {
          this.fail(
            `arguments of ${functionName}() must be field paths or literals, not function calls`,
            argument.position,
          );
        }
        args.push(argument);
        if (this.symbolAhead(',')) {
          this.index += 1;
          continue;
        }
        break;
      }
    }
    this.expectSymbol(')', `')' to close ${functionName}(`);
    const arity = FUNCTION_ARITY[functionName];
    if (args.length !== arity) {
      this.fail(
        `${functionName}() takes ${arity} argument${arity === 1 ? '' : 's'}, got ${args.length}`,
        nameToken.position,
      );
    }
    if (functionName === 'contains' || functionName === 'match') {
      for (const argument of args) {
        if (argument.kind === 'list' || (argument.kind === 'literal' && typeof argument.value !== 'string')) {
          this.fail(`${functionName}() works on strings, not ${describeNode(argument)}`, argument.position);
        }
      }
    }
    const glob = args[1];
    if (
      functionName === 'match' &&
      glob.kind === 'literal' &&
      typeof glob.value === 'string' &&
      glob.value.length > MAX_MATCH_GLOB_LENGTH
    ) {
      // The glob's length bounds what one match() costs (fql-glob.ts).
      this.fail(`the glob of match() is longer than ${MAX_MATCH_GLOB_LENGTH} characters`, glob.position);
    }
    if (functionName === 'semver') {
      const operator = args[1];
      if (
        operator.kind !== 'literal' ||
        typeof operator.value !== 'string' ||
        !SEMVER_OPERATORS.includes(operator.value)
      ) {
        this.fail(
          `the second argument of semver() is one of ${SEMVER_OPERATORS.map((o) => `'${o}'`).join(', ')}`,
          operator.position,
        );
      }
    }
    return { kind: 'call', name: functionName, args, position: nameToken.position };
  }

  private parseList(): ConditionNode {
    const open = this.peek();
    this.index += 1;
    const items: Literal[] = [];
    if (!this.symbolAhead(']')) {
      for (;;) {
        const item = this.parseOperand();
        if (item.kind !== 'literal')
          this.fail(`list items must be literals, not ${describeNode(item)}`, item.position);
        items.push(item.value);
        if (this.symbolAhead(',')) {
          this.index += 1;
          continue;
        }
        break;
      }
    }
    this.expectSymbol(']', "']' to close the list");
    return { kind: 'list', items, position: open.position };
  }

  private peek(): Token {
    return this.tokens[this.index];
  }

  private symbolAhead(symbol: SymbolText): boolean {
    const token = this.peek();
    return token.kind === 'symbol' && token.value === symbol;
  }

  private keywordAhead(keyword: Keyword): boolean {
    return asKeyword(this.peek()) === keyword;
  }

  private expectSymbol(symbol: SymbolText, what: string): void {
    if (!this.symbolAhead(symbol)) {
      const token = this.peek();
      this.fail(`expected ${what}, found ${describe(token)}`, token.position);
    }
    this.index += 1;
  }

  private fail(reason: string, position: number): never {
    throw new InvalidFilterConditionError(this.condition, reason, position);
  }
}

function asKeyword(token: Token): Keyword | undefined {
  if (token.kind !== 'path' || token.escaped || token.segments.length !== 1) return undefined;
  return (KEYWORDS as readonly string[]).includes(token.segments[0])
    ? (token.segments[0] as Keyword)
    : undefined;
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the condition';
    case 'string':
      return `the string ${JSON.stringify(token.value)}`;
    case 'number':
      return `the number ${token.value}`;
    case 'path':
      return asKeyword(token) ? `'${asKeyword(token)}'` : `the field path '${token.segments.join('.')}'`;
    case 'symbol':
      return `'${token.value}'`;
  }
}

function describeNode(node: ConditionNode): string {
  switch (node.kind) {
    case 'literal':
      return node.value === null ? 'null' : `the ${typeof node.value} ${JSON.stringify(node.value)}`;
    case 'list':
      return 'a list';
    case 'path':
      return `the field path '${node.path}'`;
    case 'call':
      return `${node.name}(…)`;
    default:
      return 'a condition';
  }
}

function requireTrueFalseValued(condition: string, node: ConditionNode, what: string): void {
  switch (node.kind) {
    case 'not':
    case 'logical':
    case 'comparison':
    case 'in':
    case 'path':
      return;
    case 'literal':
      if (typeof node.value === 'boolean') return;
      break;
    case 'call':
      if (TRUE_FALSE_FUNCTIONS.includes(node.name)) return;
      break;
    case 'list':
      break;
  }
  throw new InvalidFilterConditionError(
    condition,
    `${what} must be true or false, but ${describeNode(node)} is not; compare it, e.g. lowercase(event) = 'signup'`,
    node.position,
  );
}

// ---------------------------------------------------------------------------------------------------
// Intermediate representation

type IntermediateRepresentation = string | { value: unknown } | IntermediateRepresentation[];

function toIntermediateRepresentation(node: ConditionNode): IntermediateRepresentation {
  switch (node.kind) {
    case 'literal':
      return { value: node.value };
    case 'list':
      return { value: node.items.map((item) => ({ value: item })) };
    case 'path':
      return node.path;
    case 'call':
      return [node.name, ...node.args.map(toIntermediateRepresentation)];
    case 'not':
      return ['!', toIntermediateRepresentation(node.operand)];
    case 'logical':
      return [node.operator, ...node.operands.map(toIntermediateRepresentation)];
    case 'comparison':
      return [
        node.operator,
        toIntermediateRepresentation(node.left),
        toIntermediateRepresentation(node.right),
      ];
    case 'in':
      return ['in', toIntermediateRepresentation(node.item), toIntermediateRepresentation(node.list)];
  }
}
