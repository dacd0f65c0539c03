import type { ErrorObject } from 'ajv';
import type { Violation } from '../protocols.types';

/**
 * Turns Ajv's errors into Segment's violation records (docs/protocols.md R9): the field is a dotted
 * path from the message root, and type and description follow gojsonschema, the validator Segment's
 * Protocols reports with, so users see the words they know from Segment.
 */
export function violationsFromErrors(errors: readonly ErrorObject[]): Violation[] {
  const violations: Violation[] = [];
  const combinators = new Set(errors.filter(isCombinatorError).map((error) => error.schemaPath));
  for (const error of errors) {
    // anyOf / oneOf / not report the combinator alone, not why each branch failed (as gojsonschema).
    if (combinators.size > 0 && underCombinator(error.schemaPath, combinators)) continue;
    violations.push(violationFromError(error));
  }
  return violations;
}

/** True when a strict `/`-ended start of the schema path is a failed combinator's path (a Set lookup each). */
function underCombinator(schemaPath: string, combinators: ReadonlySet<string>): boolean {
  for (let end = schemaPath.indexOf('/'); end >= 0; end = schemaPath.indexOf('/', end + 1)) {
    if (combinators.has(schemaPath.slice(0, end))) return true;
  }
  return false;
}

function isCombinatorError(error: ErrorObject): boolean {
  return error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'not';
}

export function violationFromError(error: ErrorObject): Violation {
  const field = fieldOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const missing = childField(field, String(params.missingProperty));
      return { type: 'Required', field: missing, description: `${missing} is required` };
    }
    case 'type':
      return {
        type: 'Invalid Type',
        field,
        description: `Invalid type. Expected: ${expectedTypes(params.type)}, given: ${jsonTypeOf(error.data)}`,
      };
    case 'enum':
      return {
        type: 'Enum',
        field,
        description: `${field} must be one of the following: ${listValues(params.allowedValues)}`,
      };
    case 'const':
      return {
        type: 'Const',
        field,
        description: `${field} does not match: ${JSON.stringify(params.allowedValue)}`,
      };
    case 'pattern':
      return { type: 'Pattern', field, description: `Does not match pattern '${String(params.pattern)}'` };
    case 'format':
      return { type: 'Format', field, description: `Does not match format '${String(params.format)}'` };
    case 'minLength':
      return {
        type: 'String Gte',
        field,
        description: `String length must be greater than or equal to ${String(params.limit)}`,
      };
    case 'maxLength':
      return {
        type: 'String Lte',
        field,
        description: `String length must be less than or equal to ${String(params.limit)}`,
      };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return numberLimit(field, String(params.comparison), params.limit);
    case 'multipleOf':
      return {
        type: 'Multiple Of',
        field,
        description: `Must be a multiple of ${String(params.multipleOf)}`,
      };
    case 'additionalProperties': {
      const property = String(params.additionalProperty);
      return {
        type: 'Additional Property Not Allowed',
        field: childField(field, property),
        description: `Additional property ${property} is not allowed`,
      };
    }
    case 'minItems':
      return {
        type: 'Array Min Items',
        field,
        description: `Array must have at least ${String(params.limit)} items`,
      };
    case 'maxItems':
      return {
        type: 'Array Max Items',
        field,
        description: `Array must have at most ${String(params.limit)} items`,
      };
    case 'uniqueItems':
      return {
        type: 'Unique',
        field,
        description: `array items[${String(params.j)},${String(params.i)}] must be unique`,
      };
    case 'additionalItems':
      return {
        type: 'Array No Additional Items',
        field,
        description: 'No additional items allowed on array',
      };
    case 'contains':
      return { type: 'Contains', field, description: 'At least one of the items must match' };
    case 'minProperties':
      return {
        type: 'Array Min Properties',
        field,
        description: `Must have at least ${String(params.limit)} properties`,
      };
    case 'maxProperties':
      return {
        type: 'Array Max Properties',
        field,
        description: `Must have at most ${String(params.limit)} properties`,
      };
    case 'dependencies':
    case 'dependentRequired':
      return {
        type: 'Missing Dependency',
        field,
        description: `Has a dependency on ${String(params.missingProperty)}`,
      };
    case 'propertyNames':
      return {
        type: 'Invalid Property Name',
        field,
        description: `Property name of "${String(params.propertyName)}" does not match`,
      };
    case 'anyOf':
      return { type: 'Number Any Of', field, description: 'Must validate at least one schema (anyOf)' };
    case 'oneOf':
      return { type: 'Number One Of', field, description: 'Must validate one and only one schema (oneOf)' };
    case 'not':
      return { type: 'Number Not', field, description: 'Must not validate the schema (not)' };
    case 'if':
      return params.failingKeyword === 'else'
        ? { type: 'Condition Else', field, description: 'Must validate "else" as "if" was not valid' }
        : { type: 'Condition Then', field, description: 'Must validate "then" as "if" was valid' };
    case 'false schema':
      return { type: 'False', field, description: 'False always fails validation' };
    default:
      return {
        type: titleCase(error.keyword),
        field,
        description: error.message ?? `Fails ${error.keyword}`,
      };
  }
}

function numberLimit(field: string, comparison: string, limit: unknown): Violation {
  const value = String(limit);
  switch (comparison) {
    case '>=':
      return { type: 'Number Gte', field, description: `Must be greater than or equal to ${value}` };
    case '>':
      return { type: 'Number Gt', field, description: `Must be greater than ${value}` };
    case '<=':
      return { type: 'Number Lte', field, description: `Must be less than or equal to ${value}` };
    default:
      return { type: 'Number Lt', field, description: `Must be less than ${value}` };
  }
}

/** `/properties/a~1b/0` -> `properties.a/b.0`; the message itself is `(root)`. */
export function fieldOf(instancePath: string): string {
  if (instancePath === '') return '(root)';
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function childField(parent: string, key: string): string {
  return parent === '(root)' ? key : `${parent}.${key}`;
}

function expectedTypes(type: unknown): string {
  return Array.isArray(type) ? type.join(',') : String(type);
}

/** JSON's type names as gojsonschema gives them: whole numbers are `integer`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function listValues(values: unknown): string {
  return Array.isArray(values) ? values.map((value) => JSON.stringify(value)).join(', ') : String(values);
}

function titleCase(keyword: string): string {
  return keyword
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[\s_]+/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
