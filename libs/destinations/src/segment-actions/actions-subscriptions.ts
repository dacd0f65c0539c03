/**
 * A subscription's `subscribe` FQL, parsed and matched with Segment's own matcher
 * (`@segment/destination-subscriptions`), so that a message is taken exactly as Segment would take it.
 */
import type { DestinationSubscriptions, ParsedFql } from './actions-core.types';

let matcher: DestinationSubscriptions | undefined;

function subscriptions(): DestinationSubscriptions {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  matcher ??= require('@segment/destination-subscriptions') as DestinationSubscriptions;
  return matcher;
}

/** The parsed FQL, or why it cannot be parsed. */
export function parseSubscriptionFql(fql: unknown): ParsedFql | string {
  if (typeof fql !== 'string' || fql.trim() === '') return 'must be a non-empty FQL string';
  try {
    const parsed = subscriptions().parseFql(fql);
    if (parsed.error) return `not valid FQL: ${parsed.error.message}`;
    return parsed;
  } catch (error) {
    return `not valid FQL: ${(error as Error).message}`;
  }
}

export function subscriptionMatches(parsed: ParsedFql, message: unknown): boolean {
  try {
    return subscriptions().validate(parsed, message);
  } catch {
    return false;
  }
}
