import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Cohort, Page, Person } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { currentRoute, hashOf, replaceHash } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { personView } from './person';

/** Persons a page. */
const PAGE_SIZE = 50;
/** Typing in the search box searches once the typing pauses. */
const SEARCH_DEBOUNCE_MS = 300;

export const personHref = (personId: string) => hashOf('persons', [personId]);

/** The traits people are most often told apart by, first found. */
function displayName(p: Person): string {
  for (const key of ['email', 'name', 'username', 'firstName']) {
    const value = p.traits[key];
    if (typeof value === 'string' && value) return value;
  }
  return '';
}

/**
 * The persons of the workspace, most recently seen first: searched over ids and traits, or the
 * members of a cohort, a page at a time. The search, cohort and page are kept in the URL.
 */
function personList(root: HTMLElement): () => void {
  const route = currentRoute();
  const search = h('input', { type: 'search', name: 'search', placeholder: 'Search ids, emails, any trait…', 'aria-label': 'Search persons', value: route.params.get('search') ?? '', autocomplete: 'off' });
  const cohort = h('select', { name: 'cohort', 'aria-label': 'Cohort' }, h('option', { value: '' }, 'Everyone'));
  const summary = h('span', { class: 'result-summary', role: 'status' });
  const prev = h('button', { type: 'button', class: 'secondary', disabled: true }, '← Previous');
  const next = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Next →');
  const results = h('div', {});
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Persons'), h('a', { href: '#/cohorts', class: 'small-link' }, 'Cohorts →')),
    h('div', { class: 'toolbar', role: 'search' }, search, cohort),
    h('div', { class: 'pager' }, summary, h('span', { class: 'spacer' }), prev, next),
    results,
  );

  let offset = Math.max(0, Number(route.params.get('offset')) || 0);
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let loading: AbortController | undefined;
  const wantedCohort = route.params.get('cohort') ?? '';

  const load = async () => {
    loading?.abort();
    loading = new AbortController();
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
    if (search.value.trim()) params.set('search', search.value.trim());
    if (cohort.value) params.set('cohort', cohort.value);
    replaceHash(hashOf('persons', [], { search: search.value.trim(), cohort: cohort.value, offset: offset || undefined }));
    summary.textContent = 'Loading…';
    try {
      const page = await api<Page<Person>>('GET', `/persons?${params}`, undefined, loading.signal);
      const first = page.total === 0 ? 0 : page.offset + 1;
      summary.textContent = `${formatCount(first)}–${formatCount(page.offset + page.results.length)} of ${formatCount(page.total)} persons`;
      prev.disabled = page.offset === 0;
      next.disabled = page.offset + page.results.length >= page.total;
      if (page.results.length === 0) {
        results.replaceChildren(notice('empty', 'No persons match', search.value ? 'The search looks for the text in every id and trait, in any case.' : 'Persons appear once events with a userId or an anonymousId arrive.'));
        return;
      }
      results.replaceChildren(
        h(
          'div',
          { class: 'table-scroll' },
          h(
            'table',
            { class: 'data-table persons-table' },
            h(
              'thead',
              {},
              h('tr', {}, ...['Person', 'Name or email', 'Ids', 'First seen', 'Last seen', 'Events'].map((c, i) => h('th', { scope: 'col', class: i === 2 || i === 3 ? 'hide-narrow' : i === 5 ? 'num' : null }, c))),
            ),
            h(
              'tbody',
              {},
              ...page.results.map((p) =>
                h(
                  'tr',
                  { 'data-person': p.personId },
                  h('td', { class: 'wrap' }, h('a', { href: personHref(p.personId), class: 'strong-link' }, p.personId)),
                  h('td', { class: 'wrap' }, displayName(p) || h('span', { class: 'muted' }, p.userId ? '—' : 'anonymous')),
                  h('td', { class: 'hide-narrow' }, `${p.userIds.length} userId${p.userIds.length === 1 ? '' : 's'} · ${p.anonymousIds.length} anonymous`),
                  h('td', { class: 'hide-narrow' }, formatTime(p.firstSeen)),
                  h('td', {}, formatTime(p.lastSeen)),
                  h('td', { class: 'num' }, formatCount(p.eventCount)),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      if (loading.signal.aborted) return;
      summary.textContent = '';
      results.replaceChildren(notice('error', 'Persons could not be read', describeError(err)));
    }
  };

  search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      offset = 0;
      void load();
    }, SEARCH_DEBOUNCE_MS);
  });
  search.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    clearTimeout(debounce);
    offset = 0;
    void load();
  });
  cohort.addEventListener('change', () => {
    offset = 0;
    void load();
  });
  prev.addEventListener('click', () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    void load();
  });
  next.addEventListener('click', () => {
    offset += PAGE_SIZE;
    void load();
  });

  // The cohorts fill the select; a cohort named by the URL is chosen before the first load.
  api<Page<Cohort>>('GET', '/cohorts?limit=500')
    .then((page) => {
      cohort.append(...page.results.map((c) => h('option', { value: c.id, selected: c.id === wantedCohort }, `${c.name} (${formatCount(c.size)})`)));
    })
    .catch(() => {})
    .finally(() => void load());
  search.focus();
  return () => {
    loading?.abort();
    clearTimeout(debounce);
  };
}

/** `#/persons`: the list; `#/persons/<personId>`: that person. */
export function personsView(root: HTMLElement): () => void {
  const [personId] = currentRoute().rest;
  return personId ? personView(root, personId) : personList(root);
}
