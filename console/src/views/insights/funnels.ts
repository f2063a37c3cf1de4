import { h } from '../../dom';
import { PALETTE } from '../../ui/period-chart';
import { notice } from '../../ui/notice';
import { breakdownValueNode } from '../groups/links';
import { showActors } from './actors';
import { aggregateField, breakdownField, dateRange, eventInput, field, filterList, numberInput, section, select, seriesList, timezoneField, type FormContext } from './fields';
import { formatDuration, formatNumber, formatPercent, plural, swatch } from './format';
import type { KindSpec } from './spec';
import { conversionChart, conversionSummary, conversionTable, timeToConvertChart, viewSection } from './funnel-views';
import { WINDOW_UNITS, type FunnelResult, type FunnelsQuery, type FunnelTimeResult, type FunnelTrendResult, type Incomplete, type WindowUnit } from './types';

function exclusions(q: FunnelsQuery, ctx: FormContext): HTMLElement {
  const list = (q.exclusions ??= []);
  const steps = q.steps.map((s, i) => [String(i), `${i + 1}. ${s.event || '…'}`] as const);
  const rows = list.map((x, i) => {
    const remove = h('button', { type: 'button', class: 'q-remove', 'aria-label': `Remove exclusion ${i + 1}` }, '×');
    remove.addEventListener('click', () => {
      list.splice(i, 1);
      ctx.changed(true);
    });
    return h(
      'div',
      { class: 'filter-row exclusion' },
      eventInput(x.event, (v) => {
        x.event = v;
        ctx.changed();
      }, `Exclusion ${i + 1}: event`),
      h('span', { class: 'muted' }, 'between'),
      select(String(x.fromStep), steps, (v) => {
        x.fromStep = Number(v);
        ctx.changed();
      }, { 'aria-label': `Exclusion ${i + 1}: from step` }),
      h('span', { class: 'muted' }, 'and'),
      select(String(x.toStep), steps, (v) => {
        x.toStep = Number(v);
        ctx.changed();
      }, { 'aria-label': `Exclusion ${i + 1}: to step` }),
      remove,
    );
  });
  const add = h('button', { type: 'button', class: 'secondary small' }, '+ exclusion');
  add.addEventListener('click', () => {
    list.push({ event: '', fromStep: 0, toStep: Math.max(1, q.steps.length - 1) });
    ctx.changed(true);
  });
  return h('div', { class: 'filter-list' }, ...rows, add);
}

/**
 * One funnel: a bar per step, as wide as the share of the first step that reached it. The bar
 * and the drop-off are buttons listing the persons behind them (`query`: the funnel asked).
 */
function funnel(result: FunnelResult, query: FunnelsQuery, noun: string, colour: string): HTMLElement {
  const first = result.steps[0]?.count ?? 0;
  const point = result.breakdownValue === undefined ? {} : { breakdownValue: result.breakdownValue };
  const of = result.breakdownValue === undefined ? '' : ` · ${result.breakdownValue === '' ? '(none)' : result.breakdownValue}`;
  const lister = (className: string, label: string, selector: Record<string, unknown>, title: string, content: Node | string) => {
    const button = h('button', { type: 'button', class: className, 'aria-label': label }, content);
    button.addEventListener('click', () => showActors('funnels', query, { ...point, ...selector }, title));
    return button;
  };
  return h(
    'ol',
    { class: 'funnel' },
    ...result.steps.map((step, i) => {
      const before = i === 0 ? undefined : result.steps[i - 1]!;
      const dropped = before ? before.count - step.count : 0;
      const bar = h('div', { class: 'funnel-bar' });
      bar.style.width = `${Math.max(first === 0 ? 0 : 0.4, step.conversionRate * 100)}%`;
      bar.style.backgroundColor = colour;
      return h(
        'li',
        { class: 'funnel-step', 'data-step': i, 'data-event': step.event },
        h('div', { class: 'funnel-head' }, h('span', { class: 'funnel-name' }, h('span', { class: 'step-number' }, String(i + 1)), step.event), h('span', { class: 'funnel-count' }, plural(step.count, noun))),
        h(
          'div',
          { class: 'funnel-bar-row' },
          lister('funnel-rail', `Step ${i + 1}, ${step.event}: list the ${plural(step.count, noun)}`, { step: i }, `Step ${i + 1} · ${step.event}${of}: converted`, bar),
          h('span', { class: 'funnel-rate', title: 'of those who did step 1' }, formatPercent(step.conversionRate)),
        ),
        h(
          'div',
          { class: 'funnel-meta muted' },
          ...(before
            ? [
                h('span', { class: 'funnel-step-rate' }, `${formatPercent(step.stepConversionRate)} of step ${i}`),
                lister(
                  `funnel-dropped${dropped > 0 ? ' lost' : ''}`,
                  `Step ${i + 1}: list the ${plural(dropped, noun)} who dropped off`,
                  { step: i, dropped: true },
                  `Step ${i + 1} · ${step.event}${of}: dropped off`,
                  `${formatNumber(dropped)} dropped off (${formatPercent(before.count === 0 ? 0 : dropped / before.count)})`,
                ),
                step.medianSeconds === null ? null : h('span', { class: 'funnel-time' }, `median ${formatDuration(step.medianSeconds)} from step ${i}`),
              ]
            : [h('span', {}, 'entered the funnel')]),
        ),
      );
    }),
  );
}

export const funnels: KindSpec<'funnels'> = {
  kind: 'funnels',
  label: 'Funnels',
  question: 'How many went on from each step to the next?',
  form(q, ctx) {
    const windowValue = numberInput(q.window?.value ?? 14, 1, 100_000, (v) => {
      q.window = { value: v ?? 14, unit: q.window?.unit ?? 'day' };
      ctx.changed();
    }, { 'aria-label': 'Conversion window' });
    const windowUnit = select<WindowUnit>(q.window?.unit ?? 'day', WINDOW_UNITS.map((u) => [u, `${u}s`] as const), (v) => {
      q.window = { value: q.window?.value ?? 14, unit: v };
      ctx.changed();
    }, { 'aria-label': 'Conversion window unit' });
    const order = select(q.order ?? 'ordered', [
      ['ordered', 'In order, other events between'],
      ['strict', 'In order, nothing between'],
      ['unordered', 'In any order'],
    ] as const, (v) => {
      q.order = v;
      ctx.changed();
    });
    const sections = [
      viewSection(q, ctx),
      section('Steps', seriesList(q.steps, ctx, { noun: 'Step', min: 2, max: 10, numbered: true }, 'steps')),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      // The other views are one series each.
      (q.funnelVizType ?? 'steps') === 'steps' ? section('Breakdown', breakdownField(q, ctx)) : null,
      section('Date range', dateRange(q, ctx), timezoneField(q, ctx)),
      section(
        'Options',
        field('Step order', order, { wide: true }),
        h('div', { class: 'inline-fields' }, field('Within', windowValue), field('Unit', windowUnit), aggregateField(q, ctx)),
        h('div', { class: 'sub-heading' }, 'Exclusions: not counted if they did this between two steps'),
        exclusions(q, ctx),
      ),
    ];
    return sections.filter((s) => s !== null);
  },
  render(answer, query) {
    const noun = query.aggregateBy === 'group' ? 'group' : 'person';
    if (query.funnelVizType === 'trends') {
      const { results, incompleteFrom } = answer as { results: FunnelTrendResult[] } & Incomplete;
      const result = results[0];
      if (!result || result.entered.every((n) => n === 0)) return conversionChart(result, query.interval, incompleteFrom);
      return h('div', { class: 'insight-output' }, conversionSummary(result), conversionChart(result, query.interval, incompleteFrom), conversionTable(result, query.interval, `${noun}s`));
    }
    if (query.funnelVizType === 'time_to_convert') return h('div', { class: 'insight-output' }, timeToConvertChart((answer.results as FunnelTimeResult[])[0]));
    const results = answer.results as FunnelResult[];
    if (results.length === 0 || results.every((r) => (r.steps[0]?.count ?? 0) === 0)) return notice('empty', 'Nobody entered this funnel', 'No one did the first step in this range.');
    if (results.length === 1 && results[0]!.breakdownValue === undefined) return h('div', { class: 'insight-output' }, funnel(results[0]!, query, noun, PALETTE[0]!));
    return h(
      'div',
      { class: 'funnel-grid' },
      ...results.map((r, i) =>
        h(
          'section',
          { class: 'funnel-column', 'data-breakdown': r.breakdownValue ?? '' },
          h('h3', {}, swatch(PALETTE[i % PALETTE.length]!), breakdownValueNode(query.breakdown, r.breakdownValue, r.breakdownValue === '' ? '(none)' : (r.breakdownValue ?? 'All'))),
          funnel(r, query, noun, PALETTE[i % PALETTE.length]!),
        ),
      ),
    );
  },
};
