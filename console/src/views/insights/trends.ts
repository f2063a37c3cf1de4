import { h } from '../../dom';
import { PALETTE, periodChart, type PeriodChartMode, type PeriodSeries } from '../../ui/period-chart';
import { notice } from '../../ui/notice';
import { breakdownValueNode } from '../groups/links';
import { showActors } from './actors';
import { breakdownField, dateRange, field, filterList, intervalField, letter, section, seriesList, textInput, timezoneField } from './fields';
import { formatNumber, swatch } from './format';
import { periodTick } from '../../ui/format';
import type { KindSpec } from './spec';
import { incompleteIndex, TREND_CHARTS, type TrendChart, type TrendResult, type TrendsQuery } from './types';

const CHART_LABELS: Record<TrendChart, string> = { line: 'Line', bar: 'Bar', stacked: 'Stacked', area: 'Area', number: 'Number', table: 'Table' };

/** A result's name: its series' letter and event (or the formula), its breakdown value, and "previous" for a comparison. */
export function resultName(r: TrendResult): string {
  const base = r.series === undefined ? r.label : `${letter(r.series)} · ${r.label}`;
  const breakdown = r.breakdownValue === undefined ? '' : ` · ${r.breakdownValue === '' ? '(none)' : r.breakdownValue}`;
  return `${base}${breakdown}${r.compare === 'previous' ? ' (previous)' : ''}`;
}

/** Colours by series and breakdown value, so a comparison period has its current period's colour. */
function colours(results: readonly TrendResult[]): string[] {
  const keys: string[] = [];
  return results.map((r) => {
    const key = `${r.series ?? 'f'}\u0000${r.breakdownValue ?? ''}`;
    if (!keys.includes(key)) keys.push(key);
    return PALETTE[keys.indexOf(key) % PALETTE.length]!;
  });
}

function chartTabs(current: TrendChart, choose: (c: TrendChart) => void): HTMLElement {
  return h(
    'div',
    { class: 'segments', role: 'group', 'aria-label': 'Chart' },
    ...TREND_CHARTS.map((c) => {
      const b = h('button', { type: 'button', class: 'segment', 'aria-pressed': String(c === current), 'data-chart': c }, CHART_LABELS[c]);
      b.addEventListener('click', () => choose(c));
      return b;
    }),
  );
}

function numbers(results: readonly TrendResult[], palette: string[]): HTMLElement {
  const previous = (r: TrendResult) => results.find((p) => p.compare === 'previous' && p.series === r.series && p.breakdownValue === r.breakdownValue);
  return h(
    'div',
    { class: 'big-numbers' },
    ...results
      .map((r, i) => [r, i] as const)
      .filter(([r]) => r.compare !== 'previous')
      .map(([r, i]) => {
        const before = previous(r);
        const change = before && before.total !== 0 ? (r.total - before.total) / Math.abs(before.total) : undefined;
        return h(
          'div',
          { class: 'big-number', 'data-series': resultName(r) },
          h('span', { class: 'big-number-label' }, swatch(palette[i]!), resultName(r)),
          h('strong', { class: 'big-number-value' }, formatNumber(r.total)),
          before
            ? h('span', { class: `muted change${change === undefined ? '' : change >= 0 ? ' up' : ' down'}` }, change === undefined ? `previous: ${formatNumber(before.total)}` : `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% on the previous period (${formatNumber(before.total)})`)
            : null,
        );
      }),
  );
}

function table(results: readonly TrendResult[], query: TrendsQuery, incompleteFrom: string | undefined): HTMLElement {
  const labels = results.find((r) => r.compare !== 'previous')?.labels ?? results[0]?.labels ?? [];
  const cut = incompleteIndex(labels, incompleteFrom) ?? labels.length;
  const notOver = (i: number) => (i >= cut ? { class: 'num incomplete', title: `${labels[i]}: not over, counted so far` } : null);
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'data-table insight-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Series'), ...labels.map((l, i) => h('th', { scope: 'col', class: 'num', ...notOver(i) }, periodTick(l, query.interval))), h('th', { scope: 'col', class: 'num' }, 'Total'))),
      h(
        'tbody',
        {},
        ...results.map((r) =>
          h('tr', { 'data-series': resultName(r) }, h('th', { scope: 'row' }, breakdownValueNode(query.breakdown, r.breakdownValue, resultName(r))), ...r.data.map((v, i) => h('td', { class: 'num', title: r.labels[i] ?? '', ...(r.compare === 'previous' ? null : notOver(i)) }, formatNumber(v))), h('td', { class: 'num total' }, formatNumber(r.total))),
        ),
      ),
    ),
  );
}

export const trends: KindSpec<'trends'> = {
  kind: 'trends',
  label: 'Trends',
  question: 'How many did it, per period?',
  form(q, ctx) {
    const formula = textInput(q.formula ?? '', (v) => {
      q.formula = v;
      ctx.changed();
    }, { placeholder: 'e.g. A / B * 100', 'aria-label': 'Formula' });
    const compare = h('input', { type: 'checkbox' });
    compare.checked = Boolean(q.compare);
    compare.addEventListener('change', () => {
      q.compare = compare.checked;
      ctx.changed();
    });
    return [
      section('Series', seriesList(q.series, ctx, { noun: 'Series', min: 1, max: 10, math: true }, 'series')),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      section('Breakdown', breakdownField(q, ctx)),
      section('Date range', dateRange(q, ctx), h('div', { class: 'inline-fields' }, intervalField(q, ctx), timezoneField(q, ctx))),
      section('Options', h('label', { class: 'check' }, compare, 'Compare with the previous period'), field('Formula', formula, { wide: true, hint: 'Over the series by letter; answered instead of them.' })),
    ];
  },
  render(answer, query, view) {
    const chart = view.display.chart ?? 'line';
    const results = answer.results;
    const tabs = chartTabs(chart, (c) => view.setDisplay({ ...view.display, chart: c }));
    if (results.length === 0) return h('div', { class: 'insight-output' }, tabs, notice('empty', 'No results', 'Nothing matched in this range.'));
    const palette = colours(results);
    let body: HTMLElement;
    if (chart === 'number') body = numbers(results, palette);
    else if (chart === 'table') body = table(results, query, answer.incompleteFrom);
    else {
      const shown = results.map((r, i) => [r, i] as const).filter(([r]) => chart !== 'stacked' || r.compare !== 'previous');
      const labels = shown.find(([r]) => r.compare !== 'previous')?.[0].labels ?? results[0]!.labels;
      // The current range's period not over (today's) is drawn apart; a previous range's are over.
      const series: PeriodSeries[] = shown.map(([r, i]) => ({ label: resultName(r), values: r.data, colour: palette[i]!, dashed: r.compare === 'previous', incompleteFrom: r.compare === 'previous' ? undefined : incompleteIndex(r.labels, answer.incompleteFrom) }));
      // A formula's points are not persons; a previous period's are not asked for.
      const onPick = query.formula
        ? undefined
        : (si: number, index: number) => {
            const r = shown[si]![0];
            if (r.compare === 'previous' || r.series === undefined) return;
            const selector = { series: r.series, label: r.labels[index], ...(r.breakdownValue === undefined ? {} : { breakdownValue: r.breakdownValue }) };
            showActors('trends', query, selector, `${resultName(r)} · ${periodTick(r.labels[index]!, query.interval)}`);
          };
      body = periodChart({ labels, series, mode: chart as PeriodChartMode, title: `Trends: ${series.map((s) => s.label).join(', ')}`, tick: (l) => periodTick(l, query.interval), onPick });
    }
    return h('div', { class: 'insight-output' }, tabs, body);
  },
};
