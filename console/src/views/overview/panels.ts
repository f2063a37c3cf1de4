import { describeError } from '../../api';
import { h } from '../../dom';
import { panelDetails } from './details';
import { columnValue, type PanelColumn, type PanelRequest } from './columns';
import { DIMENSIONS, valueLabel, valueText, type Dimension } from './filters';
import type { StatsAnswer } from './query';

/** Rows a panel shows, as Plausible's dashboard does. */
export const PANEL_ROWS = 9;

export interface PanelSpec {
  id: string;
  title: string;
  tabs: Array<{ dimension: Dimension; label: string }>;
  /** The numbers of each row, the first ranking the rows and sizing their bars (visitors unless said). */
  columns?: PanelColumn[];
  /** What an empty panel says, when more than that it has nothing. */
  empty?: string;
}

const VISITORS: PanelColumn[] = [{ metric: 'visitors', label: 'Visitors' }];

/** The panels, Plausible's: sources and UTM, pages, locations, devices, and goals (custom events). */
export const PANELS: PanelSpec[] = [
  {
    id: 'sources',
    title: 'Top sources',
    tabs: [
      { dimension: 'visit:source', label: 'Sources' },
      { dimension: 'visit:utm_medium', label: 'Medium' },
      { dimension: 'visit:utm_source', label: 'UTM source' },
      { dimension: 'visit:utm_campaign', label: 'Campaign' },
    ],
  },
  {
    id: 'pages',
    title: 'Top pages',
    tabs: [
      { dimension: 'event:page', label: 'Top pages' },
      { dimension: 'visit:entry_page', label: 'Entry pages' },
      { dimension: 'visit:exit_page', label: 'Exit pages' },
    ],
  },
  { id: 'locations', title: 'Countries', tabs: [{ dimension: 'visit:country', label: 'Countries' }] },
  {
    id: 'devices',
    title: 'Devices',
    tabs: [
      { dimension: 'visit:browser', label: 'Browsers' },
      { dimension: 'visit:os', label: 'OS' },
      { dimension: 'visit:device', label: 'Devices' },
    ],
  },
  {
    id: 'goals',
    title: 'Goal conversions',
    tabs: [{ dimension: 'event:goal', label: 'Goals' }],
    // Plausible's columns: unique conversions, total conversions, conversion rate.
    columns: [
      { metric: 'visitors', label: 'Uniques' },
      { metric: 'events', label: 'Total' },
      { metric: 'conversion_rate', label: 'CR' },
    ],
    empty: "No custom events in this period: ea.track('Signed Up') on a page sends one.",
  },
];

export interface PanelHandle {
  element: HTMLElement;
  /** Asks again (the period or the filters changed). */
  reload(): void;
}

/**
 * A panel: its tabs, and the top rows of the chosen one's breakdown, each a button that filters
 * the whole screen by its value, and Details to see them all. `load` asks the API for rows.
 */
export function panel(spec: PanelSpec, chosen: Dimension, load: (request: PanelRequest, signal: AbortSignal) => Promise<StatsAnswer>, onPick: (dimension: Dimension, value: string) => void, onTab: (dimension: Dimension) => void): PanelHandle {
  const columns = spec.columns ?? VISITORS;
  const metrics = columns.map((c) => c.metric);
  let dimension = spec.tabs.some((t) => t.dimension === chosen) ? chosen : spec.tabs[0]!.dimension;
  let asked: AbortController | undefined;
  const body = h('div', { class: 'ov-panel-body' });
  const tabs = spec.tabs.map((t) => {
    const tab = h('button', { type: 'button', class: 'ov-tab', role: 'tab', 'data-dimension': t.dimension, 'aria-selected': t.dimension === dimension ? 'true' : 'false' }, t.label);
    tab.addEventListener('click', () => {
      if (dimension === t.dimension) return;
      dimension = t.dimension;
      for (const other of tabs) other.setAttribute('aria-selected', other.dataset.dimension === dimension ? 'true' : 'false');
      onTab(dimension);
      reload();
    });
    return tab;
  });
  const element = h(
    'section',
    { class: 'ov-panel card', 'data-panel': spec.id, 'aria-label': spec.title },
    h('header', { class: 'ov-panel-header' }, h('h2', {}, spec.title), tabs.length > 1 ? h('div', { class: 'ov-tabs', role: 'tablist', 'aria-label': spec.title }, ...tabs) : null),
    h('div', { class: 'ov-panel-columns muted' }, h('span', {}, DIMENSIONS[dimension].label), h('span', { class: 'ov-row-counts' }, ...columns.map((c) => h('span', { class: 'ov-row-count' }, c.label)))),
    body,
  );
  const heading = element.querySelector('.ov-panel-columns')!;
  const details = h('button', { type: 'button', class: 'secondary small ov-details-open', hidden: true }, 'Details');
  details.addEventListener('click', () => {
    const tab = spec.tabs.find((t) => t.dimension === dimension)!;
    panelDetails(tab.label === spec.title || spec.tabs.length === 1 ? spec.title : `${spec.title} · ${tab.label}`, dimension, columns, load, onPick);
  });
  element.append(h('footer', { class: 'ov-panel-footer' }, details));

  const draw = (answer: StatsAnswer) => {
    heading.firstElementChild!.textContent = DIMENSIONS[dimension].label;
    // A full panel may have more rows: Details lists them all.
    details.hidden = answer.results.length < PANEL_ROWS;
    if (answer.results.length === 0) return body.replaceChildren(h('p', { class: 'ov-panel-empty muted' }, spec.empty ?? 'Nothing in this period yet.'));
    const top = Math.max(1, ...answer.results.map((r) => Number(r.metrics[0] ?? 0)));
    const list = h('ol', { class: 'ov-rows' });
    for (const row of answer.results) {
      const value = String(row.dimensions[0] ?? '');
      const count = Number(row.metrics[0] ?? 0);
      const counts = columns.map((c, i) => h('span', { class: 'ov-row-count', 'data-metric': c.metric }, columnValue(c, Number(row.metrics[i] ?? 0))));
      const text = valueText(dimension, value);
      const bar = h('span', { class: 'ov-bar', 'aria-hidden': 'true' });
      bar.style.width = `${Math.max(1, (count / top) * 100)}%`;
      const button = h(
        'button',
        { type: 'button', class: 'ov-row', 'data-dimension': dimension, 'data-value': value, 'data-count': count, title: `Filter by ${DIMENSIONS[dimension].label.toLowerCase()}: ${text}` },
        bar,
        h('span', { class: 'ov-row-label' }, valueLabel(dimension, value)),
        h('span', { class: 'ov-row-counts' }, ...counts),
      );
      button.addEventListener('click', () => onPick(dimension, value));
      list.append(h('li', {}, button));
    }
    body.replaceChildren(list);
  };

  const reload = () => {
    asked?.abort();
    const controller = (asked = new AbortController());
    element.setAttribute('aria-busy', 'true');
    load({ dimension, metrics, limit: PANEL_ROWS }, controller.signal).then(
      (answer) => {
        if (controller.signal.aborted) return;
        element.removeAttribute('aria-busy');
        draw(answer);
      },
      (err) => {
        if (controller.signal.aborted) return;
        element.removeAttribute('aria-busy');
        body.replaceChildren(h('p', { class: 'ov-panel-error', role: 'alert' }, describeError(err)));
      },
    );
  };
  return { element, reload };
}
