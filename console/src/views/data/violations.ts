import { api, describeError } from '../../api';
import { h } from '../../dom';
import { formatCount, formatTime } from '../../ui/format';
import { notice } from '../../ui/notice';
import type { QuarantinedEvent, ViolationCount } from './types';

/** How many quarantined events the page shows as a sample. */
const SAMPLE = 20;

/** Counts summed by a key (an event, or an event's property path), largest first. */
function totalsBy(items: ViolationCount[], key: (v: ViolationCount) => string): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const v of items) totals.set(key(v), (totals.get(key(v)) ?? 0) + v.count);
  return [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function totalsTable(label: string, rows: Array<[string, number]>, cls: string): HTMLElement {
  return h(
    'table',
    { class: `data-table ${cls}` },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, label), h('th', { scope: 'col', class: 'num' }, 'Violations'))),
    h('tbody', {}, ...rows.map(([name, count]) => h('tr', { 'data-key': name }, h('td', { class: 'wrap' }, h('code', {}, name)), h('td', { class: 'num' }, formatCount(count))))),
  );
}

function violationsTable(items: ViolationCount[]): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'data-table violations-table' },
      h('thead', {}, h('tr', {}, ...['Event', 'Property', 'Rule', 'Expected', 'Came', 'Count', 'Last seen'].map((c) => h('th', { scope: 'col', class: c === 'Count' ? 'num' : c === 'Last seen' ? 'hide-narrow' : null }, c)))),
      h(
        'tbody',
        {},
        ...items.map((v) =>
          h(
            'tr',
            { 'data-event': v.event, 'data-path': v.path },
            h('td', { class: 'wrap' }, h('code', {}, v.event)),
            h('td', { class: 'wrap' }, h('code', {}, v.path || '(the event)')),
            h('td', {}, v.kind),
            h('td', { class: 'wrap' }, v.expected),
            h('td', { class: 'wrap' }, h('code', {}, v.actual)),
            h('td', { class: 'num' }, formatCount(v.count)),
            h('td', { class: 'hide-narrow' }, formatTime(v.lastSeen)),
          ),
        ),
      ),
    ),
  );
}

/** A sample of the events kept apart, each with what broke the plan, and a replay of them all. */
function quarantineSection(events: QuarantinedEvent[], total: number, replay: () => Promise<void>): HTMLElement {
  const button = h('button', { type: 'button', class: 'secondary' }, 'Replay against the current plan');
  button.addEventListener('click', async () => {
    button.disabled = true;
    await replay();
    button.disabled = false;
  });
  return h(
    'section',
    { class: 'quarantine' },
    h('div', { class: 'page-header' }, h('h2', {}, `Quarantine (${formatCount(total)})`), total > 0 ? button : null),
    total === 0
      ? h('p', { class: 'muted' }, 'No events are kept apart. In quarantine mode, events that break the plan wait here until the plan or the sender is fixed.')
      : h(
          'ul',
          { class: 'quarantine-list' },
          ...events.map((q) =>
            h(
              'li',
              { class: 'card', 'data-uuid': q.event.uuid },
              h('div', {}, h('code', {}, q.event.event ?? q.event.type), h('span', { class: 'muted' }, ` · quarantined ${formatTime(q.quarantinedAt)} · plan version ${q.planVersion}`)),
              h('ul', {}, ...q.violations.map((v) => h('li', {}, h('code', {}, v.path || '(the event)'), ` ${v.kind}: expected ${v.expected}, came `, h('code', {}, v.actual)))),
            ),
          ),
        ),
  );
}

/**
 * `#/data/violations`: what broke the tracking plan, by event and by property, each kind with
 * its count, and the quarantined events with a replay.
 */
export function violationsView(root: HTMLElement): () => void {
  const event = h('input', { type: 'search', name: 'event', placeholder: 'Event name', 'aria-label': 'Only this event', autocomplete: 'off' });
  const summary = h('span', { class: 'result-summary', role: 'status' }, 'Loading…');
  const body = h('div', {});
  root.append(h('div', { class: 'toolbar', role: 'search' }, event, summary), body);
  let loading: AbortController | undefined;

  const load = async (note?: HTMLElement) => {
    loading?.abort();
    loading = new AbortController();
    const query = new URLSearchParams();
    if (event.value.trim()) query.set('event', event.value.trim());
    try {
      const [violations, quarantine] = await Promise.all([
        api<{ results: ViolationCount[] }>('GET', `/violations?${query}`, undefined, loading.signal),
        api<{ results: QuarantinedEvent[]; total: number }>('GET', `/quarantine?limit=${SAMPLE}`, undefined, loading.signal),
      ]);
      const items = violations.results;
      const total = items.reduce((n, v) => n + v.count, 0);
      summary.textContent = `${formatCount(total)} violation${total === 1 ? '' : 's'} of ${formatCount(items.length)} kind${items.length === 1 ? '' : 's'}`;
      const replay = async () => {
        try {
          const done = await api<{ replayed: number; remaining: number }>('POST', '/quarantine/replay');
          await load(notice('info', 'Replayed', `${formatCount(done.replayed)} now keep the plan and were stored; ${formatCount(done.remaining)} still in quarantine.`));
        } catch (err) {
          body.prepend(notice('error', 'The replay failed', describeError(err)));
        }
      };
      body.replaceChildren(
        note ?? '',
        items.length === 0
          ? notice('empty', 'No violations', 'Events that break the tracking plan are counted here by event, property and rule.')
          : h(
              'div',
              {},
              h('div', { class: 'violation-totals' }, totalsTable('Event', totalsBy(items, (v) => v.event), 'violations-by-event'), totalsTable('Property', totalsBy(items, (v) => `${v.event} · ${v.path}`), 'violations-by-property')),
              violationsTable(items),
            ),
        quarantineSection(quarantine.results, quarantine.total, replay),
      );
    } catch (err) {
      if (loading.signal.aborted) return;
      summary.textContent = '';
      body.replaceChildren(notice('error', 'The violations could not be read', describeError(err)));
    }
  };
  event.addEventListener('change', () => void load());
  void load();
  return () => loading?.abort();
}
