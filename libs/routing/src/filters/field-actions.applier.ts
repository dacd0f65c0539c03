/**
 * Applies the field actions of destination filters (block list: drop the named fields; allow list: keep
 * only the named ones) to a message, with the semantics of @segment/tsub's `drop_properties` and
 * `allow_properties` transformers, which this replaces on the router's hot path:
 *
 * - a target is `{ "<object path>": ["key", …] }`; the object at the path loses those keys (drop) or every
 *   other key (allow); when the path leads to an array, each object in it is edited the same way;
 * - a path that leads nowhere, or to a value that is not an object, changes nothing.
 *
 * What differs from tsub is how paths are followed and how the result is built. tsub looks paths up with
 * `dlv`, which follows inherited properties, so `properties.__proto__` is `Object.prototype` and a block
 * list could delete its methods for every tenant of the process. Here a path follows own properties only
 * (`Object.hasOwn`), and only objects this module copied are ever changed: the copy is made along the
 * edited paths (copy on write), installed over the own property it replaces (so no setter inherited
 * from a prototype runs), and the caller's message is never touched. No recursion: the work
 * is bounded by the paths of the filter, whatever the depth of the message.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import type { FieldSelection } from './filter-actions.compiler';

export type FieldTargets = Readonly<Record<string, readonly string[]>>;

export type FieldEdit =
  | { readonly kind: 'drop_fields'; readonly targets: FieldTargets }
  | { readonly kind: 'allow_fields'; readonly targets: FieldTargets };

/** Returns a message with `edits` applied in order; the input is not mutated. */
export function applyFieldEdits(message: NormalizedMessage, edits: readonly FieldEdit[]): NormalizedMessage {
  const copies = new CopyOnWrite(message as Record<string, unknown>);
  for (const edit of edits) {
    for (const [path, keys] of Object.entries(edit.targets)) {
      for (const target of copies.editableObjectsAt(path)) {
        if (edit.kind === 'drop_fields') {
          for (const key of keys) if (Object.hasOwn(target, key)) delete target[key];
        } else {
          for (const key of Object.keys(target)) if (!keys.includes(key)) delete target[key];
        }
      }
    }
  }
  return copies.root as NormalizedMessage;
}

/**
 * Block-list targets: a nested field `properties.address.city` is the key `city` of the object
 * `properties.address`.
 */
export function dropTargets(fields: FieldSelection): FieldTargets {
  const targets: Record<string, string[]> = {};
  for (const [objectName, names] of Object.entries(fields)) {
    for (const name of names ?? []) {
      const segments = [objectName, ...name.split('.')];
      const key = segments.pop()!;
      const path = segments.join('.');
      if (!Object.hasOwn(targets, path)) defineOwn(targets, path, []);
      targets[path].push(key);
    }
  }
  return targets;
}

/**
 * Allow-list targets: allowing `properties.address.city` must keep `address` in `properties` and `city`
 * in `properties.address`; a field allowed whole (`address`) keeps everything beneath it, so deeper
 * entries under it add no restriction. An object listed with no fields keeps none of its keys.
 */
export function allowTargets(fields: FieldSelection): FieldTargets {
  const targets = new Map<string, Set<string>>();
  const keysOf = (path: string) => {
    let keys = targets.get(path);
    if (!keys) targets.set(path, (keys = new Set()));
    return keys;
  };
  for (const [objectName, names] of Object.entries(fields)) {
    const allowedWhole = new Set(names);
    keysOf(objectName);
    for (const name of names ?? []) {
      const segments = name.split('.');
      let parent = objectName;
      for (let depth = 0; depth < segments.length; depth += 1) {
        keysOf(parent).add(segments[depth]);
        const prefix = segments.slice(0, depth + 1).join('.');
        if (depth < segments.length - 1 && allowedWhole.has(prefix)) break;
        parent = `${parent}.${segments[depth]}`;
      }
    }
  }
  const result: Record<string, string[]> = {};
  for (const [path, keys] of targets) defineOwn(result, path, [...keys]);
  return result;
}

type JsonContainer = Record<string, unknown>;

class CopyOnWrite {
  readonly root: JsonContainer;
  private readonly copies = new Set<object>();

  constructor(original: JsonContainer) {
    this.root = { ...original };
    this.copies.add(this.root);
  }

  /** The objects a target path addresses, each one a copy this edit may change. */
  editableObjectsAt(path: string): JsonContainer[] {
    let current: JsonContainer = this.root;
    for (const segment of path.split('.')) {
      if (!Object.hasOwn(current, segment)) return [];
      const child = current[segment];
      if (!isObject(child)) return [];
      current = this.editable(current, segment, child);
    }
    if (!Array.isArray(current)) return [current];
    const elements: JsonContainer[] = [];
    for (const index of Object.keys(current)) {
      const element = current[index];
      if (isObject(element)) elements.push(this.editable(current, index, element));
    }
    return elements;
  }

  private editable(parent: JsonContainer, key: string, child: JsonContainer): JsonContainer {
    if (this.copies.has(child)) return child;
    // Spread defines own properties (an own `__proto__` key stays a key); `slice` keeps an array's holes.
    const copy: JsonContainer = Array.isArray(child)
      ? (child.slice() as unknown as JsonContainer)
      : { ...child };
    this.copies.add(copy);
    // `key` is an own data property of `parent` (only own properties are followed), so this assignment
    // replaces that property and can never reach a setter of a prototype, `__proto__`'s included.
    parent[key] = copy;
    return copy;
  }
}

function isObject(value: unknown): value is JsonContainer {
  return typeof value === 'object' && value !== null;
}

/** Sets an own data property without running any setter a prototype may define for that key. */
function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
