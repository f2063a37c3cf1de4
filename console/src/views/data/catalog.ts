import { describeError } from '../../api';
import { h } from '../../dom';
import { formatCount, formatTime } from '../../ui/format';
import { notice } from '../../ui/notice';
import { searchedList } from '../../ui/searched-list';
import { curate } from './curate';
import { type CatalogItem, type ObservedType, isProperty } from './types';

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
 * each row's curated fields are edited in place. The search, filter and page are kept in the URL.
 */
export function catalogList(root: HTMLElement, kind: CatalogKind, params: URLSearchParams): () => void {
  const search = h('input', { type: 'search', name: 'search', placeholder: kind === 'events' ? 'Search event names…' : 'Search property names…', 'aria-label': `Search ${kind}`, value: params.get('search') ?? '', autocomplete: 'off' });
  const hidden = h('select', { name: 'hidden', 'aria-label': 'Hidden items' }, h('option', { value: '' }, 'Hidden and shown'), h('option', { value: 'false' }, 'Shown only'), h('option', { value: 'true' }, 'Hidden only'));
  hidden.value = params.get('hidden') ?? '';
  const edit = async (item: CatalogItem) => {
    try {
      if (await curate(item)) list.start();
    } catch (err) {
      list.results.prepend(notice('error', `${item.name} could not be saved`, describeError(err)));
    }
  };
  const list = searchedList<CatalogItem>({
    page: `data/${kind}`,
    path: `/catalog/${kind}`,
    noun: kind,
    search,
    filters: () => ({ hidden: hidden.value }),
    table: (items) =>
      h(
        'div',
        { class: 'table-scroll' },
        h(
          'table',
          { class: `data-table catalog-table catalog-${kind}` },
          h('thead', {}, h('tr', {}, ...HEADERS[kind].map((c) => h('th', { scope: 'col', class: c === 'Volume' ? 'num' : ['Last seen', 'Sent by', 'Owner', 'Seen on', 'Examples'].includes(c) ? 'hide-narrow' : null }, c)))),
          h('tbody', {}, ...items.map((item) => itemRow(kind, item, (i) => void edit(i)))),
        ),
      ),
    empty: (searching) => notice('empty', `No ${kind} match`, searching ? 'The search looks for the text in names, in any case.' : `The catalog lists the ${kind} the workspace has received, from every door, once events arrive.`),
  });
  hidden.addEventListener('change', list.restart);
  root.append(h('div', { class: 'toolbar', role: 'search' }, search, hidden), list.pager, list.results);
  list.start();
  return list.stop;
}
