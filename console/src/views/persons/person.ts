import { api, ApiError, describeError } from '../../api';
import { h } from '../../dom';
import type { Group, Page, Person } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { keyValueList } from '../../ui/key-values';
import { notice } from '../../ui/notice';
import { groupHref, groupName } from '../groups/links';
import { firstTouchList } from './first-touch';
import { eventTimeline } from './timeline';

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
 * A person (`#/persons/<personId>`): every id, the latest traits, first touch, their companies
 * (links to the groups' pages), first and last seen, and the event timeline.
 */
export function personView(root: HTMLElement, personId: string): () => void {
  const header = h('div', { class: 'page-header' }, h('a', { href: '#/persons', class: 'back-link', 'aria-label': 'All persons' }, '←'), h('h1', { class: 'wrap-anywhere' }, personId));
  const details = h('div', { class: 'person-cards' }, h('p', { class: 'muted' }, 'Loading…'));
  const controller = new AbortController();
  const timeline = eventTimeline((limit, offset) => `/persons/${encodeURIComponent(personId)}/events?limit=${limit}&offset=${offset}`, controller.signal);
  root.append(header, details, timeline.card);

  const card = (title: string, ...children: Array<Node | string | null>) => h('section', { class: 'card' }, h('h2', {}, title), ...children);

  const companies = h('p', { class: 'muted' }, 'Loading…');
  /** The groups the person's events carry, each a link to its page. */
  const loadCompanies = async () => {
    try {
      const page = await api<Page<Group>>('GET', `/groups?personId=${encodeURIComponent(personId)}&limit=20`, undefined, controller.signal);
      companies.replaceWith(
        page.total === 0
          ? h('p', { class: 'muted' }, 'None: no event of theirs carries a groupId.')
          : h('ul', { class: 'id-list company-list' }, ...page.results.map((g) => h('li', {}, h('a', { href: groupHref(g.groupId), class: 'strong-link' }, groupName(g)), ' ', h('span', { class: 'muted' }, `${formatCount(g.personCount)} person${g.personCount === 1 ? '' : 's'}`)))),
      );
    } catch (err) {
      if (!controller.signal.aborted) companies.replaceWith(notice('error', 'The companies could not be read', describeError(err)));
    }
  };

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
        card('First touch', firstTouchList(p.firstTouch)),
        card('Companies', companies),
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
      await Promise.all([timeline.load(), loadCompanies()]);
    } catch (err) {
      if (controller.signal.aborted) return;
      const missing = err instanceof ApiError && err.status === 404;
      details.replaceChildren(notice('error', missing ? 'No such person' : 'This person could not be read', missing ? 'The id is unknown here, or now belongs to another person (an anonymousId linked to a userId, a userId renamed by alias).' : describeError(err)));
    }
  })();
  return () => controller.abort();
}
