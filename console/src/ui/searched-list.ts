import { api, describeError } from '../api';
import { h } from '../dom';
import type { Page } from '../types';
import { formatCount } from './format';
import { currentRoute, hashOf, replaceHash } from './hash';
import { notice } from './notice';

/** Items a page. */
const PAGE_SIZE = 50;
/** Typing in the search box searches once the typing pauses. */
const SEARCH_DEBOUNCE_MS = 300;

export interface SearchedListOptions<T> {
  /** The console page (`persons`): its URL keeps the search, the `filters` and the page. */
  page: string;
  /** The API's listing (`/persons`), paged, taking `search`. */
  path: string;
  /** What the items are, plural (`persons`). */
  noun: string;
  search: HTMLInputElement;
  /** Parameters beside the search (a cohort), read at each load; empty ones are left out. */
  filters?: () => Record<string, string>;
  table(items: T[]): HTMLElement;
  /** The notice of an empty page, `searching` when a search is typed. */
  empty(searching: boolean): HTMLElement;
}

/**
 * A listing of the API, searched as one types, a page at a time, most recent first: the pager
 * (summary, previous, next) and the results. `start` reads the page the URL names, `restart` the
 * first page again (a filter changed); the search box is wired here. The search, filters and page
 * are kept in the URL.
 */
export function searchedList<T>(o: SearchedListOptions<T>): { pager: HTMLElement; results: HTMLElement; start: () => void; restart: () => void; stop: () => void } {
  const summary = h('span', { class: 'result-summary', role: 'status' });
  const prev = h('button', { type: 'button', class: 'secondary', disabled: true }, '← Previous');
  const next = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Next →');
  const results = h('div', {});
  let offset = Math.max(0, Number(currentRoute().params.get('offset')) || 0);
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let loading: AbortController | undefined;

  const read = async () => {
    loading?.abort();
    loading = new AbortController();
    const text = o.search.value.trim();
    const filters = Object.fromEntries(Object.entries(o.filters?.() ?? {}).filter(([, v]) => v));
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset), ...(text ? { search: text } : {}), ...filters });
    replaceHash(hashOf(o.page, [], { search: text, ...filters, offset: offset || undefined }));
    summary.textContent = 'Loading…';
    try {
      const page = await api<Page<T>>('GET', `${o.path}?${params}`, undefined, loading.signal);
      const first = page.total === 0 ? 0 : page.offset + 1;
      summary.textContent = `${formatCount(first)}–${formatCount(page.offset + page.results.length)} of ${formatCount(page.total)} ${o.noun}`;
      prev.disabled = page.offset === 0;
      next.disabled = page.offset + page.results.length >= page.total;
      results.replaceChildren(page.results.length === 0 ? o.empty(text !== '') : o.table(page.results));
    } catch (err) {
      if (loading.signal.aborted) return;
      summary.textContent = '';
      results.replaceChildren(notice('error', `${o.noun[0]!.toUpperCase()}${o.noun.slice(1)} could not be read`, describeError(err)));
    }
  };
  const restart = () => {
    offset = 0;
    void read();
  };

  o.search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(restart, SEARCH_DEBOUNCE_MS);
  });
  o.search.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    clearTimeout(debounce);
    restart();
  });
  prev.addEventListener('click', () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    void read();
  });
  next.addEventListener('click', () => {
    offset += PAGE_SIZE;
    void read();
  });
  return {
    pager: h('div', { class: 'pager' }, summary, h('span', { class: 'spacer' }), prev, next),
    results,
    start: () => void read(),
    restart,
    stop: () => {
      loading?.abort();
      clearTimeout(debounce);
    },
  };
}
