import { h } from '../../dom';
import { flagImage } from './flags';
import { countryName } from './format';
import type { StatsFilter } from './query';

/** The dimensions the panels break visits down by, with how a value of each reads. */
export const DIMENSIONS = {
  'visit:source': { label: 'Source', empty: 'Direct / None' },
  'visit:utm_medium': { label: 'UTM medium', empty: '(not set)' },
  'visit:utm_source': { label: 'UTM source', empty: '(not set)' },
  'visit:utm_campaign': { label: 'UTM campaign', empty: '(not set)' },
  'event:page': { label: 'Page', empty: '(none)' },
  'visit:entry_page': { label: 'Entry page', empty: '(none)' },
  'visit:exit_page': { label: 'Exit page', empty: '(none)' },
  'visit:country': { label: 'Country', empty: 'Unknown' },
  'visit:browser': { label: 'Browser', empty: 'Unknown' },
  'visit:os': { label: 'Operating system', empty: 'Unknown' },
  'visit:device': { label: 'Device', empty: 'Unknown' },
  'event:goal': { label: 'Goal', empty: '(none)' },
} as const;
export type Dimension = keyof typeof DIMENSIONS;
export const isDimension = (d: string): d is Dimension => Object.hasOwn(DIMENSIONS, d);

/** One filter of the screen: a dimension is one value (a row clicked). */
export interface Filter {
  dimension: Dimension;
  value: string;
}

/** A value as it reads in a row or a chip: a country by its name. */
export function valueText(dimension: Dimension, value: string): string {
  if (value === '') return DIMENSIONS[dimension].empty;
  if (dimension === 'visit:country') return countryName(value);
  if (dimension === 'visit:device') return value.charAt(0).toUpperCase() + value.slice(1);
  return value;
}

/** A value as a row, a chip or the details show it: a country with its flag before its name. */
export function valueLabel(dimension: Dimension, value: string): HTMLElement {
  const flag = dimension === 'visit:country' ? flagImage(value) : null;
  return h('span', { class: 'ov-value' }, flag, valueText(dimension, value));
}

/** The filters in the API's form, every one of them to hold. */
export const toStatsFilters = (filters: readonly Filter[]): StatsFilter[] => filters.map((f) => ['is', f.dimension, [f.value]]);

/** A clicked row's filter replaces one on the same dimension. */
export function withFilter(filters: readonly Filter[], next: Filter): Filter[] {
  return [...filters.filter((f) => f.dimension !== next.dimension), next];
}

/** In the URL: `f=visit:country=DE` for each. */
export function filtersFromParams(params: URLSearchParams): Filter[] {
  const out: Filter[] = [];
  for (const entry of params.getAll('f')) {
    const at = entry.indexOf('=');
    const dimension = entry.slice(0, at);
    if (at > 0 && isDimension(dimension)) out.push({ dimension, value: entry.slice(at + 1) });
  }
  return out;
}

export const filterParams = (filters: readonly Filter[]) => filters.map((f) => `${f.dimension}=${f.value}`);

/** The chips of the filters in force, each removable, and one to clear them all. */
export function filterChips(filters: readonly Filter[], onRemove: (f: Filter | 'all') => void): HTMLElement {
  const bar = h('div', { class: 'ov-filters', role: 'list', 'aria-label': 'Filters' });
  for (const f of filters) {
    const remove = h('button', { type: 'button', class: 'ov-chip-remove', 'aria-label': `Remove the filter ${DIMENSIONS[f.dimension].label} is ${valueText(f.dimension, f.value)}`, title: 'Remove this filter' }, '×');
    remove.addEventListener('click', () => onRemove(f));
    bar.append(
      h(
        'span',
        { class: 'ov-chip', role: 'listitem', 'data-dimension': f.dimension, 'data-value': f.value },
        h('span', { class: 'muted' }, `${DIMENSIONS[f.dimension].label} is`),
        h('strong', {}, valueLabel(f.dimension, f.value)),
        remove,
      ),
    );
  }
  if (filters.length > 1) {
    const clear = h('button', { type: 'button', class: 'secondary small' }, 'Clear all');
    clear.addEventListener('click', () => onRemove('all'));
    bar.append(clear);
  }
  return bar;
}
