import { h } from '../../dom';
import { PALETTE, periodChart } from '../../ui/period-chart';
import { notice } from '../../ui/notice';
import { showActors } from './actors';
import { aggregateField, dateRange, filterList, intervalField, letter, section, seriesList, timezoneField } from './fields';
import { periodTick } from '../../ui/format';
import type { KindSpec } from './spec';
import { incompleteIndex } from './types';

export const stickiness: KindSpec<'stickiness'> = {
  kind: 'stickiness',
  label: 'Stickiness',
  question: 'How many did it on exactly 1, 2, 3… periods of the range?',
  form(q, ctx) {
    return [
      section('Series', seriesList(q.series, ctx, { noun: 'Series', min: 1, max: 10 }, 'series')),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      section('Date range', dateRange(q, ctx), h('div', { class: 'inline-fields' }, intervalField(q, ctx), timezoneField(q, ctx))),
      section('Options', aggregateField(q, ctx)),
    ];
  },
  render(answer, query) {
    const results = answer.results;
    if (results.length === 0 || results.every((r) => r.data.every((v) => v === 0))) return notice('empty', 'Nobody did it', 'No events matched in this range.');
    const unit = query.interval ?? 'day';
    const labels = results[0]!.labels.map((l) => `${l} ${unit}${l === '1' ? '' : 's'}`);
    return h(
      'div',
      { class: 'insight-output' },
      periodChart({
        labels,
        series: results.map((r, i) => ({ label: `${letter(r.series)} · ${r.label}`, values: r.data, colour: PALETTE[i % PALETTE.length]! })),
        mode: 'bar',
        xName: 'Active on',
        title: `Stickiness: ${query.aggregateBy === 'group' ? 'groups' : 'persons'} by the number of ${unit}s they were active`,
        onPick: (si, index) => showActors('stickiness', query, { series: results[si]!.series, count: index + 1 }, `${letter(results[si]!.series)} · ${results[si]!.label} · ${labels[index]}`),
      }),
    );
  },
};

export const LIFECYCLE_COLOURS = { new: '#10b981', returning: '#4f7df3', resurrecting: '#f59e0b', dormant: '#ef4444' } as const;

export const lifecycle: KindSpec<'lifecycle'> = {
  kind: 'lifecycle',
  label: 'Lifecycle',
  question: 'How do the active ones split into new, returning, resurrecting and dormant?',
  form(q, ctx) {
    q.series = q.series.slice(0, 1);
    return [
      section('Event', seriesList(q.series, ctx, { noun: 'Series', min: 1, max: 1 }, 'series')),
      section('Filters', h('div', { 'data-scope': 'filters' }, filterList((q.filters ??= []), ctx))),
      section('Date range', dateRange(q, ctx), h('div', { class: 'inline-fields' }, intervalField(q, ctx), timezoneField(q, ctx))),
      section('Options', aggregateField(q, ctx)),
    ];
  },
  render(answer, query) {
    const results = answer.results;
    if (results.length === 0 || results.every((r) => r.data.every((v) => v === 0))) return notice('empty', 'Nobody was active', 'No events matched in this range.');
    return h(
      'div',
      { class: 'insight-output' },
      periodChart({
        labels: results[0]!.labels,
        series: results.map((r) => ({ label: r.label, values: r.data, colour: LIFECYCLE_COLOURS[r.label], incompleteFrom: incompleteIndex(r.labels, answer.incompleteFrom) })),
        mode: 'stacked',
        title: 'Lifecycle: new, returning and resurrecting above the axis, dormant below, per period',
        tick: (l) => periodTick(l, query.interval),
        onPick: (si, index) => showActors('lifecycle', query, { label: results[0]!.labels[index], status: results[si]!.label }, `${results[si]!.label} · ${periodTick(results[0]!.labels[index]!, query.interval)}`),
      }),
    );
  },
};
