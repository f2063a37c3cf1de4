import { api, ApiError, describeError } from '../../api';
import { h } from '../../dom';
import type { Group, Page, Person } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { keyValueList } from '../../ui/key-values';
import { notice } from '../../ui/notice';
import { personsTable } from '../persons/table';
import { eventTimeline } from '../persons/timeline';
import { groupName } from './links';

/** Members listed on a group's page; the rest are counted. */
const MEMBERS_SHOWN = 100;

/**
 * A group (`#/groups/<groupId>`): its traits, first and last seen, its members (persons whose
 * events carry the groupId, with their names and where they came from) and its events, newest first.
 */
export function groupView(root: HTMLElement, groupId: string): () => void {
  const title = h('h1', { class: 'wrap-anywhere' }, groupId);
  const header = h('div', { class: 'page-header' }, h('a', { href: '#/groups', class: 'back-link', 'aria-label': 'All groups' }, '←'), title);
  const details = h('div', { class: 'person-cards' }, h('p', { class: 'muted' }, 'Loading…'));
  const members = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const membersTitle = h('h2', {}, 'Members');
  const controller = new AbortController();
  const timeline = eventTimeline((limit, offset) => `/events?groupId=${encodeURIComponent(groupId)}&orderByField=timestamp&orderByDirection=DESC&limit=${limit}&offset=${offset}`, controller.signal);
  root.append(header, details, h('section', { class: 'card group-members' }, membersTitle, members), timeline.card);

  const card = (name: string, ...children: Array<Node | string | null>) => h('section', { class: 'card' }, h('h2', {}, name), ...children);

  const loadMembers = async () => {
    const filters = JSON.stringify([{ property: 'groupId', source: 'group', operator: 'eq', value: groupId }]);
    try {
      const page = await api<Page<Person>>('GET', `/persons?limit=${MEMBERS_SHOWN}&filters=${encodeURIComponent(filters)}`, undefined, controller.signal);
      membersTitle.textContent = `Members (${formatCount(page.total)})`;
      if (page.total === 0) return members.replaceChildren(h('p', { class: 'muted' }, 'No persons: its events carry no userId or anonymousId.'));
      members.replaceChildren(personsTable(page.results));
      if (page.total > page.results.length) members.append(h('p', { class: 'muted' }, `The ${formatCount(MEMBERS_SHOWN)} seen last of ${formatCount(page.total)}.`));
    } catch (err) {
      if (!controller.signal.aborted) members.replaceChildren(notice('error', 'The members could not be read', describeError(err)));
    }
  };

  (async () => {
    try {
      const g = await api<Group>('GET', `/groups/${encodeURIComponent(groupId)}`, undefined, controller.signal);
      const name = groupName(g);
      document.title = `${name} · Event analytics`;
      if (name !== groupId) title.replaceChildren(name, ' ', h('code', { class: 'muted' }, groupId));
      details.replaceChildren(
        card('Traits', keyValueList(g.traits, 'No traits: no group call has named this group.')),
        card(
          'Activity',
          h(
            'dl',
            { class: 'kv' },
            h('dt', {}, 'First seen'),
            h('dd', { 'data-field': 'firstSeen', title: formatTime(g.firstSeen) }, formatTime(g.firstSeen).slice(0, 19)),
            h('dt', {}, 'Last seen'),
            h('dd', { 'data-field': 'lastSeen', title: formatTime(g.lastSeen) }, formatTime(g.lastSeen).slice(0, 19)),
            h('dt', {}, 'Persons'),
            h('dd', { 'data-field': 'personCount' }, formatCount(g.personCount)),
            h('dt', {}, 'Events'),
            h('dd', { 'data-field': 'eventCount' }, formatCount(g.eventCount)),
          ),
        ),
      );
      await Promise.all([loadMembers(), timeline.load()]);
    } catch (err) {
      if (controller.signal.aborted) return;
      const missing = err instanceof ApiError && err.status === 404;
      details.replaceChildren(notice('error', missing ? 'No such group' : 'This group could not be read', missing ? 'No event of this workspace carries this groupId.' : describeError(err)));
      members.replaceChildren();
    }
  })();
  return () => controller.abort();
}
