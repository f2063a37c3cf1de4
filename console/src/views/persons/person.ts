import { api, ApiError, describeError } from '../../api';
import { h } from '../../dom';
import type { Event, Page, Person } from '../../types';
import { eventLabel } from '../../ui/event-label';
import { formatCount, formatTime } from '../../ui/format';
import { keyValueList, keyValueText } from '../../ui/key-values';
import { notice } from '../../ui/notice';
import { showEvent } from '../live';

/** Events of the timeline read at a time. */
const TIMELINE_PAGE = 50;
/** Ids listed at once; the rest are counted. */
const IDS_SHOWN = 12;

function idList(ids: readonly string[], empty: string): HTMLElement {
  if (ids.length === 0) return h('p', { class: 'muted' }, empty);
  return h(
    'ul',
    { class: 'id-list' },
    ...ids.slice(0, IDS_SHOWN).map((id) => h('li', {}, h('code', {}, id))),
    ids.length > IDS_SHOWN ? h('li', { class: 'muted' }, `and ${formatCount(ids.length - IDS_SHOWN)} more`) : null,
  );
}

/**
 * A person (`#/persons/<personId>`): every id, the latest traits, first and last seen, and the
 * event timeline, newest first, a page at a time, grouped by day; an event opens as JSON.
 */
export function personView(root: HTMLElement, personId: string): () => void {
  const header = h('div', { class: 'page-header' }, h('a', { href: '#/persons', class: 'back-link', 'aria-label': 'All persons' }, '←'), h('h1', { class: 'wrap-anywhere' }, personId));
  const details = h('div', { class: 'person-cards' }, h('p', { class: 'muted' }, 'Loading…'));
  const timeline = h('ol', { class: 'timeline', 'aria-label': 'Events, newest first' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Older events');
  const timelineStatus = h('p', { class: 'muted', role: 'status' });
  root.append(header, details, h('section', { class: 'card timeline-card' }, h('h2', {}, 'Events'), timeline, timelineStatus, more));

  const controller = new AbortController();
  let offset = 0;
  let lastDay = '';

  const card = (title: string, ...children: Array<Node | string | null>) => h('section', { class: 'card' }, h('h2', {}, title), ...children);

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

  const loadEvents = async () => {
    more.disabled = true;
    timelineStatus.textContent = 'Loading…';
    try {
      const page = await api<Page<Event>>('GET', `/persons/${encodeURIComponent(personId)}/events?limit=${TIMELINE_PAGE}&offset=${offset}`, undefined, controller.signal);
      for (const e of page.results) {
        const day = formatTime(e.timestamp).slice(0, 10);
        if (day !== lastDay) timeline.append(h('li', { class: 'timeline-day' }, h('h3', {}, day)));
        lastDay = day;
        timeline.append(entry(e));
      }
      offset += page.results.length;
      timelineStatus.textContent = page.total === 0 ? 'No events.' : `${formatCount(offset)} of ${formatCount(page.total)} events`;
      more.hidden = offset >= page.total;
    } catch (err) {
      if (!controller.signal.aborted) timelineStatus.replaceChildren(notice('error', 'The events could not be read', describeError(err)));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => void loadEvents());

  (async () => {
    try {
      const p = await api<Person>('GET', `/persons/${encodeURIComponent(personId)}`, undefined, controller.signal);
      document.title = `${p.personId} · Event analytics`;
      details.replaceChildren(
        card(
          'Identity',
          h('dl', { class: 'kv' }, h('dt', {}, 'userId'), h('dd', {}, p.userId ?? h('span', { class: 'muted' }, 'never identified'))),
          h('h3', {}, `userIds (${formatCount(p.userIds.length)})`),
          idList(p.userIds, 'None'),
          h('h3', {}, `anonymousIds (${formatCount(p.anonymousIds.length)})`),
          idList(p.anonymousIds, 'None'),
        ),
        card('Traits', keyValueList(p.traits, 'No traits: this person has not been identified with any.')),
        card(
          'Activity',
          h(
            'dl',
            { class: 'kv' },
            h('dt', {}, 'First seen'),
            h('dd', { 'data-field': 'firstSeen', title: formatTime(p.firstSeen) }, formatTime(p.firstSeen).slice(0, 19)),
            h('dt', {}, 'Last seen'),
            h('dd', { 'data-field': 'lastSeen', title: formatTime(p.lastSeen) }, formatTime(p.lastSeen).slice(0, 19)),
            h('dt', {}, 'Events'),
            h('dd', { 'data-field': 'eventCount' }, formatCount(p.eventCount)),
          ),
        ),
      );
      await loadEvents();
    } catch (err) {
      if (controller.signal.aborted) return;
      const missing = err instanceof ApiError && err.status === 404;
      details.replaceChildren(notice('error', missing ? 'No such person' : 'This person could not be read', missing ? 'The id is unknown here, or now belongs to another person (an anonymousId linked to a userId, a userId renamed by alias).' : describeError(err)));
    }
  })();
  return () => controller.abort();
}
