import './insights.css';
import { api, describeError } from '../../api';
import { h } from '../../dom';
import { session } from '../../session';
import { openDialog } from '../../ui/dialog';
import { replaceHash } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { workspaceZone } from '../../ui/zone-note';
import { datalists, type FormContext } from './fields';
import { funnels } from './funnels';
import { paths } from './paths';
import { retention } from './retention';
import type { KindSpec } from './spec';
import { lifecycle, stickiness } from './stickiness';
import { chartOf, cleanQuery, completeQuery, defaultQuery, hashOf, isKind, missing, parseHash, queryFromText, type InsightState } from './state';
import { EVENT_COLUMNS, loadSuggestions, type Suggestions } from './suggestions';
import { trends } from './trends';
import { KINDS, type AnswerOf, type AnyQuery, type Display, type Kind, type QueryOf, type SavedInsight } from './types';

const SPECS: { [K in Kind]: KindSpec<K> } = { trends, funnels, retention, paths, stickiness, lifecycle };
/** How long the query rests before it is asked. */
const DEBOUNCE_MS = 400;
/** The last URL of each kind in this tab (for one workspace), so its tab reopens what was being built. */
let lastHashes = { workspaceId: '', hashes: new Map<Kind, string>() };

/** What a new saved insight is called unless renamed. */
function suggestedName(kind: Kind, query: AnyQuery): string {
  const q = query as Partial<QueryOf['trends'] & QueryOf['funnels'] & QueryOf['retention']> & { start?: string };
  const events =
    kind === 'funnels'
      ? (q.steps ?? []).map((s) => s.event)
      : kind === 'retention'
        ? [q.startEvent?.event ?? '', q.returnEvent?.event ?? '']
        : kind === 'paths'
          ? [q.start ?? 'any event']
          : (q.series ?? []).map((s) => s.event);
  return `${SPECS[kind].label}: ${events.filter(Boolean).join(kind === 'funnels' ? ' → ' : ', ')}`.slice(0, 200);
}

/**
 * Insights: one builder per kind (trends, funnels, retention, paths, stickiness, lifecycle),
 * the query on one side and its chart on the other, asked again as the query changes. The URL
 * holds the query (see state.ts), so it reopens the same insight; Save stores it as a saved
 * insight (POST /insights/saved), which `#/insights/<kind>?saved=<id>` opens.
 */
export function insightsView(root: HTMLElement): () => void {
  const workspaceId = session()?.identity.workspace.workspaceId ?? '';
  if (lastHashes.workspaceId !== workspaceId) lastHashes = { workspaceId, hashes: new Map() };
  const { kind: urlKind, params } = parseHash(location.hash);
  const kind: Kind = urlKind ?? 'trends';
  const spec = SPECS[kind] as KindSpec<Kind>;
  let state: InsightState | undefined;
  /** The saved insight's query and display as saved, to tell whether they changed since. */
  let savedText: string | undefined;
  let suggestions: Suggestions = { events: [], eventProperties: [...EVENT_COLUMNS], personProperties: [], described: { event: new Map(), person: new Map(), group: new Map() }, describedEvents: new Map() };
  let answer: AnswerOf[Kind] | undefined;
  let answeredFor: string | undefined;
  let asked: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const title = h('h1', {}, 'Insights');
  const savedName = h('span', { class: 'insight-name muted' });
  const status = h('span', { class: 'muted insight-status', role: 'status', 'aria-live': 'polite' });
  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh');
  const save = h('button', { type: 'button', class: 'primary small', disabled: true }, 'Save');
  const tabs = KINDS.map((k) =>
    h('a', { class: 'kind-tab', href: lastHashes.hashes.get(k) ?? `#/insights/${k}`, 'data-kind': k, 'aria-current': k === kind ? 'page' : false }, SPECS[k].label),
  );
  const form = h('form', { class: 'insight-query', 'aria-label': `${spec.label} query`, novalidate: true });
  const output = h('div', { class: 'insight-result-body' }, notice('info', 'Loading…'));
  const lists = h('div', { hidden: true });
  root.append(
    h(
      'div',
      { class: 'insights' },
      h('div', { class: 'page-header insight-header' }, title, savedName, h('span', { class: 'spacer' }), status, refresh, save),
      h('nav', { class: 'kind-tabs', 'aria-label': 'Insight kinds' }, ...tabs),
      h(
        'div',
        { class: 'insight-layout' },
        form,
        h('section', { class: 'insight-result', 'aria-label': `${spec.label} chart` }, h('p', { class: 'insight-question muted' }, spec.question), output),
      ),
      lists,
    ),
  );
  lists.replaceChildren(...datalists(suggestions));

  const currentText = () => (state ? JSON.stringify({ q: cleanQuery(kind, state.query), d: state.display }) : '');
  const changedSinceSave = () => Boolean(state?.saved) && currentText() !== savedText;
  const updateUrl = () => {
    if (!state) return;
    const changed = changedSinceSave();
    const hash = hashOf(state, changed);
    lastHashes.hashes.set(kind, hash);
    tabs[KINDS.indexOf(kind)]!.setAttribute('href', hash);
    replaceHash(hash);
    savedName.textContent = state.saved ? `${state.saved.name}${changed ? ' (changed)' : ''}` : '';
    document.title = `${state.saved?.name ?? spec.label} · Insights · Event analytics`;
  };

  const ctx: FormContext = {
    get suggestions() {
      return suggestions;
    },
    changed(structure) {
      if (structure) drawForm();
      updateUrl();
      clearTimeout(timer);
      timer = setTimeout(() => void ask(), DEBOUNCE_MS);
    },
  };

  function drawForm(): void {
    if (!state) return;
    form.replaceChildren(...spec.form(state.query, ctx));
  }

  function draw(): void {
    if (!state || !answer) return;
    const sent = JSON.parse(answeredFor!) as AnyQuery;
    output.replaceChildren(
      spec.render(answer, sent, {
        display: state.display,
        setDisplay: (display: Display) => {
          state!.display = display;
          updateUrl();
          draw();
        },
      }),
    );
  }

  async function ask(force = false): Promise<void> {
    if (!state || stopped) return;
    const body = cleanQuery(kind, state.query);
    const why = missing(kind, body, suggestions.known);
    if (why) {
      asked?.abort();
      answer = undefined;
      answeredFor = undefined;
      status.textContent = '';
      output.replaceChildren(notice('info', why));
      return;
    }
    const text = JSON.stringify(body);
    if (!force && text === answeredFor && answer) return;
    asked?.abort();
    const controller = (asked = new AbortController());
    status.textContent = 'Updating…';
    output.setAttribute('aria-busy', 'true');
    const started = performance.now();
    try {
      const result = await api<AnswerOf[Kind]>('POST', `/insights/${kind}`, body, controller.signal);
      if (controller.signal.aborted || stopped) return;
      answer = result;
      answeredFor = text;
      status.textContent = `Updated in ${Math.round(performance.now() - started)} ms`;
      draw();
    } catch (err) {
      if (controller.signal.aborted || stopped) return;
      answer = undefined;
      answeredFor = undefined;
      status.textContent = '';
      output.replaceChildren(notice('error', 'The insight could not be computed', describeError(err)));
    } finally {
      if (asked === controller) output.removeAttribute('aria-busy');
    }
  }

  async function openSaveDialog(): Promise<void> {
    if (!state) return;
    const current = state;
    const name = h('input', { type: 'text', name: 'name', maxlength: 200, required: true, autocomplete: 'off' });
    name.value = current.saved?.name ?? suggestedName(kind, current.query);
    const body = h('div', { class: 'stack' }, h('label', { class: 'field wide' }, h('span', {}, 'Name'), name), h('p', { class: 'help' }, 'Saved insights are listed on the dashboards page, for everyone with a key to this workspace.'));
    const buttons: Array<{ label: string; value: string; kind?: 'primary' }> = [{ label: 'Cancel', value: '' }];
    if (current.saved) buttons.push({ label: 'Save as new', value: 'new' }, { label: 'Update', value: 'update', kind: 'primary' });
    else buttons.push({ label: 'Save', value: 'new', kind: 'primary' });
    name.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      name.closest('dialog')?.querySelector<HTMLButtonElement>('button.primary')?.click();
    });
    requestAnimationFrame(() => name.select());
    const choice = await openDialog(current.saved ? `Save ${current.saved.name}` : 'Save insight', body, buttons);
    if (!choice || stopped) return;
    const input = { name: name.value.trim() || suggestedName(kind, current.query), kind, query: cleanQuery(kind, current.query), display: current.display as Record<string, unknown> };
    try {
      const saved =
        choice === 'update' && current.saved
          ? await api<SavedInsight>('PUT', `/insights/saved/${encodeURIComponent(current.saved.id)}`, input)
          : await api<SavedInsight>('POST', '/insights/saved', input);
      current.saved = { id: saved.id, name: saved.name };
      savedText = currentText();
      updateUrl();
      status.textContent = `Saved as “${saved.name}”`;
    } catch (err) {
      status.textContent = '';
      output.prepend(notice('error', 'The insight was not saved', describeError(err)));
    }
  }

  async function start(): Promise<void> {
    const suggested = loadSuggestions().then(
      (s) => {
        if (stopped) return s;
        suggestions = s;
        lists.replaceChildren(...datalists(s));
        return s;
      },
      () => suggestions,
    );
    const zone = workspaceZone();
    let saved: SavedInsight | undefined;
    const savedId = params.get('saved');
    if (savedId) {
      try {
        saved = await api<SavedInsight>('GET', `/insights/saved/${encodeURIComponent(savedId)}`);
      } catch (err) {
        output.replaceChildren(notice('error', 'The saved insight could not be opened', describeError(err)));
      }
      if (stopped) return;
      if (saved && saved.kind !== kind && isKind(saved.kind)) {
        // Its URL named another kind: open it under its own.
        location.replace(`#/insights/${saved.kind}?saved=${encodeURIComponent(saved.id)}`);
        return;
      }
      if (saved && !isKind(saved.kind)) {
        output.replaceChildren(notice('error', 'This saved insight is a SQL query', 'Open it from the dashboards page.'));
        saved = undefined;
      }
    }
    const fromUrl = queryFromText(params.get('q'));
    const savedQuery = saved && queryFromText(JSON.stringify(saved.query));
    const query = completeQuery(kind, fromUrl ?? savedQuery ?? defaultQuery(kind, (await suggested).events, await zone));
    if (stopped) return;
    const display: Display = { chart: chartOf(params.get('chart')) ?? chartOf(saved?.display?.chart) ?? 'line' };
    state = { kind, query, display, ...(saved ? { saved: { id: saved.id, name: saved.name } } : {}) };
    if (saved && savedQuery) savedText = JSON.stringify({ q: cleanQuery(kind, savedQuery), d: { chart: chartOf(saved.display?.chart) ?? 'line' } });
    save.disabled = false;
    drawForm();
    updateUrl();
    await ask();
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    void ask();
  });
  refresh.addEventListener('click', () => void ask(true));
  save.addEventListener('click', () => void openSaveDialog());
  void start();
  return () => {
    stopped = true;
    clearTimeout(timer);
    asked?.abort();
  };
}
