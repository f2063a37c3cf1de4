import { h } from '../../dom';
import { PALETTE, periodChart } from '../../ui/period-chart';
import { notice } from '../../ui/notice';
import { breakdownValueNode } from '../groups/links';
import { showActors } from './actors';
import { aggregateField, breakdownField, dateRange, eventMatch, field, filterList, numberInput, section, select, timezoneField } from './fields';
import { formatNumber, formatPercent } from './format';
import { periodTick } from '../../ui/format';
import type { KindSpec } from './spec';
import { incompleteIndex, type RetentionQuery, type RetentionRow } from './types';

const PERIOD_NAMES = { day: 'Day', week: 'Week', month: 'Month' } as const;

/** Rows by breakdown value, in the order they came. */
function groups(rows: readonly RetentionRow[]): Array<[string | undefined, RetentionRow[]]> {
  const map = new Map<string | undefined, RetentionRow[]>();
  for (const r of rows) map.set(r.breakdownValue, [...(map.get(r.breakdownValue) ?? []), r]);
  return [...map];
}

/**
 * Whether cohort `i`'s value `k` is of a period not over (`cut`: the index of the first such
 * cohort; cohort i's value k is of the period i + k).
 */
export const notOver = (i: number, k: number, cut: number | undefined) => cut !== undefined && i + k >= cut;

/**
 * Of the cohorts that have reached period k (and whose period k is over: today's counts so far
 * would drag the curve down), the share that came back in it, weighted by size.
 */
export function retentionCurve(rows: readonly RetentionRow[], periods: number, cut?: number): Array<number | null> {
  return Array.from({ length: periods }, (_, k) => {
    const reached = rows.filter((r, i) => r.values.length > k && r.size > 0 && !notOver(i, k, cut));
    const size = reached.reduce((s, r) => s + r.size, 0);
    return size === 0 ? null : (reached.reduce((s, r) => s + r.values[k]!, 0) / size) * 100;
  });
}

/** A cell's share as a button listing those of the cohort who came back in period k. */
function cellButton(r: RetentionRow, k: number, text: string, query: RetentionQuery): HTMLElement {
  const period = `${PERIOD_NAMES[query.period ?? 'day']} ${k}`;
  const button = h('button', { type: 'button', class: 'ret-persons', 'aria-label': `Cohort ${r.cohort}, ${period}: list the ${formatNumber(r.values[k]!)}` }, text);
  const point = { cohort: r.cohort, period: k, ...(r.breakdownValue === undefined ? {} : { breakdownValue: r.breakdownValue }) };
  button.addEventListener('click', () => showActors('retention', query, point, `Cohort ${r.cohort}${r.breakdownValue === undefined ? '' : ` · ${r.breakdownValue || '(none)'}`} · ${period}`));
  return button;
}

function heatTable(rows: readonly RetentionRow[], query: RetentionQuery, periods: number, cut: number | undefined): HTMLElement {
  const name = PERIOD_NAMES[query.period ?? 'day'];
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'retention-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Cohort'), h('th', { scope: 'col', class: 'num' }, query.aggregateBy === 'group' ? 'Groups' : 'Persons'), ...Array.from({ length: periods }, (_, k) => h('th', { scope: 'col', class: 'num' }, `${name} ${k}`)))),
      h(
        'tbody',
        {},
        ...rows.map((r, i) =>
          h(
            'tr',
            { 'data-cohort': r.cohort },
            h('th', { scope: 'row' }, periodTick(r.cohort, query.period === 'month' ? 'month' : 'day')),
            h('td', { class: 'num size' }, formatNumber(r.size)),
            ...Array.from({ length: periods }, (_, k) => {
              if (k >= r.values.length) return h('td', { class: 'empty' });
              const share = r.size === 0 ? 0 : r.values[k]! / r.size;
              const text = r.size === 0 ? '—' : formatPercent(share);
              // A cell of a period not over is hatched: counted so far, not a drop.
              const open = notOver(i, k, cut);
              const title = `${formatNumber(r.values[k]!)} of ${formatNumber(r.size)}${open ? ' so far: the period is not over' : ''}`;
              const cell = h('td', { class: `num ret-heat${share >= 0.5 ? ' hot' : ''}${open ? ' incomplete' : ''}`, title, 'data-count': r.values[k]! }, r.size === 0 ? text : cellButton(r, k, text, query));
              if (r.size > 0) cell.style.backgroundColor = `color-mix(in srgb, var(--heat) ${Math.round(8 + share * 92)}%, var(--surface))`;
              return cell;
            }),
          ),
        ),
      ),
    ),
  );
}

export const retention: KindSpec<'retention'> = {
  kind: 'retention',
  label: 'Retention',
  question: 'Of those who started in a period, how many came back in each after?',
  form(q, ctx) {
    return [
      section('Start event', eventMatch(q.startEvent, ctx, 'Start event', 'start')),
      section('Return event', eventMatch(q.returnEvent, ctx, 'Return event', 'return')),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      section('Breakdown', breakdownField(q, ctx)),
      section(
        'Periods',
        h(
          'div',
          { class: 'inline-fields' },
          field('Period', select(q.period ?? 'day', [['day', 'Day'], ['week', 'Week'], ['month', 'Month']] as const, (v) => {
            q.period = v;
            ctx.changed();
          })),
          field('Cohorts', numberInput(q.periods ?? 7, 1, 36, (v) => {
            q.periods = v;
            ctx.changed();
          })),
          field('Type', select(q.type ?? 'recurring', [['recurring', 'Recurring'], ['first_time', 'First time']] as const, (v) => {
            q.type = v;
            ctx.changed();
          })),
        ),
        h('div', { class: 'inline-fields' }, dateRange(q, ctx, true), timezoneField(q, ctx)),
        aggregateField(q, ctx),
      ),
    ];
  },
  render(answer, query) {
    const rows = answer.results;
    if (rows.length === 0 || rows.every((r) => r.size === 0)) return notice('empty', 'Nobody to follow', 'No one did the start event in these cohorts.');
    const periods = Math.max(...rows.map((r) => r.values.length));
    const name = PERIOD_NAMES[query.period ?? 'day'];
    const byBreakdown = groups(rows);
    const cutOf = (rs: readonly RetentionRow[]) => incompleteIndex(rs.map((r) => r.cohort), answer.incompleteFrom);
    const curve = periodChart({
      labels: Array.from({ length: periods }, (_, k) => `${name} ${k}`),
      series: byBreakdown.map(([value, rs], i) => ({
        label: value === undefined ? 'Retained' : value === '' ? '(none)' : value,
        values: retentionCurve(rs, periods, cutOf(rs)),
        colour: PALETTE[i % PALETTE.length]!,
      })),
      mode: 'line',
      title: 'Retention curve: the share of each cohort that came back, per period after it started',
      height: 220,
      format: (v) => `${v.toFixed(1)}%`,
      axis: (v) => `${v}%`,
      xName: 'After',
    });
    return h(
      'div',
      { class: 'insight-output' },
      ...byBreakdown.map(([value, rs]) => h('section', { class: 'retention-group', 'data-breakdown': value ?? '' }, value === undefined ? null : h('h3', {}, breakdownValueNode(query.breakdown, value, value === '' ? '(none)' : value)), heatTable(rs, query, periods, cutOf(rs)))),
      h('h3', {}, 'Retention curve'),
      curve,
    );
  },
};
