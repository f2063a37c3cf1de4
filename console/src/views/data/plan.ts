import { api, ApiError, describeError } from '../../api';
import { h } from '../../dom';
import { formatCount } from '../../ui/format';
import { notice } from '../../ui/notice';
import type { JsonSchema, PlanMode, TrackingPlan } from './types';

const MODES: Array<{ value: PlanMode; label: string }> = [
  { value: 'record', label: 'Record violations, keep the events' },
  { value: 'drop', label: 'Drop violating events' },
  { value: 'quarantine', label: 'Quarantine violating events' },
];

const FORMATS = [
  { value: 'native', label: 'This service (events, identify, group)' },
  { value: 'segment', label: "Segment Protocols' tracking plan JSON" },
  { value: 'rudderstack', label: "RudderStack's tracking plan JSON" },
];

/** A property's rule in a few words: `string, one of "free" "pro"`, `number`, `string matching ^SKU-`. */
function ruleText(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return 'any value';
  const s = schema as JsonSchema;
  const parts: string[] = [];
  if (s.type !== undefined) parts.push(Array.isArray(s.type) ? s.type.join(' or ') : String(s.type));
  if (Array.isArray(s.enum)) parts.push(`one of ${s.enum.map((v) => JSON.stringify(v)).join(' ')}`);
  if (typeof s.pattern === 'string') parts.push(`matching ${s.pattern}`);
  return parts.join(', ') || 'any value';
}

/** One schema's properties as rows: name, rule, required. */
function schemaTable(schema: JsonSchema): HTMLElement {
  const properties = (typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const names = Object.keys(properties);
  return h(
    'div',
    {},
    names.length === 0
      ? h('p', { class: 'muted' }, 'No properties named.')
      : h(
          'table',
          { class: 'data-table plan-rules' },
          h('thead', {}, h('tr', {}, ...['Property', 'Rule', 'Required'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, ...names.map((name) => h('tr', { 'data-property': name }, h('td', {}, h('code', {}, name)), h('td', { class: 'wrap' }, ruleText(properties[name])), h('td', {}, required.has(name) ? 'required' : 'optional')))),
        ),
    schema.additionalProperties === false ? h('p', { class: 'muted' }, 'No other properties allowed.') : null,
  );
}

/** The plan's rules, one block per event (and identify and group traits). */
function planRules(current: TrackingPlan): HTMLElement {
  const blocks: Array<[string, JsonSchema]> = Object.entries(current.plan.events).map(([name, schema]) => [name, schema]);
  if (current.plan.identify) blocks.push(['identify (traits)', current.plan.identify]);
  if (current.plan.group) blocks.push(['group (traits)', current.plan.group]);
  if (blocks.length === 0) return notice('empty', 'No tracking plan yet', 'Paste a plan below (this service\'s format, or a Segment or RudderStack export) to check events as they arrive.');
  return h('div', { class: 'plan-events' }, ...blocks.map(([name, schema]) => h('details', { class: 'card plan-event', open: blocks.length <= 6, 'data-event': name }, h('summary', {}, h('code', {}, name)), schemaTable(schema))));
}

/** The problems of a refused plan, each at its place in the JSON. */
function refusal(err: unknown): HTMLElement {
  const errors = err instanceof ApiError ? (err.problem.errors ?? []) : [];
  const box = notice('error', 'The plan was not saved', describeError(err));
  if (errors.length) box.append(h('ul', { class: 'plan-problems' }, ...errors.map((e) => h('li', {}, h('code', {}, e.pointer ?? e.parameter ?? ''), ' ', e.detail))));
  return box;
}

/**
 * `#/data/plan`: the workspace's tracking plan as rules per event, its mode and version, and an
 * editor that replaces it (a new version) from any of the three formats.
 */
export function planView(root: HTMLElement): () => void {
  const summary = h('p', { class: 'result-summary', role: 'status' }, 'Loading…');
  const rules = h('div', {});
  const message = h('div', { 'aria-live': 'polite' });
  const format = h('select', { name: 'format', 'aria-label': 'Format' }, ...FORMATS.map((f) => h('option', { value: f.value }, f.label)));
  const mode = h('select', { name: 'mode', 'aria-label': 'Mode' }, ...MODES.map((m) => h('option', { value: m.value }, m.label)));
  const text = h('textarea', { name: 'plan', class: 'plan-json', rows: 16, spellcheck: false, 'aria-label': 'The plan as JSON' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save as a new version');
  const form = h(
    'form',
    { class: 'card form-card', 'aria-label': 'Edit the tracking plan' },
    h('h2', {}, 'Edit the plan'),
    h('div', { class: 'toolbar' }, h('label', { class: 'field' }, h('span', {}, 'Format'), format), h('label', { class: 'field' }, h('span', {}, 'Mode'), mode)),
    text,
    message,
    h('div', { class: 'form-actions' }, h('span', { class: 'spacer' }), save),
  );
  root.append(summary, rules, form);
  const controller = new AbortController();

  const show = (current: TrackingPlan) => {
    const events = Object.keys(current.plan.events).length;
    summary.textContent = current.version ? `Version ${current.version} · ${formatCount(events)} event${events === 1 ? '' : 's'} · mode: ${current.mode}` : 'No plan saved yet: every event is accepted as sent.';
    if (current.ignored?.length) summary.append(h('span', { class: 'muted' }, ` · not enforced: ${current.ignored.join(', ')}`));
    rules.replaceChildren(planRules(current));
    format.value = 'native';
    mode.value = current.mode;
    text.value = JSON.stringify(current.plan, null, 2);
  };

  const load = async () => {
    try {
      show(await api<TrackingPlan>('GET', '/tracking-plan', undefined, controller.signal));
    } catch (err) {
      if (controller.signal.aborted) return;
      // No plan yet: an empty one to start from, in the mode that changes nothing but counts.
      if (err instanceof ApiError && err.status === 404) return show({ format: 'native', plan: { events: {} }, mode: 'record', version: 0 });
      summary.textContent = '';
      rules.replaceChildren(notice('error', 'The tracking plan could not be read', describeError(err)));
    }
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let plan: unknown;
    try {
      plan = JSON.parse(text.value);
    } catch (err) {
      message.replaceChildren(notice('error', 'The plan is not JSON', (err as Error).message));
      return;
    }
    save.disabled = true;
    try {
      show(await api<TrackingPlan>('PUT', '/tracking-plan', { format: format.value, plan, mode: mode.value }));
      message.replaceChildren(notice('info', 'Saved', 'Events are checked against this version from now on.'));
    } catch (err) {
      message.replaceChildren(refusal(err));
    } finally {
      save.disabled = false;
    }
  });
  void load();
  return () => controller.abort();
}
