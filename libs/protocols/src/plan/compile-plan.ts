import type { JsonSchema, PlanEventRule, PlanRules, SkippedRule } from '../protocols.types';
import { planRegExp, type PatternMatcher } from '../schema/plan-regexp';
import { CompiledSchema, SchemaCompiler } from '../schema/schema-compiler';

/** One rule of a plan, ready to check messages with. */
export interface CompiledRule {
  /** `null` when the stored schema did not compile: the rule checks nothing (listed in `skipped`). */
  readonly check: CompiledSchema | null;
  /**
   * Top-level keys the rule declares under `properties` (events) or `traits` (identify, group): the
   * planned ones. Empty when the rule declares no such schema: then every key is unplanned.
   */
  readonly declaredKeys: ReadonlySet<string>;
  /** `patternProperties` of that same object: keys matching one count as declared. */
  readonly declaredPatterns: readonly PatternMatcher[];
  /** The schema as compiled (JSON) and what it checks: an unchanged rule of a new version reuses this one. */
  readonly key: string;
  /** Why the schema did not compile, when `check` is null for that reason. */
  readonly compileError?: string;
}

/** Every version of one event name. */
export interface EventVersions {
  /** The entry used when the message asks for no version, or for one the plan does not have. */
  readonly lowest: CompiledRule;
  readonly byVersion: ReadonlyMap<number, CompiledRule>;
}

/**
 * A plan version compiled once: every JSON Schema turned into a validate function. Enforcement never
 * compiles anything per message; a new plan version gets a new `CompiledPlan`.
 */
export interface CompiledPlan {
  readonly planId: string;
  readonly planName: string;
  readonly events: ReadonlyMap<string, EventVersions>;
  readonly global: CompiledRule | undefined;
  readonly identify: CompiledRule | undefined;
  readonly group: CompiledRule | undefined;
  /** Rules whose schema did not compile; enforcement goes on without them. */
  readonly skipped: readonly SkippedRule[];
}

export interface PlanToCompile {
  planId: string;
  planName: string;
  rules: PlanRules;
}

/**
 * Compiles every rule of the plan. `previous`, an earlier version of the same plan, lends the rules
 * whose schema did not change, so editing one event of a large plan compiles one schema, not all.
 */
export function compilePlan(plan: PlanToCompile, previous?: CompiledPlan): CompiledPlan {
  const steps = compilePlanSteps(plan, previous);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Longest a slice of `compilePlanInSlices` runs before it lets other work run. */
export const PLAN_COMPILE_SLICE_MS = 10;

/**
 * `compilePlan` in slices: after each rule it compiles, once `sliceMs` have passed, it waits for the
 * event loop to run what is waiting (requests, timers) before going on. A plan of thousands of rules
 * takes seconds to compile; this way ingestion goes on meanwhile, and a slice lasts about as long as
 * the largest single rule takes.
 */
export async function compilePlanInSlices(
  plan: PlanToCompile,
  previous?: CompiledPlan,
  sliceMs = PLAN_COMPILE_SLICE_MS,
): Promise<CompiledPlan> {
  const steps = compilePlanSteps(plan, previous);
  let sliceStarted = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStarted >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
}

/** The compilation, one step per rule compiled (a reused rule is no step). */
function* compilePlanSteps(plan: PlanToCompile, previous?: CompiledPlan): Generator<void, CompiledPlan> {
  const compiler = new SchemaCompiler();
  const skipped: SkippedRule[] = [];
  const reusable = previous ? rulesOf(previous) : new Map<string, CompiledRule>();
  let compiledSinceStep = false;
  const compileRule = (label: string, schema: unknown, container: 'properties' | 'traits'): CompiledRule => {
    const key = `${container}:${JSON.stringify(schema)}`;
    let rule = reusable.get(key);
    if (!rule) {
      compiledSinceStep = true;
      const declared = declaredKeysOf(schema, container);
      if (!isObject(schema)) rule = { check: null, key, ...declared };
      else {
        try {
          rule = { check: compiler.compile(schema), key, ...declared };
        } catch (error) {
          const compileError = error instanceof Error ? error.message : String(error);
          rule = { check: null, key, compileError, ...declared };
        }
      }
    }
    if (rule.compileError !== undefined) skipped.push({ rule: label, error: rule.compileError });
    return rule;
  };

  const versionsByName = new Map<string, Map<number, CompiledRule>>();
  for (const entry of Array.isArray(plan.rules.events) ? plan.rules.events : []) {
    if (!isObject(entry) || typeof entry.name !== 'string') continue;
    const version = eventVersionOf(entry as PlanEventRule);
    const rule = compileRule(`events[${entry.name} v${version}]`, entry.rules ?? {}, 'properties');
    if (compiledSinceStep) {
      compiledSinceStep = false;
      yield;
    }
    const versions = versionsByName.get(entry.name) ?? new Map<number, CompiledRule>();
    // Two entries with one name and version are refused on write; of any stored before that, the first wins.
    if (!versions.has(version)) versions.set(version, rule);
    versionsByName.set(entry.name, versions);
  }
  const events = new Map<string, EventVersions>();
  for (const [name, byVersion] of versionsByName) {
    const lowestVersion = Math.min(...byVersion.keys());
    events.set(name, { lowest: byVersion.get(lowestVersion)!, byVersion });
  }

  const optional = (label: 'global' | 'identify' | 'group', container: 'properties' | 'traits') => {
    const schema = plan.rules[label];
    return isObject(schema) ? compileRule(label, schema, container) : undefined;
  };
  const common: Partial<Record<'global' | 'identify' | 'group', CompiledRule>> = {};
  for (const [label, container] of [
    ['global', 'properties'],
    ['identify', 'traits'],
    ['group', 'traits'],
  ] as const) {
    common[label] = optional(label, container);
    if (compiledSinceStep) {
      compiledSinceStep = false;
      yield;
    }
  }
  return { planId: plan.planId, planName: plan.planName, events, ...common, skipped } as CompiledPlan;
}

function rulesOf(plan: CompiledPlan): Map<string, CompiledRule> {
  const rules = new Map<string, CompiledRule>();
  for (const versions of plan.events.values()) {
    for (const rule of versions.byVersion.values()) rules.set(rule.key, rule);
  }
  for (const rule of [plan.global, plan.identify, plan.group]) if (rule) rules.set(rule.key, rule);
  return rules;
}

/** An entry without `version` counts as 1 (docs/protocols.md R2). */
function eventVersionOf(entry: PlanEventRule): number {
  return Number.isInteger(entry.version) ? (entry.version as number) : 1;
}

function declaredKeysOf(
  schema: unknown,
  container: 'properties' | 'traits',
): { declaredKeys: ReadonlySet<string>; declaredPatterns: readonly PatternMatcher[] } {
  const containerSchema =
    isObject(schema) && isObject(schema.properties) ? schema.properties[container] : undefined;
  if (!isObject(containerSchema)) return { declaredKeys: new Set(), declaredPatterns: [] };
  const declaredKeys = new Set(
    isObject(containerSchema.properties) ? Object.keys(containerSchema.properties) : [],
  );
  const declaredPatterns: PatternMatcher[] = [];
  if (isObject(containerSchema.patternProperties)) {
    for (const pattern of Object.keys(containerSchema.patternProperties)) {
      try {
        declaredPatterns.push(planRegExp(pattern));
      } catch {
        // A pattern that is not a regex declares nothing; the schema itself is then skipped by Ajv.
      }
    }
  }
  return { declaredKeys, declaredPatterns };
}

export function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
