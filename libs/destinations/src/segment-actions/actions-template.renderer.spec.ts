import fc from 'fast-check';
import { actionsRuntime } from './actions-destination.loader';
import { renderTemplate } from './actions-template.renderer';

/* eslint-disable @typescript-eslint/no-require-imports */
const { get } = require('@segment/actions-core') as { get: (data: unknown, path: string) => unknown };
const { transform } = require('@segment/actions-core') as {
  transform: (mapping: unknown, data: unknown) => Record<string, unknown>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** mapping-kit's own rendering, as it was before the runtime replaced it: the regular expressions. */
function mappingKitRender(template: string, data: unknown): string {
  const replacer = (chars: number) => (match: string) => {
    const value = get(data, match.slice(chars, -chars).trim());
    return String(value ?? '');
  };
  // mapping-kit's own expressions, quadratic as they are: the reference the linear scan is held to.
  // eslint-disable-next-line regexp/no-super-linear-move
  return template.replace(/\{\{\{([^}]+)\}\}\}/g, replacer(3)).replace(/\{\{([^}]+)\}\}/g, replacer(2));
}

describe('renderTemplate', () => {
  const data = { a: 'A', b: { c: 'C' }, n: 0, braces: '{{a}}', list: [1, 2] };

  it('gives what mapping-kit gives, for any template', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[{}abc. n\-]{0,60}$/), (template) => {
        expect(renderTemplate(template, data, get)).toBe(mappingKitRender(template, data));
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    ['Hi {{a}} and {{{b.c}}}', 'Hi A and C'],
    ['{{ a }}{{missing}}|{{n}}', 'A|0'],
    ['{{{braces}}}', 'A'],
    ['{{{a}}', ''],
    ['{{}} {{a} }}', '{{}} {{a} }}'],
    ['{{list}}', '1,2'],
  ])('%s', (template, expected) => {
    expect(renderTemplate(template, data, get)).toBe(expected);
    expect(mappingKitRender(template, data)).toBe(expected);
  });

  it("is what a @template runs once the Actions runtime is loaded: 60 KB of '{{' in milliseconds, not seconds (regression)", () => {
    actionsRuntime();
    const started = performance.now();
    const result = transform({ t: { '@template': '{{'.repeat(30_000) } }, { event: 'x' });
    expect(result.t).toBe('{{'.repeat(30_000));
    expect(performance.now() - started).toBeLessThan(200);
  });
});
