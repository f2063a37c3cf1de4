import { describeError } from '../../api';
import { h } from '../../dom';
import { openDialog } from '../../ui/dialog';
import { columnValue, type PanelColumn, type PanelRequest } from './columns';
import { compactNumber } from './format';
import { DIMENSIONS, valueLabel, type Dimension } from './filters';
import type { StatsAnswer } from './query';

/** Rows asked at a time in the details. */
export const DETAILS_PAGE = 100;
/** Typing pauses this long before the search is asked. */
const SEARCH_WAIT_MS = 300;

/**
 * Plausible's "Details" of a panel: every row of its breakdown, a page at a time, with the
 * panel's numbers, and a search (the API's `contains` filter, any case). A row filters the
 * screen, as in the panel, and closes the dialog.
 */
export function panelDetails(title: string, dimension: Dimension, columns: PanelColumn[], load: (request: PanelRequest, signal: AbortSignal) => Promise<StatsAnswer>, onPick: (dimension: Dimension, value: string) => void): void {
  const metrics = columns.map((c) => c.metric);
  const search = h('input', { type: 'search', name: 'search', placeholder: `Search ${DIMENSIONS[dimension].label.toLowerCase()}s`, 'aria-label': 'Search', autocomplete: 'off' });
  const status = h('p', { class: 'muted ov-details-status', role: 'status' }, 'Loading…');
  const rows = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary small', hidden: true }, 'Show more');
  const table = h(
    'table',
    { class: 'data-table ov-details-table', 'data-dimension': dimension },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, DIMENSIONS[dimension].label), ...columns.map((c) => h('th', { scope: 'col', class: 'num' }, c.label)))),
    rows,
  );
  const body = h('div', { class: 'ov-details' }, search, status, h('div', { class: 'ov-details-scroll' }, table), more);
  let asked: AbortController | undefined;
  let shown = 0;

  const page = async (fresh: boolean) => {
    asked?.abort();
    const controller = (asked = new AbortController());
    if (fresh) shown = 0;
    more.disabled = true;
    status.textContent = 'Loading…';
    try {
      const text = search.value.trim();
      const answer = await load({ dimension, metrics, limit: DETAILS_PAGE, offset: shown, totalRows: true, ...(text ? { search: text } : {}) }, controller.signal);
      if (controller.signal.aborted) return;
      if (fresh) rows.replaceChildren();
      for (const row of answer.results) {
        const value = String(row.dimensions[0] ?? '');
        const pick = h('button', { type: 'button', class: 'link-button', title: 'Filter the overview by it' }, valueLabel(dimension, value));
        pick.addEventListener('click', () => {
          body.closest('dialog')?.close();
          onPick(dimension, value);
        });
        rows.append(h('tr', { 'data-value': value }, h('td', { class: 'wrap' }, pick), ...columns.map((c, i) => h('td', { class: 'num', 'data-metric': c.metric }, columnValue(c, Number(row.metrics[i] ?? 0))))));
      }
      shown += answer.results.length;
      const total = Number(answer.meta?.total_rows ?? shown);
      status.textContent = total === 0 ? (text ? 'Nothing contains this.' : 'Nothing in this period yet.') : `${compactNumber(shown)} of ${compactNumber(total)}`;
      status.dataset.total = String(total);
      more.hidden = shown >= total;
    } catch (err) {
      if (!controller.signal.aborted) status.textContent = describeError(err);
    } finally {
      more.disabled = false;
    }
  };

  let typing: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => void page(true), SEARCH_WAIT_MS);
  });
  // Enter asks at once; inside the dialog's form it would close it.
  search.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    clearTimeout(typing);
    void page(true);
  });
  more.addEventListener('click', () => void page(false));
  void openDialog(title, body).then(() => {
    clearTimeout(typing);
    asked?.abort();
  });
  void page(true);
  search.focus();
}
