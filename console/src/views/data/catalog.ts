import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Page } from '../../types';
import { formatCount, formatTime } from '../../ui/format';
import { hashOf, replaceHash } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { curate } from './curate';
import { type CatalogItem, type ObservedType, isProperty } from './types';

/** Items a page. */
const PAGE_SIZE = 100;
/** Typing in the search box searches once the typing pauses. */
const SEARCH_DEBOUNCE_MS = 300;

export type CatalogKind = 'events' | 'properties';

/** `string 201 · number 70`: more than one type is what a tracking plan is for, so it is marked. */
function typesCell(types: ObservedType[]): HTMLElement {
  return h(
    'td',
    { class: types.length > 1 ? 'wrap catalog-mixed' : 'wrap', title: types.length > 1 ? 'Sent with more than one type' : null },
    types.map((t) => `${t.type} ${formatCount(t.count)}`).join(' · '),
  );
}

function nameCell(item: CatalogItem): HTMLElement {
  const display = !isProperty(item) && item.displayName ? item.displayName : '';
  return h(
    'td',
    { class: 'wrap' },
    h('code', {}, item.name),
    item.verified ? h('span', { class: 'pill pill-verified', title: 'Verified' }, 'verified') : null,
    item.hidden ? h('span', { class: 'pill pill-hidden', title: 'Hidden from pickers' }, 'hidden') : null,
    display ? h('div', {}, display) : null,
    item.description ? h('div', { class: 'muted' }, item.description) : null,
  );
}

const HEADERS: Record<CatalogKind, string[]> = {
  events: ['Event', 'Types', 'Volume', 'Last seen', 'Sent by', 'Owner', ''],
  properties: ['Property', 'Source', 'Types', 'Volume', 'Seen on', 'Examples', 'Last seen', ''],
};

function itemRow(kind: CatalogKind, item: CatalogItem, edit: (item: CatalogItem) => void): HTMLElement {
  const editButton = h('button', { type: 'button', class: 'secondary small', 'aria-label': `Edit ${item.name}` }, 'Edit');
  editButton.addEventListener('click', () => edit(item));
  const lastSeen = h('td', { class: 'hide-narrow' }, formatTime(item.lastSeen));
  if (kind === 'events' || !isProperty(item)) {
    return h(
      'tr',
      { 'data-name': item.name },
      nameCell(item),
      typesCell(item.types),
      h('td', { class: 'num' }, formatCount(item.volume)),
      lastSeen,
      h('td', { class: 'wrap hide-narrow' }, item.libraries.filter(Boolean).join(', ') || '—'),
      h('td', { class: 'wrap hide-narrow' }, item.owner || '—'),
      h('td', {}, editButton),
    );
  }
  return h(
    'tr',
    { 'data-name': item.name, 'data-source': item.source },
    nameCell(item),
    h('td', {}, item.source),
    typesCell(item.types),
    h('td', { class: 'num' }, formatCount(item.volume)),
    h('td', { class: 'wrap hide-narrow' }, item.events.slice(0, 5).join(', ') + (item.events.length > 5 ? ` +${item.events.length - 5}` : '')),
    h('td', { class: 'wrap hide-narrow' }, h('code', {}, item.examples.join('  '))),
    lastSeen,
    h('td', {}, editButton),
  );
}

/**
 * The catalog's events or properties, most received first, searched by name, a page at a time;
 * each row's curated fields are edited in place. The search and page are kept in the URL.
 */
export function catalogList(root: HTMLElement, kind: CatalogKind, params: URLSearchParams): () => void {
  const search = h('input', { type: 'search', name: 'search', placeholder: kind === 'events' ? 'Search event names…' : 'Search property names…', 'aria-label': `Search ${kind}`, value: params.get('search') ?? '', autocomplete: 'off' });
  const hidden = h('select', { name: 'hidden', 'aria-label': 'Hidden items' }, h('option', { value: '' }, 'Hidden and shown'), h('option', { value: 'false' }, 'Shown only'), h('option', { value: 'true' }, 'Hidden only'));
  hidden.value = params.get('hidden') ?? '';
  const summary = h('span', { class: 'result-summary', role: 'status' });
  const prev = h('button', { type: 'button', class: 'secondary', disabled: true }, '← Previous');
  const next = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Next →');
  const results = h('div', {});
  root.append(h('div', { class: 'toolbar', role: 'search' }, search, hidden), h('div', { class: 'pager' }, summary, h('span', { class: 'spacer' }), prev, next), results);

  let offset = Math.max(0, Number(params.get('offset')) || 0);
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let loading: AbortController | undefined;

  const edit = async (item: CatalogItem) => {
    try {
      if (await curate(item)) await load();
    } catch (err) {
      results.prepend(notice('error', `${item.name} could not be saved`, describeError(err)));
    }
  };

  const load = async () => {
    loading?.abort();
    loading = new AbortController();
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset) });
    if (search.value.trim()) query.set('search', search.value.trim());
    if (hidden.value) query.set('hidden', hidden.value);
    replaceHash(hashOf('data', [kind], { search: search.value.trim(), hidden: hidden.value, offset: offset || undefined }));
    summary.textContent = 'Loading…';
    try {
      const page = await api<Page<CatalogItem>>('GET', `/catalog/${kind}?${query}`, undefined, loading.signal);
      const first = page.total === 0 ? 0 : page.offset + 1;
      summary.textContent = `${formatCount(first)}–${formatCount(page.offset + page.results.length)} of ${formatCount(page.total)} ${kind}`;
      prev.disabled = page.offset === 0;
      next.disabled = page.offset + page.results.length >= page.total;
      if (page.results.length === 0) {
        results.replaceChildren(notice('empty', `No ${kind} match`, search.value ? 'The search looks for the text in names, in any case.' : `The catalog lists the ${kind} the workspace has received, from every door, once events arrive.`));
        return;
      }
      results.replaceChildren(
        h(
          'div',
          { class: 'table-scroll' },
          h(
            'table',
            { class: `data-table catalog-table catalog-${kind}` },
            h('thead', {}, h('tr', {}, ...HEADERS[kind].map((c) => h('th', { scope: 'col', class: c === 'Volume' ? 'num' : ['Last seen', 'Sent by', 'Owner', 'Seen on', 'Examples'].includes(c) ? 'hide-narrow' : null }, c)))),
            h('tbody', {}, ...page.results.map((item) => itemRow(kind, item, (i) => void edit(i)))),
          ),
        ),
      );
    } catch (err) {
      if (loading.signal.aborted) return;
      summary.textContent = '';
      results.replaceChildren(notice('error', `The ${kind} could not be read`, describeError(err)));
    }
  };

  search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      offset = 0;
      void load();
    }, SEARCH_DEBOUNCE_MS);
  });
  hidden.addEventListener('change', () => {
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
  void load();
  return () => {
    loading?.abort();
    clearTimeout(debounce);
  };
}
