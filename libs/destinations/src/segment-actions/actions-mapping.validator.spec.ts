import fc from 'fast-check';
import { problemWithDeliverySetting } from '../delivery/delivery-settings';
import { actionsRuntime } from './actions-destination.loader';
import { findActionsDestination } from './actions-catalog.entries';
import {
  MAX_MAPPING_DIRECTIVES,
  MAX_MAPPING_LITERAL_ITEMS,
  MAX_MAPPING_TEMPLATE_CHARS,
  problemWithActionsMapping,
} from './actions-mapping.validator';
import { problemWithActionsSubscriptions } from './actions-subscriptions.validator';

const webhook = findActionsDestination('actions-webhook')!;

/** `n` items nested `depth` deep: n^depth leaves from a mapping of a few hundred bytes. */
function bomb(n: number, depth: number): Record<string, unknown> {
  let shape: Record<string, unknown> = { leaf: { '@path': '$.event' } };
  for (let level = 0; level < depth; level++) {
    shape = { v: { '@arrayPath': [{ '@literal': [...Array(n).keys()] }, shape] } };
  }
  return shape;
}

const subscription = (data: unknown) => [
  {
    subscribe: 'type = "track"',
    partnerAction: 'send',
    mapping: { url: 'https://hooks.example.com/x', method: 'POST', data },
  },
];

describe('problemWithActionsMapping', () => {
  it('refuses the exponential @arrayPath/@literal nest, naming the field (regression: it was stored)', () => {
    expect(problemWithActionsSubscriptions(webhook, subscription(bomb(10, 4)))).toMatch(
      /^\[0\]\.mapping\.data\.v\.@arrayPath\[1\]\.v\.@arrayPath\[1\]\.v\.@arrayPath: @arrayPath nested more than 2 deep$/,
    );
    expect(problemWithActionsSubscriptions(webhook, subscription(bomb(50, 2)))).toMatch(
      /\[0\]\.mapping\.data\.v\.@arrayPath\[1\]\.v\.@arrayPath\[1\]\.leaf: resolves more than the 2000 directives allowed per message/,
    );
  });

  it('refuses a 64 KiB @template and a long @liquid (regression: they were stored)', () => {
    expect(
      problemWithActionsSubscriptions(webhook, subscription({ t: { '@template': '{{'.repeat(32 * 1024) } })),
    ).toBe(
      `[0].mapping.data.t.@template: has 65536 characters, more than the ${MAX_MAPPING_TEMPLATE_CHARS} allowed`,
    );
    expect(
      problemWithActionsMapping({ data: { '@liquid': 'x'.repeat(MAX_MAPPING_TEMPLATE_CHARS + 1) } }),
    ).toMatch(/^\.data\.@liquid: has 4097 characters/);
  });

  it('refuses a large @literal array, too many directives, and what mapping-kit refuses', () => {
    expect(problemWithActionsMapping({ data: { '@literal': { list: [...Array(101).keys()] } } })).toBe(
      `.data.@literal: has an array of 101 items, more than the ${MAX_MAPPING_LITERAL_ITEMS} allowed`,
    );
    const many = Object.fromEntries(
      Array.from({ length: MAX_MAPPING_DIRECTIVES + 1 }, (_, index) => [`k${index}`, { '@path': '$.event' }]),
    );
    expect(problemWithActionsMapping({ data: many })).toMatch(/more than the 200 directives allowed/);
    expect(problemWithActionsMapping({ data: { '@path': 1 } })).toBe(
      ': /data/@path should be a string or a mapping directive but it is a number.',
    );
    expect(problemWithActionsMapping({ data: { '@nope': 1 } })).toMatch(/invalid directive: @nope/);
    expect(problemWithActionsMapping({ data: { '@path': '$.a', '@template': 'b' } })).toMatch(
      /should only have one @-prefixed key/,
    );
  });

  it("accepts what Segment's editor makes: paths, templates, one @arrayPath over the message, literals", () => {
    expect(
      problemWithActionsMapping({
        data: {
          name: { '@template': 'Hello {{properties.name}}' },
          products: { '@arrayPath': ['$.properties.products', { id: { '@path': '$.product_id' } }] },
          fixed: { '@literal': [1, 2, 3] },
          when: { '@if': { exists: { '@path': '$.userId' }, then: { '@path': '$.userId' }, else: 'anon' } },
        },
      }),
    ).toBeNull();
  });

  it('reaches the Config API as setting "subscriptions" with the path of the field', () => {
    expect(problemWithDeliverySetting('actions-webhook', 'subscriptions', subscription(bomb(10, 3)))).toMatch(
      /^setting "subscriptions"\[0\]\.mapping\.data\..*@arrayPath nested more than 2 deep$/,
    );
  });
});

/**
 * Generated mappings, from the directives mapping-kit knows and the shapes that cost (nested
 * `@arrayPath` over `@literal` roots, long templates, runs of braces): every one is refused at write,
 * or mapping-kit's `transform` evaluates it within the run-time budget below, measured.
 */
describe('every generated mapping is refused at write or evaluated within its budget', () => {
  const BUDGET_MS = 250;
  const BUDGET_HEAP_BYTES = 64 * 1024 * 1024;
  const event = {
    type: 'track',
    event: 'Order Completed',
    userId: 'user-1',
    properties: { name: 'x'.repeat(200), products: [{ product_id: 'a' }, { product_id: 'b' }], total: 3 },
  };

  const text = fc.stringMatching(/^[{}a-z. ]{0,40}$/);
  const path = fc.constantFrom(
    '$.event',
    '$.userId',
    '$.properties.name',
    '$.properties.products',
    'properties',
  );
  const template = fc.oneof(
    text.map((body) => `{{${body}}}`),
    fc
      .tuple(fc.constantFrom('{{', '{{{', '{', '}}'), fc.integer({ min: 1, max: 40_000 }))
      .map(([run, times]) => run.repeat(times)),
  );
  const mapping: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()),
      path.map((at) => ({ '@path': at })),
      template.map((body) => ({ '@template': body })),
      fc.array(fc.integer(), { maxLength: 300 }).map((items) => ({ '@literal': items })),
      fc
        .tuple(
          fc.oneof(
            path,
            fc.array(fc.nat(), { maxLength: 150 }).map((items) => ({ '@literal': items })),
          ),
          tie('value'),
        )
        .map(([root, shape]) => ({ '@arrayPath': [root, { item: shape }] })),
      fc
        .record({ exists: path.map((at) => ({ '@path': at })), then: tie('value') })
        .map((body) => ({ '@if': body })),
      fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('value'), { maxKeys: 6 }),
    ),
  })).value;

  beforeAll(() => {
    // The runtime as the lane's workers load it (with its linear `@template`).
    actionsRuntime();
  });

  it('holds', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { transform } = require('@segment/actions-core') as {
      transform: (mapping: unknown, data: unknown) => unknown;
    };
    let evaluated = 0;
    let slowestMs = 0;
    let largestHeapBytes = 0;
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), mapping, { maxKeys: 4 }), (generated) => {
        if (problemWithActionsMapping(generated) !== null) return;
        const heapBefore = process.memoryUsage().heapUsed;
        const started = performance.now();
        try {
          transform(generated, event);
        } catch {
          // A mapping that fails on this message fails the message, within its budget all the same.
        }
        const tookMs = performance.now() - started;
        const heapBytes = process.memoryUsage().heapUsed - heapBefore;
        evaluated += 1;
        slowestMs = Math.max(slowestMs, tookMs);
        largestHeapBytes = Math.max(largestHeapBytes, heapBytes);
        expect(tookMs).toBeLessThan(BUDGET_MS);
        expect(heapBytes).toBeLessThan(BUDGET_HEAP_BYTES);
      }),
      { numRuns: 400 },
    );
    expect(evaluated).toBeGreaterThan(50);
    console.log(
      `generated mappings evaluated: ${evaluated}, slowest ${slowestMs.toFixed(1)} ms, largest heap growth ${(largestHeapBytes / 1024 / 1024).toFixed(1)} MiB`,
    );
  });
});
