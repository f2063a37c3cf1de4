import { h } from '../../dom';
import { operatorsFor } from './operators';
import { LABELS, topValues, type Described, type Suggestions } from './suggestions';
import type { AggregateBy, Breakdown, CommonFields, EventMatch, Filter, Interval, Operator, PropertyFilter, Series, Source, TrendMath } from './types';
import { INTERVALS, OPERATORS, PROPERTY_MATHS, TREND_MATHS } from './types';

/**
 * The parts of the query form. Each edits the query object in place and calls `changed()`;
 * `changed(true)` after adding or removing a row, which draws the form again.
 */
export interface FormContext {
  suggestions: Suggestions;
  changed(structure?: boolean): void;
}

/** Ids of the <datalist>s the insights page keeps (see datalists()). */
export const LIST = { events: 'insight-events', timezones: 'insight-timezones', props: (s: Source) => `insight-props-${s}` };

let ids = 0;
export const uid = (prefix: string) => `${prefix}-${++ids}`;

export function section(title: string, ...children: Array<Node | null | false>): HTMLElement {
  const id = uid('q-section');
  return h('section', { class: 'q-section', 'aria-labelledby': id }, h('h2', { class: 'q-title', id }, title), ...children);
}

export function field(label: string, control: HTMLElement, extra: { wide?: boolean; hint?: string } = {}): HTMLElement {
  return h('label', { class: `field${extra.wide ? ' wide' : ''}` }, h('span', {}, label), control, extra.hint ? h('small', { class: 'muted' }, extra.hint) : null);
}

/** A text input that reports every change. */
export function textInput(value: string, onInput: (value: string) => void, attrs: Record<string, string> = {}): HTMLInputElement {
  const input = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
  input.value = value;
  input.addEventListener('input', () => onInput(input.value));
  return input;
}

export function numberInput(value: number | undefined, min: number, max: number, onInput: (value: number | undefined) => void, attrs: Record<string, string> = {}): HTMLInputElement {
  const input = h('input', { type: 'number', min, max, step: 1, inputmode: 'numeric', ...attrs });
  input.value = value === undefined ? '' : String(value);
  input.addEventListener('input', () => {
    const n = Number(input.value);
    onInput(input.value.trim() === '' || !Number.isInteger(n) ? undefined : Math.min(max, Math.max(min, n)));
  });
  return input;
}

export function select<T extends string>(value: T | undefined, options: ReadonlyArray<readonly [T, string]>, onChange: (value: T) => void, attrs: Record<string, string> = {}): HTMLSelectElement {
  const el = h('select', attrs, ...options.map(([v, label]) => h('option', { value: v }, label)));
  if (value !== undefined) el.value = value;
  el.addEventListener('change', () => onChange(el.value as T));
  return el;
}

/** An event name with the workspace's names (and $pageview, $any) offered as completions. */
export function eventInput(value: string, onInput: (value: string) => void, label: string): HTMLInputElement {
  return textInput(value, onInput, { list: LIST.events, 'aria-label': label, placeholder: 'Event name', class: 'event-input' });
}

const OPERATOR_LABELS: Record<Operator, string> = {
  eq: 'equals',
  neq: 'does not equal',
  in: 'is one of',
  not_in: 'is not one of',
  contains: 'contains',
  not_contains: 'does not contain',
  regex: 'matches regex',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  is_set: 'is set',
  is_not_set: 'is not set',
};
const SOURCE_LABELS: ReadonlyArray<readonly [Source, string]> = [
  ['event', 'Event'],
  ['person', 'Person'],
  ['group', 'Group'],
];

/** What a filter's value box holds, as the API takes it: a list for in/not_in, a number for comparisons. */
function parseValue(operator: Operator, text: string): PropertyFilter['value'] {
  if (operator === 'in' || operator === 'not_in') return text.split(',').map((v) => v.trim()).filter(Boolean);
  if (['gt', 'gte', 'lt', 'lte'].includes(operator)) {
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? n : text.trim();
  }
  return text;
}
const valueText = (value: PropertyFilter['value']) => (value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value));

function filterRow(filter: PropertyFilter, ctx: FormContext, remove: () => void, index: number): HTMLElement {
  const valuesList = h('datalist', { id: uid('insight-values') });
  const source = select(filter.source ?? 'event', SOURCE_LABELS, (v) => {
    filter.source = v;
    property.setAttribute('list', LIST.props(v));
    offerOperators();
    void suggestValues();
    ctx.changed();
  }, { 'aria-label': `Filter ${index + 1}: whose property`, class: 'f-source' });
  const property = textInput(filter.property, (v) => {
    filter.property = v;
    ctx.changed();
  }, { list: LIST.props(filter.source ?? 'event'), 'aria-label': `Filter ${index + 1}: property`, placeholder: 'property', class: 'f-property' });
  const operatorChoices = () => operatorsFor(ctx.suggestions.described[filter.source ?? 'event'].get(filter.property)?.types, filter.operator).map((o) => [o, OPERATOR_LABELS[o]] as const);
  const operator = select(filter.operator, operatorChoices(), (v) => {
    filter.operator = v;
    filter.value = parseValue(v, value.value);
    value.hidden = v === 'is_set' || v === 'is_not_set';
    ctx.changed();
  }, { 'aria-label': `Filter ${index + 1}: operator`, class: 'f-operator' });
  // The property's types in the catalog decide the operators offered (no `contains` on a number).
  const offerOperators = () => operator.replaceChildren(...operatorChoices().map(([o, label]) => h('option', { value: o, selected: o === filter.operator }, label)));
  const value = textInput(valueText(filter.value), (v) => {
    filter.value = parseValue(filter.operator, v);
    ctx.changed();
  }, { list: valuesList.id, 'aria-label': `Filter ${index + 1}: value`, placeholder: 'value', class: 'f-value' });
  value.hidden = filter.operator === 'is_set' || filter.operator === 'is_not_set';
  const suggestValues = async () => {
    const values = await topValues(filter.source ?? 'event', filter.property);
    valuesList.replaceChildren(...values.map((v) => h('option', { value: v })));
  };
  property.addEventListener('change', () => {
    offerOperators();
    void suggestValues();
  });
  if (filter.property) void suggestValues();
  const removeButton = h('button', { type: 'button', class: 'q-remove f-remove', 'aria-label': `Remove filter ${index + 1}`, title: 'Remove filter' }, '×');
  removeButton.addEventListener('click', remove);
  return h('div', { class: 'filter-row' }, source, property, operator, value, valuesList, removeButton);
}

/** A list of property filters, all of which must hold, with a button that adds one. */
export function filterList(filters: Filter[], ctx: FormContext, label = 'filter'): HTMLElement {
  const rows = filters.map((f, i) =>
    'cohort' in f
      ? h('div', { class: 'filter-row' }, h('span', { class: 'muted' }, `In cohort ${f.cohort}`), removeButton(i))
      : filterRow(f, ctx, () => {
          filters.splice(i, 1);
          ctx.changed(true);
        }, i),
  );
  function removeButton(i: number) {
    const b = h('button', { type: 'button', class: 'q-remove', 'aria-label': `Remove filter ${i + 1}` }, '×');
    b.addEventListener('click', () => {
      filters.splice(i, 1);
      ctx.changed(true);
    });
    return b;
  }
  const add = h('button', { type: 'button', class: 'secondary small add-filter' }, `+ ${label}`);
  add.addEventListener('click', () => {
    filters.push({ property: '', source: 'event', operator: 'eq', value: '' });
    ctx.changed(true);
    focusLast('.filter-row input[list]', add);
  });
  return h('div', { class: 'filter-list' }, ...rows, add);
}

/** After the form is drawn again, focus moves to the row just added (found near `anchor`'s place). */
function focusLast(selector: string, anchor: HTMLElement): void {
  const scope = anchor.closest('[data-scope]')?.getAttribute('data-scope');
  requestAnimationFrame(() => {
    const root = scope ? document.querySelector(`[data-scope="${scope}"]`) : document;
    const all = root?.querySelectorAll<HTMLElement>(selector);
    all?.[all.length - 1]?.focus();
  });
}

const MATH_LABELS: Record<TrendMath, string> = {
  total: 'Total events',
  persons: 'Unique persons',
  groups: 'Unique groups',
  dau: 'Daily active',
  wau: 'Weekly active',
  mau: 'Monthly active',
  sum: 'Sum of',
  avg: 'Average of',
  min: 'Minimum of',
  max: 'Maximum of',
  median: 'Median of',
  p90: '90th percentile of',
  p95: '95th percentile of',
  p99: '99th percentile of',
};

export const letter = (i: number) => String.fromCharCode(65 + i);

interface SeriesOptions {
  noun: 'Series' | 'Step';
  min: number;
  max: number;
  /** Trends: the math (and its property) of each series. */
  math?: boolean;
  /** Stickiness, lifecycle: persons or groups is the query's aggregateBy, not a math. */
  numbered?: boolean;
}

/** Series (or funnel steps): an event each, with its own filters, and for trends a math. */
export function seriesList(list: Array<Series | EventMatch>, ctx: FormContext, options: SeriesOptions, scope: string): HTMLElement {
  const rows = list.map((s, i) => {
    const name = options.noun === 'Step' ? `Step ${i + 1}` : `Series ${letter(i)}`;
    const badge = h('span', { class: 'series-badge', 'data-index': i % 8, 'aria-hidden': 'true' }, options.numbered ? String(i + 1) : letter(i));
    const event = eventInput(s.event, (v) => {
      s.event = v;
      ctx.changed();
    }, `${name}: event`);
    const filters = (s.filters ??= []);
    const filtersBox = h('div', { class: 'series-filters', 'data-scope': `${scope}-${i}` }, filterList(filters, ctx, 'filter'));
    filtersBox.hidden = filters.length === 0;
    const toggle = h('button', { type: 'button', class: 'secondary small', 'aria-expanded': String(!filtersBox.hidden), 'aria-label': `${name}: filters` }, filters.length ? `Filters (${filters.length})` : 'Filter');
    toggle.addEventListener('click', () => {
      filtersBox.hidden = !filtersBox.hidden;
      toggle.setAttribute('aria-expanded', String(!filtersBox.hidden));
      if (!filtersBox.hidden && filters.length === 0) {
        filters.push({ property: '', source: 'event', operator: 'eq', value: '' });
        ctx.changed(true);
        focusLast('.filter-row input[list]', filtersBox);
      }
    });
    const mathRow: HTMLElement[] = [];
    if (options.math) {
      const series = s as Series;
      const property = textInput(series.property ?? '', (v) => {
        series.property = v;
        ctx.changed();
      }, { list: LIST.props('event'), 'aria-label': `${name}: numeric property`, placeholder: 'numeric property' });
      property.hidden = !PROPERTY_MATHS.includes(series.math ?? 'total');
      const math = select(series.math ?? 'total', TREND_MATHS.map((m) => [m, MATH_LABELS[m]] as const), (v) => {
        series.math = v;
        property.hidden = !PROPERTY_MATHS.includes(v);
        if (!property.hidden) property.focus();
        ctx.changed();
      }, { 'aria-label': `${name}: math` });
      mathRow.push(h('div', { class: 'series-math' }, math, property));
    }
    const remove = h('button', { type: 'button', class: 'q-remove', 'aria-label': `Remove ${name.toLowerCase()}`, title: `Remove ${name.toLowerCase()}`, disabled: list.length <= options.min }, '×');
    remove.addEventListener('click', () => {
      list.splice(i, 1);
      ctx.changed(true);
    });
    return h('div', { class: 'series-row', 'data-scope': `${scope}-${i}` }, h('div', { class: 'series-main' }, badge, event, toggle, remove), ...mathRow, filtersBox);
  });
  const add = h('button', { type: 'button', class: 'secondary small', hidden: list.length >= options.max }, options.noun === 'Step' ? '+ Add step' : '+ Add series');
  add.addEventListener('click', () => {
    list.push(options.math ? { event: '', math: 'total' } : { event: '' });
    ctx.changed(true);
    requestAnimationFrame(() => {
      const inputs = document.querySelectorAll<HTMLElement>(`[data-scope^="${scope}-"] .event-input`);
      inputs[inputs.length - 1]?.focus();
    });
  });
  return h('div', { class: 'series-list' }, ...rows, add);
}

/** A single event with its own filters (retention's start and return events). */
export function eventMatch(match: EventMatch, ctx: FormContext, label: string, scope: string): HTMLElement {
  const filters = (match.filters ??= []);
  return h(
    'div',
    { class: 'series-row event-match', 'data-scope': scope },
    h('div', { class: 'series-main' }, eventInput(match.event, (v) => {
      match.event = v;
      ctx.changed();
    }, label)),
    h('div', { class: 'series-filters', 'data-scope': `${scope}-f` }, filterList(filters, ctx, `filter ${label.toLowerCase()}`)),
  );
}

export function breakdownField(query: CommonFields, ctx: FormContext): HTMLElement {
  const current: Breakdown = query.breakdown ?? { property: '', source: 'event' };
  const commit = () => {
    query.breakdown = current.property.trim() ? { ...current } : undefined;
    ctx.changed();
  };
  const property = textInput(current.property, (v) => {
    current.property = v;
    commit();
  }, { list: LIST.props(current.source ?? 'event'), 'aria-label': 'Breakdown property', placeholder: 'none' });
  const source = select(current.source ?? 'event', SOURCE_LABELS, (v) => {
    current.source = v;
    property.setAttribute('list', LIST.props(v));
    commit();
  }, { 'aria-label': 'Breakdown: whose property' });
  const limit = numberInput(current.limit, 1, 50, (v) => {
    current.limit = v;
    if (v === undefined) delete current.limit;
    commit();
  }, { 'aria-label': 'Breakdown: top values kept', placeholder: '10' });
  return h('div', { class: 'inline-fields breakdown' }, source, property, limit);
}

const PRESETS = [
  ['-7d', '7d'],
  ['-30d', '30d'],
  ['-90d', '90d'],
] as const;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A date (picker) when the value is one or empty, else its text (an ISO date-time, `-14d`). */
function dateInput(value: string | undefined, onInput: (v: string) => void, label: string): HTMLInputElement {
  const input = h('input', { type: !value || DATE.test(value) ? 'date' : 'text', 'aria-label': label, autocomplete: 'off' });
  input.value = value ?? '';
  input.addEventListener('input', () => onInput(input.value));
  return input;
}

/** Presets (7, 30, 90 days) or a custom range; retention, which ends at a date only, gets `until`. */
export function dateRange(query: CommonFields, ctx: FormContext, untilOnly = false): HTMLElement {
  if (untilOnly) {
    return field('Until (empty: now)', dateInput(query.dateTo, (v) => {
      query.dateTo = v || undefined;
      ctx.changed();
    }, 'Until'));
  }
  const preset = !query.dateTo ? PRESETS.find(([from]) => from === (query.dateFrom ?? '-7d'))?.[0] : undefined;
  const buttons = [...PRESETS.map(([from, label]) => [from, label] as const), ['custom', 'Custom'] as const].map(([value, label]) => {
    const b = h('button', { type: 'button', class: 'segment', 'aria-pressed': String((preset ?? 'custom') === value), 'data-range': value }, label);
    b.addEventListener('click', () => {
      if (value === 'custom') {
        const days = Number(/^-(\d+)d$/.exec(query.dateFrom ?? '-7d')?.[1] ?? 7);
        query.dateFrom = isoDay(Date.now() - days * 86_400_000);
        query.dateTo = isoDay(Date.now());
      } else {
        query.dateFrom = value;
        delete query.dateTo;
      }
      ctx.changed(true);
    });
    return b;
  });
  const custom = preset
    ? null
    : h(
        'div',
        { class: 'inline-fields' },
        dateInput(query.dateFrom, (v) => {
          query.dateFrom = v || undefined;
          ctx.changed();
        }, 'From'),
        h('span', { class: 'muted' }, 'to'),
        dateInput(query.dateTo, (v) => {
          query.dateTo = v || undefined;
          ctx.changed();
        }, 'To'),
      );
  return h('div', { class: 'q-dates' }, h('div', { class: 'segments', role: 'group', 'aria-label': 'Date range' }, ...buttons), custom);
}

export function intervalField(query: CommonFields, ctx: FormContext): HTMLElement {
  return field('Interval', select(query.interval ?? 'day', INTERVALS.map((i) => [i, i[0]!.toUpperCase() + i.slice(1)] as [Interval, string]), (v) => {
    query.interval = v;
    ctx.changed();
  }));
}

/** Whether the browser knows a time zone by this name (the service takes the same IANA names). */
function knownZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** A time zone; a name being typed is sent only once it is one. Empty: the workspace's, as the service counts it. */
export function timezoneField(query: CommonFields, ctx: FormContext): HTMLElement {
  const input = textInput(query.timezone ?? '', (v) => {
    const name = v.trim();
    const valid = name === '' || knownZone(name);
    input.setAttribute('aria-invalid', String(!valid));
    if (!valid) return;
    query.timezone = name || undefined;
    ctx.changed();
  }, { list: LIST.timezones, placeholder: "The workspace's" });
  return field('Time zone', input);
}

export function aggregateField(query: CommonFields, ctx: FormContext): HTMLElement {
  return field('Count', select<AggregateBy>(query.aggregateBy ?? 'person', [['person', 'Persons'], ['group', 'Groups']], (v) => {
    query.aggregateBy = v;
    ctx.changed();
  }));
}

/** The <datalist>s the page's inputs complete from. */
export function datalists(s: Suggestions): HTMLElement[] {
  // Each name with its readable label and what the catalog says of it (types, description).
  const options = (values: readonly string[], described: ReadonlyMap<string, Described> = new Map()) =>
    values.map((v) => {
      const label = [LABELS[v], described.get(v)?.text].filter(Boolean).join(' · ');
      return h('option', { value: v, ...(label ? { label } : {}) });
    });
  let zones: string[] = [];
  try {
    zones = (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    zones = ['UTC'];
  }
  return [
    h('datalist', { id: LIST.events }, ...options(['$pageview', '$any', ...s.events], s.describedEvents)),
    h('datalist', { id: LIST.props('event') }, ...options(s.eventProperties, s.described.event)),
    h('datalist', { id: LIST.props('person') }, ...options(s.personProperties, s.described.person)),
    h('datalist', { id: LIST.props('group') }, ...options(['groupId'])),
    h('datalist', { id: LIST.timezones }, ...options(['UTC', ...zones])),
  ];
}
