import { h } from '../../dom';
import type { Group } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { currentRoute } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { searchedList } from '../../ui/searched-list';
import { groupView } from './group';
import { groupHref, groupName } from './links';

function groupsTable(groups: readonly Group[]): HTMLElement {
  const columns: Array<[string, string | null]> = [['Group', null], ['Plan', 'hide-narrow'], ['Persons', 'num'], ['Events', 'num hide-narrow'], ['Last seen', null]];
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'data-table groups-table' },
      h('thead', {}, h('tr', {}, ...columns.map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
      h(
        'tbody',
        {},
        ...groups.map((g) => {
          const plan = g.traits.plan;
          return h(
            'tr',
            { 'data-group': g.groupId },
            // Its name (the link) over its id, so a phone's screen holds the counts beside them.
            h(
              'td',
              { class: 'wrap' },
              h('a', { href: groupHref(g.groupId), class: 'strong-link', 'data-field': 'name' }, groupName(g)),
              groupName(g) === g.groupId ? null : h('div', {}, h('code', { class: 'muted' }, g.groupId)),
            ),
            h('td', { class: 'hide-narrow' }, plan === undefined || plan === null || plan === '' ? h('span', { class: 'muted' }, '—') : String(plan)),
            h('td', { class: 'num', 'data-field': 'personCount' }, formatCount(g.personCount)),
            h('td', { class: 'num hide-narrow' }, formatCount(g.eventCount)),
            h('td', { 'data-field': 'lastSeen' }, formatTime(g.lastSeen).slice(0, 16)),
          );
        }),
      ),
    ),
  );
}

/**
 * The groups (companies) of the workspace, most recently seen first, with their persons and last
 * seen: searched over ids and traits, a page at a time. The search and page are kept in the URL.
 */
function groupList(root: HTMLElement): () => void {
  const search = h('input', { type: 'search', name: 'search', placeholder: 'Search ids, names, any trait…', 'aria-label': 'Search groups', value: currentRoute().params.get('search') ?? '', autocomplete: 'off' });
  const list = searchedList<Group>({
    page: 'groups',
    path: '/groups',
    noun: 'groups',
    search,
    table: groupsTable,
    empty: (searching) =>
      notice('empty', 'No groups match', searching ? 'The search looks for the text in every groupId and trait, in any case.' : 'Groups appear once events carry a groupId (Segment group calls, or any event sent with one).'),
  });
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Groups'), h('span', { class: 'muted' }, 'Companies: the groupId of events, named by group calls')),
    h('div', { class: 'toolbar', role: 'search' }, search),
    list.pager,
    list.results,
  );
  list.start();
  return list.stop;
}

/** `#/groups`: the list; `#/groups/<groupId>`: that group. */
export function groupsView(root: HTMLElement): () => void {
  const [groupId] = currentRoute().rest;
  return groupId ? groupView(root, groupId) : groupList(root);
}
