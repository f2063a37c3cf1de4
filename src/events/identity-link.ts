import { parseIsoDateTime, type Micros } from '../timestamps';
import type { AcceptedEvent } from './event-rows';

/** A link an event carries from one id to a userId (docs/api/persons.md). */
export interface IdentityLink {
  id: string;
  userId: string;
  /** An alias's previousId (the id was renamed), rather than an anonymousId. */
  rename: boolean;
  /** The event's time. */
  at: Micros;
  /** When the event was parsed. */
  parsedAt: Micros;
}

/** The links `events` carry, in order: an anonymousId beside a userId, and an alias's previousId. */
export function identityLinksOf(events: readonly AcceptedEvent[]): IdentityLink[] {
  const links: IdentityLink[] = [];
  for (const { event, parsedAt } of events) {
    const userId = event.userId ?? '';
    if (userId === '') continue;
    const anonymousId = event.anonymousId ?? '';
    const previousId = event.type === 'alias' ? (event.properties as Record<string, unknown> | undefined)?.previousId : undefined;
    const renames = typeof previousId === 'string' && previousId !== '' && previousId !== userId;
    if ((anonymousId === '' || anonymousId === userId) && !renames) continue;
    const at = parseIsoDateTime(event.timestamp)!;
    if (anonymousId !== '' && anonymousId !== userId) links.push({ id: anonymousId, userId, rename: false, at, parsedAt });
    if (renames) links.push({ id: previousId, userId, rename: true, at, parsedAt });
  }
  return links;
}
