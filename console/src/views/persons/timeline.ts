import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Event, Page } from '../../types';
import { eventLabel } from '../../ui/event-label';
import { formatCount, formatTime } from '../../ui/format';
import { keyValueText } from '../../ui/key-values';
import { notice } from '../../ui/notice';
import { showEvent } from '../live';

/** Events of the timeline read at a time. */
const TIMELINE_PAGE = 50;

/**
 * A card of events, newest first, a page at a time, grouped by day; an event opens as JSON.
 * `path(limit, offset)` is the API path of a page (a person's events, a group's). Answers the card
 * and what loads the next page (the first, when first called).
 */
export function eventTimeline(path: (limit: number, offset: number) => string, signal: AbortSignal): { card: HTMLElement; load: () => Promise<void> } {
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Events, newest first' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older events');
  const status = h('p', { class: 'muted', role: 'status' });
  let offset = 0;
  let lastDay = '';

  const entry = (e: Event) => {
    const button = h(
      'button',
      { type: 'button', class: 'timeline-row' },
      h('time', { datetime: e.timestamp }, formatTime(e.timestamp).slice(11, 19)),
      h('span', { class: `type type-${e.type}` }, e.type),
      h('span', { class: 'timeline-event' }, eventLabel(e)),
      h('span', { class: 'timeline-summary' }, keyValueText(e.properties ?? e.traits ?? {})),
    );
    button.addEventListener('click', () => showEvent(e));
    return h('li', {}, button);
  };

  const load = async () => {
    more.disabled = true;
    status.textContent = 'Loading…';
    try {
      const page = await api<Page<Event>>('GET', path(TIMELINE_PAGE, offset), undefined, signal);
      for (const e of page.results) {
        const day = formatTime(e.timestamp).slice(0, 10);
        if (day !== lastDay) timeline.append(h('li', { class: 'timeline-day' }, h('h3', {}, day)));
        lastDay = day;
        timeline.append(entry(e));
      }
      offset += page.results.length;
      status.textContent = page.total === 0 ? 'No events.' : `${formatCount(offset)} of ${formatCount(page.total)} events`;
      more.hidden = offset >= page.total;
    } catch (err) {
      if (!signal.aborted) status.replaceChildren(notice('error', 'The events could not be read', describeError(err)));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => void load());
  return { card: h('section', { class: 'card timeline-card' }, h('h2', {}, 'Events'), timeline, status, more), load };
}
