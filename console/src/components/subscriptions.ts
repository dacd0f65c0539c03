import type { CatalogActionsSubscription } from '@tributary/contracts';

/** The setting of an Actions destination that holds its subscriptions. */
export const SUBSCRIPTIONS_SETTING = 'subscriptions';

const MESSAGE_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;

/**
 * The message types an FQL `subscribe` names (`type = "track" or type = "identify"`), in Segment's
 * usual order. A guide for people choosing a destination, not a parser: the Config API checks FQL.
 */
export function messageTypesOf(subscribe: string): string[] {
  const named = new Set<string>();
  for (const match of subscribe.matchAll(/\btype\s*=\s*["']([a-z]+)["']/gi))
    named.add(match[1].toLowerCase());
  return MESSAGE_TYPES.filter((type) => named.has(type));
}

/** The message types any of these subscriptions names. */
export function coveredMessageTypes(subscriptions: readonly { subscribe: string }[]): string[] {
  const covered = new Set(subscriptions.flatMap((subscription) => messageTypesOf(subscription.subscribe)));
  return MESSAGE_TYPES.filter((type) => covered.has(type));
}

/** One subscription as the editor holds it: the mapping as the JSON text being typed. */
export interface SubscriptionDraft {
  name: string;
  subscribe: string;
  partnerAction: string;
  mappingText: string;
  enabled: boolean;
}

export function toDraft(subscription: CatalogActionsSubscription & { enabled?: unknown }): SubscriptionDraft {
  return {
    name: subscription.name ?? '',
    subscribe: subscription.subscribe,
    partnerAction: subscription.partnerAction,
    mappingText: JSON.stringify(subscription.mapping ?? {}, null, 2),
    enabled: subscription.enabled !== false,
  };
}

/** The stored subscriptions (the setting's value) as drafts; anything but a list gives none. */
export function draftsOf(value: unknown): SubscriptionDraft[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((item): item is CatalogActionsSubscription => typeof item === 'object' && item !== null)
    .map(toDraft);
}

/** A draft's label in messages: its name, or its position. */
export function draftLabel(draft: SubscriptionDraft, index: number): string {
  return draft.name.trim() ? `“${draft.name.trim()}”` : `number ${index + 1}`;
}

/**
 * The drafts as the `subscriptions` setting's value; throws a sentence naming the subscription whose
 * mapping is not a JSON object. Everything else is checked by the Config API, which knows the actions.
 */
export function subscriptionsValue(drafts: readonly SubscriptionDraft[]): unknown[] {
  return drafts.map((draft, index) => {
    let mapping: unknown;
    try {
      mapping = draft.mappingText.trim() === '' ? {} : JSON.parse(draft.mappingText);
    } catch (error) {
      throw new Error(
        `The mapping of subscription ${draftLabel(draft, index)} is not valid JSON: ${(error as Error).message}`,
      );
    }
    if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping))
      throw new Error(
        `The mapping of subscription ${draftLabel(draft, index)} must be a JSON object ({"field": value}).`,
      );
    return {
      ...(draft.name.trim() && { name: draft.name.trim() }),
      subscribe: draft.subscribe,
      partnerAction: draft.partnerAction,
      mapping,
      // Written only when off, so a list of enabled subscriptions reads like Segment's presets.
      ...(!draft.enabled && { enabled: false }),
    };
  });
}
