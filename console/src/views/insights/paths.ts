import { h } from '../../dom';
import { notice } from '../../ui/notice';
import { sankeyDiagram } from '../../ui/sankey';
import { aggregateField, dateRange, field, filterList, LIST, numberInput, section, textInput, timezoneField } from './fields';
import { formatNumber } from './format';
import type { KindSpec } from './spec';

/** Nodes are named `<step>_<event>` (docs/api/insights.md). */
/** A path node's step (`<step>_<event>`, from 1) and event. */
export const stepOf = (node: string) => Number(/^(\d+)_/.exec(node)?.[1] ?? 1);
export const eventOf = (node: string) => node.replace(/^\d+_/, '');
/** A column's heading: its step, as the API numbers them (from 1). */
export const stepHeading = (column: number) => `Step ${column + 1}`;
const list = (text: string) => text.split(',').map((e) => e.trim()).filter(Boolean);

export const paths: KindSpec<'paths'> = {
  kind: 'paths',
  label: 'Paths',
  question: 'What did they do before or after an event?',
  form(q, ctx) {
    const text = (value: string | undefined, set: (v: string) => void, attrs: Record<string, string>) => textInput(value ?? '', (v) => (set(v), ctx.changed()), attrs);
    return [
      section(
        'Path',
        h(
          'div',
          { class: 'inline-fields' },
          field('Starting at', text(q.start, (v) => (q.start = v), { list: LIST.events, placeholder: 'any event', class: 'event-input' })),
          field('Ending at', text(q.end, (v) => (q.end = v), { list: LIST.events, placeholder: 'any event', class: 'event-input' })),
        ),
        h(
          'div',
          { class: 'inline-fields' },
          field('Steps', numberInput(q.steps ?? 5, 2, 10, (v) => ((q.steps = v), ctx.changed()))),
          field('Edges at most', numberInput(q.limit ?? 50, 1, 1000, (v) => ((q.limit = v), ctx.changed()))),
          aggregateField(q, ctx),
        ),
        field('Only these events', text(q.include?.join(', '), (v) => (q.include = list(v)), { placeholder: 'all (comma-separated names)' }), { wide: true }),
        field('Leave out', text(q.exclude?.join(', '), (v) => (q.exclude = list(v)), { placeholder: 'none (comma-separated names)' }), { wide: true }),
      ),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      section('Date range', dateRange(q, ctx), timezoneField(q, ctx)),
    ];
  },
  render(answer, query) {
    const edges = answer.results;
    if (edges.length === 0) return notice('empty', 'No paths', 'No events matched in this range.');
    const noun = query.aggregateBy === 'group' ? 'groups' : 'persons';
    const diagram = sankeyDiagram(edges, {
      title: `Paths ${query.start ? `from ${query.start}` : ''}${query.end ? ` to ${query.end}` : ''}: ${edges.length} edges`,
      label: eventOf,
      column: (n) => stepOf(n) - 1,
      columnLabel: stepHeading,
      format: formatNumber,
    });
    const details = h(
      'details',
      { class: 'edge-list' },
      h('summary', {}, `The ${edges.length} edges as a table`),
      h(
        'table',
        { class: 'data-table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Step'), h('th', { scope: 'col' }, 'From'), h('th', { scope: 'col' }, 'To'), h('th', { scope: 'col', class: 'num' }, noun))),
        h('tbody', {}, ...edges.map((e) => h('tr', {}, h('td', {}, `${stepOf(e.source)} → ${stepOf(e.target)}`), h('td', {}, eventOf(e.source)), h('td', {}, eventOf(e.target)), h('td', { class: 'num' }, formatNumber(e.value))))),
      ),
    );
    return h('div', { class: 'insight-output' }, diagram, details);
  },
};
