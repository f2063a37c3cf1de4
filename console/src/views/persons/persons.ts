import { api } from '../../api';
import { h } from '../../dom';
import type { Cohort, Page, Person } from '../../types';
import { formatCount } from '../../ui/format';
import { currentRoute } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { searchedList } from '../../ui/searched-list';
import { personView } from './person';
import { personsTable } from './table';

/**
 * The persons of the workspace, most recently seen first: searched over ids and traits, or the
 * members of a cohort, a page at a time. The search, cohort and page are kept in the URL.
 */
function personList(root: HTMLElement): () => void {
  const route = currentRoute();
  const search = h('input', { type: 'search', name: 'search', placeholder: 'Search ids, emails, any trait…', 'aria-label': 'Search persons', value: route.params.get('search') ?? '', autocomplete: 'off' });
  const cohort = h('select', { name: 'cohort', 'aria-label': 'Cohort' }, h('option', { value: '' }, 'Everyone'));
  const wantedCohort = route.params.get('cohort') ?? '';
  const list = searchedList<Person>({
    page: 'persons',
    path: '/persons',
    noun: 'persons',
    search,
    filters: () => ({ cohort: cohort.value }),
    table: personsTable,
    empty: (searching) => notice('empty', 'No persons match', searching ? 'The search looks for the text in every id and trait, in any case.' : 'Persons appear once events with a userId or an anonymousId arrive.'),
  });
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Persons'), h('a', { href: '#/cohorts', class: 'small-link' }, 'Cohorts →')),
    h('div', { class: 'toolbar', role: 'search' }, search, cohort),
    list.pager,
    list.results,
  );
  cohort.addEventListener('change', list.restart);

  // The cohorts fill the select; a cohort named by the URL is chosen before the first load.
  api<Page<Cohort>>('GET', '/cohorts?limit=500')
    .then((page) => {
      cohort.append(...page.results.map((c) => h('option', { value: c.id, selected: c.id === wantedCohort }, `${c.name} (${formatCount(c.size)})`)));
    })
    .catch(() => {})
    .finally(list.start);
  search.focus();
  return list.stop;
}

/** `#/persons`: the list; `#/persons/<personId>`: that person. */
export function personsView(root: HTMLElement): () => void {
  const [personId] = currentRoute().rest;
  return personId ? personView(root, personId) : personList(root);
}
