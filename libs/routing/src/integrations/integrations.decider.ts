/**
 * The message's `integrations` object turns destinations on and off (docs/tracking-api.md §6.1; seed
 * "Rules" 1). Keys are destination names exactly as the catalog publishes them (`displayName`), case
 * sensitive.
 *
 * - The destination's own key decides when it is present: `true`, or an object (destination-specific
 *   options, e.g. `{"Google Analytics": {"clientId": "…"}}`), enables it; `false` disables it.
 * - Otherwise `All` (Ruby's spelling) or `all` (Python's) set to `false` disables it. When both are
 *   present, either one being `false` is enough: a sender who wrote `false` meant to opt out.
 * - Otherwise the destination is enabled (the default is all enabled).
 * Any other value (`null`, a string such as `"false"`, a number) is not a decision and is ignored, so
 * the next rule applies.
 */

export type IntegrationsDecision =
  { readonly enabled: true } | { readonly enabled: false; readonly detail: string };

export function decideIntegrations(
  integrations: Readonly<Record<string, unknown>> | undefined,
  destinationDisplayName: string,
): IntegrationsDecision {
  const settings = integrations ?? {};
  const own = Object.prototype.hasOwnProperty.call(settings, destinationDisplayName)
    ? settings[destinationDisplayName]
    : undefined;
  if (own === true || isObject(own)) return { enabled: true };
  if (own === false) {
    return { enabled: false, detail: `integrations[${JSON.stringify(destinationDisplayName)}] is false` };
  }
  for (const allKey of ['All', 'all']) {
    if (Object.prototype.hasOwnProperty.call(settings, allKey) && settings[allKey] === false) {
      return {
        enabled: false,
        detail: `integrations.${allKey} is false and ${JSON.stringify(destinationDisplayName)} is not set to true`,
      };
    }
  }
  return { enabled: true };
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
