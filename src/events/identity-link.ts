import type { Micros } from '../timestamps';
import type { AcceptedEvent } from './event-rows';

/** A link an event carries from one id to a userId (docs/api/persons.md). */
export interface IdentityLink {
  id: string;
  userId: string;
  /** An alias's previousId (the id was renamed), rather than an anonymousId. */
  rename: boolean;
  /**
   * The event's time, as the event holds it (ISO 8601). It is parsed only for a link not known
   * already: signed-in traffic repeats its link on every event, and parsing every one of them
   * was most of what persons cost at ingest.
   */
  timestamp: string;
  /** When the event was parsed. */
  parsedAt: Micros;
}

/**
 * Calls `visit` with each link `events` carry, in order: an anonymousId beside a userId, and an
 * alias's previousId. No object is made for a link: most repeat one already known.
 */
export function forEachLink(events: readonly AcceptedEvent[], visit: (id: string, userId: string, rename: boolean, accepted: AcceptedEvent) => void): void {
  for (const accepted of events) {
    const { event } = accepted;
    const userId = event.userId ?? '';
    if (userId === '') continue;
    const anonymousId = event.anonymousId ?? '';
    const previousId = event.type === 'alias' ? (event.properties as Record<string, unknown> | undefined)?.previousId : undefined;
    if (anonymousId !== '' && anonymousId !== userId) visit(anonymousId, userId, false, accepted);
    if (typeof previousId === 'string' && previousId !== '' && previousId !== userId) visit(previousId, userId, true, accepted);
  }
}

/** Every link `events` carry, in order. */
export function identityLinksOf(events: readonly AcceptedEvent[]): IdentityLink[] {
  const links: IdentityLink[] = [];
  forEachLink(events, (id, userId, rename, { event, parsedAt }) => links.push({ id, userId, rename, timestamp: event.timestamp, parsedAt }));
  return links;
}
