import type { Event, JsonObject } from '../types';

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/**
 * What an event is called in a list: its name, or for a page view (which often has none) the
 * page's name or path as the browser script and Segment's libraries send them.
 */
export function eventLabel(e: Pick<Event, 'type' | 'event' | 'properties' | 'context' | 'groupId'>): string {
  const page = (e.context?.page ?? undefined) as JsonObject | undefined;
  return (
    text(e.event) ??
    (e.type === 'page' || e.type === 'screen'
      ? (text(e.properties?.name) ?? text(e.properties?.path) ?? text(page?.path) ?? text(e.properties?.url) ?? text(page?.url))
      : e.type === 'group'
        ? text(e.groupId)
        : undefined) ??
    '—'
  );
}
