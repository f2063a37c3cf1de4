import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Cohort, CohortFilter, Page } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { currentRoute, hashOf } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { cohortEditor } from './editor';

/** A filter in words: `plan eq pro`, `did purchase ≥ 2× in 30 days`. */
function filterText(f: CohortFilter): string {
  if ('performed' in f) return `did ${f.performed}${(f.atLeast ?? 1) > 1 ? ` ≥ ${f.atLeast}×` : ''} in ${f.withinDays} days`;
  const value = f.value === undefined ? '' : ` ${Array.isArray(f.value) ? f.value.join(', ') : String(f.value)}`;
  return `${f.property} ${f.operator.replace('_', ' ')}${value}`;
}

/** The cohorts of the workspace with their current sizes. */
function cohortList(root: HTMLElement): () => void {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Counting…'));
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Cohorts'), h('span', { class: 'spacer' }), h('a', { href: hashOf('cohorts', ['new']), class: 'button-link primary' }, '+ New cohort')),
    list,
  );
  const controller = new AbortController();
  api<Page<Cohort>>('GET', '/cohorts?limit=500', undefined, controller.signal).then(
    (page) => {
      list.replaceChildren(
        page.results.length === 0
          ? notice('empty', 'No cohorts yet', 'A cohort is a saved set of persons: by their traits (plan is pro) and what they did (purchased twice in 30 days). Use it to filter insights and the persons list.')
          : h(
              'div',
              { class: 'table-scroll' },
              h(
                'table',
                { class: 'data-table' },
                h('thead', {}, h('tr', {}, ...['Name', 'Persons', 'Filters', 'Updated'].map((c, i) => h('th', { scope: 'col', class: i === 1 ? 'num' : i === 3 ? 'hide-narrow' : null }, c)))),
                h(
                  'tbody',
                  {},
                  ...page.results.map((c) =>
                    h(
                      'tr',
                      { 'data-name': c.name },
                      h('td', {}, h('a', { href: hashOf('cohorts', [c.id]), class: 'strong-link' }, c.name)),
                      h('td', { class: 'num' }, h('a', { href: hashOf('persons', [], { cohort: c.id }), title: 'See its persons' }, formatCount(c.size))),
                      h('td', { class: 'wrap' }, c.filters.map(filterText).join(' · ')),
                      h('td', { class: 'hide-narrow' }, formatTime(c.updatedAt)),
                    ),
                  ),
                ),
              ),
            ),
      );
    },
    (err) => {
      if (!controller.signal.aborted) list.replaceChildren(notice('error', 'Cohorts could not be read', describeError(err)));
    },
  );
  return () => controller.abort();
}

/** `#/cohorts`: the list; `#/cohorts/new` and `#/cohorts/<id>`: the editor. */
export function cohortsView(root: HTMLElement): () => void {
  const [id] = currentRoute().rest;
  if (id) return cohortEditor(root, id === 'new' ? undefined : id);
  return cohortList(root);
}
