import { api, describeError } from '../api';
import { h } from '../dom';
import { EVENT_TYPES, type Event, type Page, type Row } from '../types';
import { formatCount, formatTime, cellText } from '../ui/format';
import { keyValueText } from '../ui/key-values';
import { notice } from '../ui/notice';
import { virtualTable } from '../ui/table';
import { showEvent } from './live';

const COLUMNS = ['timestamp', 'type', 'event', 'userId', 'anonymousId', 'groupId', 'properties', 'context'];
/** Columns holding objects: shown as `key: value` pairs, not as JSON. */
const OBJECT_COLUMNS = new Set(['properties', 'traits', 'context']);
const TEXT_FILTERS = ['event', 'userId', 'anonymousId', 'groupId', 'instanceId'] as const;
const ORDER_FIELDS = ['timestamp', 'parsedAt', 'type', 'event', 'userId', 'anonymousId', 'groupId', 'instanceId', 'uuid'];
const PAGE_SIZES = [50, 100, 500, 1000];

/** `datetime-local` gives local wall time without a zone: sent as the ISO instant it means here. */
function isoFrom(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}

/**
 * The Explorer: GET /events's filters as a form, `properties.<key>` (and traits, context)
 * included, with paging and the page as a table. Enter in any field searches.
 */
export function explorerView(root: HTMLElement): void {
  const field = (label: string, control: HTMLElement) => h('label', { class: 'field' }, h('span', {}, label), control);
  const type = h('select', { name: 'type' }, h('option', { value: '' }, 'Any'), ...EVENT_TYPES.map((t) => h('option', { value: t }, t)));
  const texts = Object.fromEntries(TEXT_FILTERS.map((name) => [name, h('input', { name, type: 'text', autocomplete: 'off' })])) as Record<(typeof TEXT_FILTERS)[number], HTMLInputElement>;
  const start = h('input', { name: 'startDate', type: 'datetime-local', step: 1 });
  const end = h('input', { name: 'endDate', type: 'datetime-local', step: 1 });
  const orderField = h('select', { name: 'orderByField' }, ...ORDER_FIELDS.map((f) => h('option', { value: f }, f)));
  const orderDirection = h('select', { name: 'orderByDirection' }, h('option', { value: 'DESC' }, 'newest first'), h('option', { value: 'ASC' }, 'oldest first'));
  const pageSize = h('select', { name: 'limit' }, ...PAGE_SIZES.map((n) => h('option', { value: n }, `${n} per page`)));
  const objectFilters = h('div', { class: 'object-filters' });
  const addObjectFilter = (scope = 'properties', key = '', value = '') => {
    const scopeSelect = h('select', { 'aria-label': 'Object' }, ...['properties', 'traits', 'context'].map((s) => h('option', { value: s, selected: s === scope }, s)));
    const keyInput = h('input', { type: 'text', placeholder: 'key', 'aria-label': 'Key', value: key });
    const valueInput = h('input', { type: 'text', placeholder: 'value', 'aria-label': 'Value', value });
    const remove = h('button', { type: 'button', class: 'secondary small', 'aria-label': 'Remove this filter' }, '✕');
    const rowEl = h('div', { class: 'object-filter' }, scopeSelect, h('span', { class: 'muted' }, '.'), keyInput, h('span', { class: 'muted' }, '='), valueInput, remove);
    remove.addEventListener('click', () => rowEl.remove());
    objectFilters.append(rowEl);
    keyInput.focus();
  };
  const addButton = h('button', { type: 'button', class: 'secondary small' }, '+ properties.<key> filter');
  addButton.addEventListener('click', () => addObjectFilter());
  const search = h('button', { type: 'submit', class: 'primary' }, 'Search');
  const reset = h('button', { type: 'reset', class: 'secondary' }, 'Reset');
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Event filters' },
    h('div', { class: 'filter-grid' }, field('type', type), ...TEXT_FILTERS.map((n) => field(n, texts[n])), field('from', start), field('to', end), field('order by', orderField), field('direction', orderDirection)),
    objectFilters,
    h('div', { class: 'form-actions' }, addButton, h('span', { class: 'spacer' }), pageSize, reset, search),
  );
  const summary = h('div', { class: 'result-summary', role: 'status' });
  const prev = h('button', { type: 'button', class: 'secondary', disabled: true }, '← Previous');
  const next = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Next →');
  const results = h('div', { class: 'results' });
  root.append(h('div', { class: 'page-header' }, h('h1', {}, 'Explorer')), form, h('div', { class: 'pager' }, summary, h('span', { class: 'spacer' }), prev, next), results);

  let offset = 0;
  const query = () => {
    const params = new URLSearchParams();
    if (type.value) params.set('type', type.value);
    for (const n of TEXT_FILTERS) if (texts[n].value.trim()) params.set(n, texts[n].value.trim());
    const from = isoFrom(start.value);
    const to = isoFrom(end.value);
    if (from) params.set('startDate', from);
    if (to) params.set('endDate', to);
    for (const rowEl of objectFilters.children) {
      const [scope, key, value] = [...rowEl.querySelectorAll<HTMLInputElement | HTMLSelectElement>('select, input')].map((c) => c.value.trim());
      if (key) params.set(`${scope}.${key}`, value ?? '');
    }
    params.set('orderByField', orderField.value);
    params.set('orderByDirection', orderDirection.value);
    params.set('limit', pageSize.value);
    params.set('offset', String(offset));
    return params;
  };

  const load = async () => {
    search.disabled = true;
    summary.textContent = 'Loading…';
    try {
      const page = await api<Page<Event>>('GET', `/events?${query()}`);
      const first = page.total === 0 ? 0 : page.offset + 1;
      summary.textContent = `${formatCount(first)}–${formatCount(page.offset + page.results.length)} of ${formatCount(page.total)} events`;
      prev.disabled = page.offset === 0;
      next.disabled = page.offset + page.results.length >= page.total;
      if (page.results.length === 0) {
        results.replaceChildren(notice('empty', 'No events match', 'Loosen a filter, or widen the time range. Filters combine with AND; properties filters compare the exact value.'));
        return;
      }
      results.replaceChildren(
        virtualTable({
          columns: COLUMNS,
          rows: page.results as unknown as Row[],
          onOpen: (row) => showEvent(row as unknown as Event),
          format: (c, v) => (c === 'timestamp' && typeof v === 'string' ? formatTime(v) : OBJECT_COLUMNS.has(c) ? keyValueText(v) : cellText(v)),
        }),
      );
    } catch (err) {
      summary.textContent = '';
      results.replaceChildren(notice('error', 'The search was refused', describeError(err)));
    } finally {
      search.disabled = false;
    }
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    offset = 0;
    void load();
  });
  form.addEventListener('reset', () => {
    objectFilters.replaceChildren();
    offset = 0;
    setTimeout(load);
  });
  prev.addEventListener('click', () => {
    offset = Math.max(0, offset - Number(pageSize.value));
    void load();
  });
  next.addEventListener('click', () => {
    offset += Number(pageSize.value);
    void load();
  });
  void load();
}
