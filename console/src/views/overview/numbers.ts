import { h } from '../../dom';
import { METRIC_LABELS, metricValue } from './format';
import { METRICS, type Metric } from './query';

export type Values = Partial<Record<Metric, number | null>>;

/**
 * The change from the previous period: a percentage of it, or for the bounce rate (a percentage
 * itself) the points it moved. Up is good but for the bounce rate.
 */
export function change(metric: Metric, now: number | null | undefined, before: number | null | undefined): { text: string; direction: 'up' | 'down' | 'flat'; good: boolean } | undefined {
  if (now === null || now === undefined || before === null || before === undefined || (now === 0 && before === 0)) return undefined;
  const delta = metric === 'bounce_rate' ? now - before : before === 0 ? (now === 0 ? 0 : Number.NaN) : ((now - before) / before) * 100;
  if (Number.isNaN(delta)) return { text: 'new', direction: 'up', good: true };
  const rounded = Math.round(delta);
  const direction = rounded > 0 ? 'up' : rounded < 0 ? 'down' : 'flat';
  const arrow = direction === 'up' ? '↑' : direction === 'down' ? '↓' : '';
  const unit = metric === 'bounce_rate' ? ' pts' : '%';
  return { text: `${arrow}${Math.abs(rounded)}${unit}`, direction, good: metric === 'bounce_rate' ? rounded <= 0 : rounded >= 0 };
}

/** Rates and means, which a period without visits has none of (its 0% bounce rate is no rate). */
const PER_VISIT: ReadonlySet<Metric> = new Set(['views_per_visit', 'bounce_rate', 'visit_duration']);

/**
 * The previous period's value of a metric to compare with: none for a rate or mean when that
 * period had no visits (else a bounce rate reads "↑38 pts vs 0%"; counts read "new").
 */
export function previousValue(metric: Metric, previous: Values | undefined): number | null | undefined {
  if (!previous) return undefined;
  return PER_VISIT.has(metric) && !previous.visits ? undefined : previous[metric];
}

/**
 * The six numbers of the period, each with the previous period's beside it; the one chosen is
 * what the chart draws, and a click chooses another.
 */
export function numbersRow(current: Values, previous: Values | undefined, chosen: Metric, onChoose: (m: Metric) => void): HTMLElement {
  const row = h('div', { class: 'ov-numbers', role: 'tablist', 'aria-label': 'Metrics' });
  for (const metric of METRICS) {
    const now = current[metric];
    const before = previousValue(metric, previous);
    const c = change(metric, now, before);
    const button = h(
      'button',
      {
        type: 'button',
        class: 'ov-number',
        role: 'tab',
        'aria-selected': metric === chosen ? 'true' : 'false',
        'data-metric': metric,
        'data-value': now ?? '',
        'data-previous': before ?? '',
      },
      h('span', { class: 'ov-number-label' }, METRIC_LABELS[metric]),
      h('span', { class: 'ov-number-value' }, metricValue(metric, now)),
      h(
        'span',
        { class: 'ov-number-compare' },
        c ? h('span', { class: `ov-change ov-change-${c.direction === 'flat' ? 'flat' : c.good ? 'good' : 'bad'}`, 'data-direction': c.direction }, c.text) : null,
        h('span', { class: 'muted ov-number-previous', title: 'The previous period' }, previous && before !== undefined ? `vs ${metricValue(metric, before)}` : ''),
      ),
    );
    button.addEventListener('click', () => onChoose(metric));
    row.append(button);
  }
  return row;
}
