import { api, ApiError, describeError } from '../../api';
import { h } from '../../dom';
import type { Cohort, CohortFilter, PropertyOperator } from '../../types';
import { confirmAction } from '../../ui/dialog';
import { formatCount, formatTime } from '../../ui/format';
import { hashOf } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { loadSuggestions } from '../insights/suggestions';

const OPERATORS: Array<[PropertyOperator, string]> = [
  ['eq', 'equals'],
  ['neq', 'does not equal'],
  ['contains', 'contains'],
  ['not_contains', 'does not contain'],
  ['in', 'is one of'],
  ['not_in', 'is none of'],
  ['regex', 'matches regex'],
  ['gt', '>'],
  ['gte', '≥'],
  ['lt', '<'],
  ['lte', '≤'],
  ['is_set', 'is set'],
  ['is_not_set', 'is not set'],
];
const NO_VALUE: readonly PropertyOperator[] = ['is_set', 'is_not_set'];
const LISTS: readonly PropertyOperator[] = ['in', 'not_in'];
const NUMBERS: readonly PropertyOperator[] = ['gt', 'gte', 'lt', 'lte'];
/** A new behavioural filter: did it at least once in the last 30 days. */
const NEW_PERFORMED = { atLeast: 1, withinDays: 30 };

let lists = 0;
/** A datalist of suggestions for inputs with `list`, filled when they come. */
function datalist(values: Promise<string[]>): HTMLDataListElement {
  const list = h('datalist', { id: `cohort-list-${++lists}` });
  values.then((v) => list.append(...v.map((value) => h('option', { value }))), () => {});
  return list;
}

interface FilterRow {
  element: HTMLElement;
  /** The filter as the API takes it; throws a readable Error when incomplete. */
  value(): CohortFilter;
}

function propertyRow(filter: Extract<CohortFilter, { property: string }> | undefined, names: HTMLDataListElement): FilterRow {
  const property = h('input', { type: 'text', name: 'property', 'aria-label': 'Person property', placeholder: 'plan, email, company.size…', list: names.id, value: filter?.property ?? '', autocomplete: 'off' });
  const operator = h('select', { name: 'operator', 'aria-label': 'Operator' }, ...OPERATORS.map(([op, label]) => h('option', { value: op, selected: op === (filter?.operator ?? 'eq') }, label)));
  const shown = filter?.value === undefined ? '' : Array.isArray(filter.value) ? filter.value.join(', ') : String(filter.value);
  const value = h('input', { type: 'text', name: 'value', 'aria-label': 'Value', placeholder: 'value', value: shown, autocomplete: 'off' });
  const sync = () => {
    const op = operator.value as PropertyOperator;
    value.hidden = NO_VALUE.includes(op);
    value.placeholder = LISTS.includes(op) ? 'values, comma separated' : NUMBERS.includes(op) ? 'a number' : 'value';
  };
  operator.addEventListener('change', sync);
  sync();
  return {
    element: h('div', { class: 'cohort-filter-fields' }, h('span', { class: 'filter-kind' }, 'Person property'), property, operator, value),
    value: () => {
      const op = operator.value as PropertyOperator;
      if (!property.value.trim()) throw new Error('A person property filter needs a property name.');
      const out: CohortFilter = { property: property.value.trim(), operator: op };
      if (NO_VALUE.includes(op)) return out;
      const text = value.value.trim();
      if (LISTS.includes(op)) out.value = text.split(',').map((v) => v.trim()).filter(Boolean);
      else if (NUMBERS.includes(op)) {
        if (text === '' || !Number.isFinite(Number(text))) throw new Error(`“${property.value.trim()} ${OPERATORS.find(([o]) => o === op)![1]}” needs a number.`);
        out.value = Number(text);
      } else out.value = text;
      return out;
    },
  };
}

function performedRow(filter: Extract<CohortFilter, { performed: string }> | undefined, events: HTMLDataListElement): FilterRow {
  const event = h('input', { type: 'text', name: 'performed', 'aria-label': 'Event', placeholder: 'event name', list: events.id, value: filter?.performed ?? '', autocomplete: 'off' });
  const atLeast = h('input', { type: 'number', name: 'atLeast', 'aria-label': 'At least this many times', min: 1, step: 1, value: filter?.atLeast ?? NEW_PERFORMED.atLeast });
  const within = h('input', { type: 'number', name: 'withinDays', 'aria-label': 'Within the last days', min: 1, max: 3650, step: 1, value: filter?.withinDays ?? NEW_PERFORMED.withinDays });
  return {
    element: h('div', { class: 'cohort-filter-fields' }, h('span', { class: 'filter-kind' }, 'Performed'), event, h('span', { class: 'muted' }, 'at least'), atLeast, h('span', { class: 'muted' }, 'times in the last'), within, h('span', { class: 'muted' }, 'days')),
    value: () => {
      if (!event.value.trim()) throw new Error('A behavioural filter needs an event name.');
      return { performed: event.value.trim(), atLeast: Number(atLeast.value) || 1, withinDays: Number(within.value) };
    },
  };
}

/**
 * A cohort's editor (`#/cohorts/new`, `#/cohorts/<id>`): its name and filters, all of which must
 * hold: person properties (the latest traits) and behaviour (did an event at least n times in
 * the last d days). Saving shows how many persons are in it now.
 */
export function cohortEditor(root: HTMLElement, id: string | undefined): () => void {
  const suggestions = loadSuggestions();
  const names = datalist(suggestions.then((s) => s.personProperties));
  const events = datalist(suggestions.then((s) => s.events));
  const title = h('h1', {}, id ? 'Cohort' : 'New cohort');
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off', placeholder: 'Pro buyers, Churn risk…' });
  const rows = h('div', { class: 'cohort-filters' });
  const addProperty = h('button', { type: 'button', class: 'secondary small' }, '+ Person property');
  const addPerformed = h('button', { type: 'button', class: 'secondary small' }, '+ Performed event');
  const message = h('div', { 'aria-live': 'polite' });
  const save = h('button', { type: 'submit', class: 'primary' }, id ? 'Save' : 'Create cohort');
  const remove = h('button', { type: 'button', class: 'danger', hidden: !id }, 'Delete');
  const size = h('div', { class: 'cohort-size card', role: 'status' }, h('span', { class: 'muted' }, id ? 'Loading…' : 'Save to count its persons.'));
  const form = h(
    'form',
    { class: 'card form-card cohort-form', 'aria-label': 'Cohort' },
    h('label', { class: 'field wide' }, h('span', {}, 'Name'), name),
    h('h2', {}, 'Persons for whom all of these hold'),
    rows,
    h('div', { class: 'form-actions' }, addProperty, addPerformed),
    message,
    h('div', { class: 'form-actions' }, remove, h('span', { class: 'spacer' }), save),
    names,
    events,
  );
  root.append(h('div', { class: 'page-header' }, h('a', { href: '#/cohorts', class: 'back-link', 'aria-label': 'All cohorts' }, '←'), title), h('div', { class: 'cohort-layout' }, form, size));

  const filters: FilterRow[] = [];
  const add = (row: FilterRow) => {
    const drop = h('button', { type: 'button', class: 'icon-button', 'aria-label': 'Remove this filter', title: 'Remove' }, '✕');
    const wrapper = h('div', { class: 'cohort-filter' }, row.element, drop);
    drop.addEventListener('click', () => {
      filters.splice(filters.indexOf(row), 1);
      wrapper.remove();
    });
    filters.push(row);
    rows.append(wrapper);
    return row;
  };
  addProperty.addEventListener('click', () => add(propertyRow(undefined, names)).element.querySelector('input')?.focus());
  addPerformed.addEventListener('click', () => add(performedRow(undefined, events)).element.querySelector('input')?.focus());

  const showSize = (c: Cohort) => {
    size.replaceChildren(
      h('span', { class: 'muted' }, 'In this cohort now'),
      h('strong', { class: 'cohort-size-value', 'data-value': c.size }, formatCount(c.size)),
      h('span', { class: 'muted' }, c.size === 1 ? 'person' : 'persons'),
      h('a', { href: hashOf('persons', [], { cohort: c.id }) }, 'See them →'),
      h('p', { class: 'muted small' }, `Computed from the events when asked; saved ${formatTime(c.updatedAt)}.`),
    );
  };
  const show = (c: Cohort) => {
    title.textContent = c.name;
    document.title = `${c.name} · Cohorts · Event analytics`;
    name.value = c.name;
    rows.replaceChildren();
    filters.length = 0;
    for (const f of c.filters) add('performed' in f ? performedRow(f, events) : propertyRow(f, names));
    showSize(c);
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.replaceChildren();
    let body: { name: string; filters: CohortFilter[] };
    try {
      if (filters.length === 0) throw new Error('Add at least one filter.');
      body = { name: name.value.trim(), filters: filters.map((f) => f.value()) };
    } catch (err) {
      message.replaceChildren(notice('error', 'Not saved', (err as Error).message));
      return;
    }
    save.disabled = true;
    size.replaceChildren(h('span', { class: 'muted' }, 'Counting…'));
    try {
      const saved = await api<Cohort>(id ? 'PUT' : 'POST', id ? `/cohorts/${encodeURIComponent(id)}` : '/cohorts', body);
      if (!id) {
        location.hash = hashOf('cohorts', [saved.id]);
        return;
      }
      show(saved);
      message.replaceChildren(notice('info', `Saved ${saved.name}`));
    } catch (err) {
      size.replaceChildren(h('span', { class: 'muted' }, 'Not counted.'));
      message.replaceChildren(notice('error', 'Not saved', describeError(err)));
    } finally {
      save.disabled = false;
    }
  });
  remove.addEventListener('click', async () => {
    if (!id || !(await confirmAction(`Delete ${name.value}?`, 'Insights and persons lists filtered by this cohort will answer an error until changed.', 'Delete cohort'))) return;
    try {
      await api('DELETE', `/cohorts/${encodeURIComponent(id)}`);
      location.hash = '#/cohorts';
    } catch (err) {
      message.replaceChildren(notice('error', 'Not deleted', describeError(err)));
    }
  });

  const controller = new AbortController();
  if (id) {
    api<Cohort>('GET', `/cohorts/${encodeURIComponent(id)}`, undefined, controller.signal).then(show, (err) => {
      if (controller.signal.aborted) return;
      const missing = err instanceof ApiError && err.status === 404;
      message.replaceChildren(notice('error', missing ? 'No such cohort' : 'The cohort could not be read', missing ? 'It may have been deleted.' : describeError(err)));
      size.replaceChildren();
    });
  } else {
    add(propertyRow(undefined, names));
    name.focus();
  }
  return () => controller.abort();
}
