/**
 * The version of how visits are made from events (which events, what a visit takes from them).
 * Stored visits record the one they were built with (`visit_progress.definition`); at start, a
 * workspace whose visits were built by another is built again from its events, in the background,
 * as for a new SESSION_TIMEOUT_MINUTES. Raise it with any change that alters stored visits.
 *
 * 0: before it was recorded. 1: sources named as Plausible names them, referrers without query,
 * utm_source filled from the page's `source` or `ref`; automated clients' events and those sent
 * from no browser (VISIT_EVENTS) left out.
 */
export const VISIT_DEFINITION = 1;
