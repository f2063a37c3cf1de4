import type { EventDTO, EventInput } from './model';

/**
 * What a `track` without `event` is told, at the pointer of its missing `event`: a track names
 * what happened, so `POST /events` and its import refuse one, as the Segment routes refuse a
 * track call without it.
 */
export const TRACK_NEEDS_EVENT = 'is required in track events';

/** Whether an event that passed its schema is a track without an `event`. */
export const lacksEventName = (event: EventDTO): boolean => event.type === 'track' && event.event === undefined;

/**
 * `properties` with `fields` that have no column of their own kept in it, over keys of the same
 * names sent in `properties` too: a page's `name` and `category` (whichever door sent it), a
 * screen's `name` and an alias's `previousId` (Segment calls). Unchanged, not copied, when none
 * of `fields` is given.
 */
export function keptInProperties(properties: Record<string, unknown> | undefined, fields: Record<string, string | undefined>): Record<string, unknown> | undefined {
  let kept = properties;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined) continue;
    if (kept === properties) kept = { ...properties };
    kept![key] = value;
  }
  return kept;
}

/** What is stored of an event of `POST /events` (or of an import line): a page keeps its `name` and `category` in `properties`. */
export function toStoredInput(event: EventDTO): EventInput {
  if (event.type !== 'page' || (event.name === undefined && event.category === undefined)) return event;
  return { ...event, properties: keptInProperties(event.properties, { name: event.name, category: event.category }) };
}
