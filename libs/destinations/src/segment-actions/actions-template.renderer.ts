/**
 * mapping-kit's `@template` rendering (`{{path}}` and `{{{path}}}` placeholders), in one linear scan
 * per kind of placeholder. mapping-kit renders with `/\{\{\{([^}]+)\}\}\}/g` and then
 * `/\{\{([^}]+)\}\}/g`, which cost time quadratic in a run of `{` without a closing `}}` (a 60 KB
 * template takes seconds); this gives the same text, placeholder for placeholder, in linear time, and
 * the Actions runtime puts it in place of mapping-kit's (`installLinearTemplates`).
 */

type Get = (data: unknown, path: string) => unknown;

/** What mapping-kit's `render(template, data)` answers, in time linear in the template. */
export function renderTemplate(template: string, data: unknown, get: Get): string {
  return replacePlaceholders(replacePlaceholders(template, 3, data, get), 2, data, get);
}

/**
 * Replaces every `{`×width, one or more characters other than `}`, `}`×width, left to right as the
 * regular expression's global replace finds them. At a run of opening braces the placeholder's text
 * reaches the first `}` after them, so that position is found once and kept while the scan moves on
 * towards it, instead of being searched for again from every `{`.
 */
function replacePlaceholders(template: string, width: 2 | 3, data: unknown, get: Get): string {
  const open = '{'.repeat(width);
  const close = '}'.repeat(width);
  let rendered = '';
  let copiedUpTo = 0;
  let nextClosing = -1;
  let index = template.indexOf(open);
  while (index !== -1) {
    const start = index + width;
    if (nextClosing < start) {
      nextClosing = template.indexOf('}', start);
      if (nextClosing === -1) break;
    }
    if (nextClosing > start && template.startsWith(close, nextClosing)) {
      const value = get(data, template.slice(start, nextClosing).trim());
      rendered += template.slice(copiedUpTo, index) + String(value ?? '');
      copiedUpTo = nextClosing + width;
      index = template.indexOf(open, copiedUpTo);
    } else {
      index = template.indexOf(open, index + 1);
    }
  }
  return copiedUpTo === 0 ? template : rendered + template.slice(copiedUpTo);
}

let installed = false;

/**
 * Puts `renderTemplate` in place of mapping-kit's `render`: mapping-kit reads it from its
 * placeholders module at each `@template`, so every destination of this thread renders linearly.
 */
export function installLinearTemplates(): void {
  if (installed) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const placeholders = require('@segment/actions-core/mapping-kit/placeholders') as {
    render: (template: string, data?: unknown) => string;
  };
  const { get } = require('@segment/actions-core') as { get: Get };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const original = placeholders.render;
  placeholders.render = (template, data = {}) =>
    // mapping-kit's own type check and error for a template that is not text.
    typeof template === 'string' ? renderTemplate(template, data, get) : original(template, data);
  installed = true;
}
