import Ajv, { type Options, type ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '../protocols.types';
import { ajvPlanRegExp } from './plan-regexp';

/** A compiled rule: returns true or fills `errors`, like any Ajv validate function. */
export type CompiledSchema = ValidateFunction;

type Draft = 'draft-04' | 'draft-06' | 'draft-07';

/**
 * Options shared by every draft. Plans come from Segment's UI (draft-04 with `labels` and `id`
 * paths), from typewriter users (draft-07) and from hand-written JSON, so the compiler must accept
 * what it does not know instead of refusing the plan:
 * - `strict: false`: unknown keywords (`labels`, UI annotations) and unknown formats are ignored;
 * - `allErrors`: every violation of a message is reported, not just the first;
 * - `verbose`: errors carry the offending value, needed for "given: <type>";
 * - `unicodeRegExp: false`: Segment's patterns are Go regular expressions, many of which the `u`
 *   flag would refuse (`\-` outside a class, for one);
 * - `messages: false`: descriptions are written from the error's parameters (violation-from-error).
 */
const COMMON_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  verbose: true,
  unicodeRegExp: false,
  messages: false,
  logger: false,
  // `pattern` and `patternProperties` come from plan authors: linear-time matching (plan-regexp).
  code: { regExp: ajvPlanRegExp },
};

/**
 * Compiles the JSON Schemas of one plan version. One instance per plan version, so that schemas of
 * an older version do not stay cached in a long-lived Ajv, and so that the same UI-generated `id`
 * in two events of one plan cannot collide: each schema is removed from the instance once compiled
 * (the validate function keeps what it needs).
 */
export class SchemaCompiler {
  private readonly instances = new Map<Draft, Ajv>();

  /** Throws when the schema is not valid for its draft, or holds a pattern that is not a regex. */
  compile(schema: JsonSchema): CompiledSchema {
    const draft = draftOf(schema.$schema);
    const ajv = this.instance(draft);
    // The instance already speaks the draft. An unknown or oddly spelled `$schema` (no `#`, https)
    // would make Ajv look for a meta-schema it does not have, so the copy Ajv sees has none.
    const compilable = withoutKey(schema, '$schema');
    try {
      return ajv.compile(compilable);
    } finally {
      ajv.removeSchema(compilable);
    }
  }

  private instance(draft: Draft): Ajv {
    let ajv = this.instances.get(draft);
    if (!ajv) {
      if (draft === 'draft-04') {
        ajv = new AjvDraft04(COMMON_OPTIONS) as unknown as Ajv;
      } else {
        // Draft-07 only adds keywords to draft-06 (`if`/`then`/`else`, `contentMediaType`, ...), so
        // one engine checks both.
        ajv = new Ajv(COMMON_OPTIONS);
      }
      addFormats(ajv);
      this.instances.set(draft, ajv);
    }
    return ajv;
  }
}

/** `$schema` decides the draft; absent or unknown means draft-07, as typewriter does. */
export function draftOf(schemaUri: unknown): Draft {
  if (typeof schemaUri !== 'string') return 'draft-07';
  if (/draft-04\/schema/.test(schemaUri)) return 'draft-04';
  if (/draft-06\/schema/.test(schemaUri)) return 'draft-06';
  return 'draft-07';
}

function withoutKey(schema: JsonSchema, key: string): JsonSchema {
  const copy = { ...schema };
  delete copy[key];
  return copy;
}
