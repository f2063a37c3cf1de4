import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Dashboard, SavedInsight, Tile, TileAnswer } from '../../types';
import { confirmAction, openDialog } from '../../ui/dialog';
import { formatTime } from '../../ui/format';
import { notice } from '../../ui/notice';
import { promptText } from '../../ui/prompt';
import { workspaceZone, zoneNote } from '../../ui/zone-note';
import { insightHref, KIND_LABELS, listSaved, saveDashboard, tileBelow } from './common';
import { dashboardGrid, type DashboardGrid } from './grid';
import { tileBody } from './tile-view';

/** The dashboard-wide ranges offered; '' keeps each tile's own, 'custom' asks for dates. */
const RANGES: Array<[string, string]> = [
  ['', 'Each tile’s own range'],
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
  ['-1y', 'Last 12 months'],
  ['custom', 'Between dates…'],
];
/** Refresh intervals offered, in seconds (the API takes 30 to 86,400); 0 is off. */
const REFRESHES: Array<[number, string]> = [
  [0, 'No refresh'],
  [30, 'Every 30 s'],
  [60, 'Every minute'],
  [300, 'Every 5 minutes'],
  [900, 'Every 15 minutes'],
  [3600, 'Every hour'],
];
/** Layout changes are saved once the dragging pauses. */
const SAVE_DELAY_MS = 400;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A tile's stale answer says when it was asked (events arrived since); a current one says nothing. */
function showAge(age: Element | null, answer: TileAnswer | undefined): void {
  if (!age) return;
  const stale = answer?.stale === true && answer.computedAt !== undefined;
  const asked = stale ? formatTime(answer.computedAt!) : '';
  // The day too when it was not today.
  age.textContent = stale ? `as of ${asked.slice(0, 10) === formatTime(new Date().toISOString()).slice(0, 10) ? asked.slice(11, 16) : asked.slice(0, 16)}` : '';
  age.setAttribute('title', stale ? 'Events arrived since this answer was computed; the current one is on its way' : '');
  age.closest('.tile')?.classList.toggle('tile-stale', stale);
}

/** A request for the tiles' answers under way: when it was asked, and the signal that cancels it. */
interface AskedResults {
  answer: Promise<{ results: TileAnswer[] }>;
  started: number;
  signal: AbortSignal;
}

/**
 * One dashboard (`#/dashboards/<id>`): its tiles on a grid, answered by one
 * `GET /dashboards/{id}/results` (on opening, first the tiles' last answers at once with
 * `?stale=true`, each marked with its time while events arrived since, then the current ones); moved and resized by hand (or with the arrow keys on a
 * focused tile, Shift to resize) and saved with PUT; refreshed on its interval; one date range
 * for every tile; tiles added from the saved insights and removed.
 */
export function dashboardView(root: HTMLElement, id: string): () => void {
  const title = h('h1', {}, 'Dashboard');
  const status = h('span', { class: 'muted', role: 'status' });
  const renameButton = h('button', { type: 'button', class: 'secondary small' }, 'Rename');
  const deleteButton = h('button', { type: 'button', class: 'danger small' }, 'Delete');
  const addButton = h('button', { type: 'button', class: 'primary' }, '+ Add insight');
  const refreshButton = h('button', { type: 'button', class: 'secondary' }, 'Refresh');
  const range = h('select', { 'aria-label': 'Date range of every tile', name: 'range' }, ...RANGES.map(([v, l]) => h('option', { value: v }, l)));
  const from = h('input', { type: 'date', 'aria-label': 'From', name: 'dateFrom' });
  const to = h('input', { type: 'date', 'aria-label': 'To (empty: now)', name: 'dateTo' });
  const applyDates = h('button', { type: 'button', class: 'secondary small' }, 'Apply');
  const dates = h('span', { class: 'date-range', hidden: true }, from, h('span', { class: 'muted' }, 'to'), to, applyDates);
  const refresh = h('select', { 'aria-label': 'Refresh', name: 'refresh' }, ...REFRESHES.map(([v, l]) => h('option', { value: v }, l)));
  const message = h('div', { 'aria-live': 'polite' });
  // Tiles count days in the workspace's time zone unless their insight names one.
  const zoneSlot = h('span', { class: 'dashboard-zone' });
  const gridHost = h('div', { class: 'dashboard-grid' });
  const empty = h('div', {});
  root.append(
    h('div', { class: 'page-header' }, h('a', { href: '#/dashboards', class: 'back-link', 'aria-label': 'All dashboards' }, '←'), title, renameButton, deleteButton),
    h('div', { class: 'toolbar' }, range, dates, refresh, refreshButton, status, h('span', { class: 'spacer' }), zoneSlot, addButton),
    message,
    empty,
    gridHost,
  );

  let dashboard: Dashboard | undefined;
  let saved = new Map<string, SavedInsight>();
  let answers: TileAnswer[] = [];
  let grid: DashboardGrid | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let saveTimer: ReturnType<typeof setTimeout> | undefined;
  let loading: AbortController | undefined;
  let stopped = false;
  /** The workspace's time zone, read when the dashboard opens. */
  let zone = 'UTC';
  /** A tile whose insight names another zone than the workspace's says which. */
  const ownZone = (insight: SavedInsight | undefined) => {
    const named = insight?.query && typeof insight.query === 'object' ? (insight.query as { timezone?: unknown }).timezone : undefined;
    return typeof named === 'string' && named !== zone ? h('span', { class: 'zone-note muted tile-zone', 'data-timezone': named, title: `Times in ${named}` }, named) : null;
  };

  const fail = (what: string, err: unknown) => message.replaceChildren(notice('error', what, describeError(err)));

  /** The last save made: saves are sent one after another, so the service stores them in the order made. */
  let saving: Promise<unknown> = Promise.resolve();
  /**
   * Replaces the dashboard with `next` as saved by the service. `next` is made from the dashboard
   * as it is now, its layout included, so a layout save still waiting is dropped: sent later, it
   * would carry the dashboard from before this change (a tile removed came back so).
   */
  const save = (next: Dashboard, what = 'Not saved'): Promise<boolean> => {
    clearTimeout(saveTimer);
    saveTimer = undefined;
    const saved = saving.then(async () => {
      try {
        dashboard = await saveDashboard(next);
        return true;
      } catch (err) {
        fail(what, err);
        return false;
      }
    });
    saving = saved;
    return saved;
  };

  const tileElement = (tile: Tile, index: number) => {
    const insight = saved.get(tile.insightId);
    const name = insight?.name ?? 'Deleted insight';
    const remove = h('button', { type: 'button', class: 'icon-button', 'aria-label': `Remove ${name} from the dashboard`, title: 'Remove tile' }, '✕');
    remove.addEventListener('click', async () => {
      if (!dashboard) return;
      const tiles = dashboard.tiles.filter((_, i) => i !== index);
      if (await save({ ...dashboard, tiles }, 'The tile was not removed')) {
        answers = answers.filter((_, i) => i !== index);
        draw();
      }
    });
    const body = h('div', { class: 'tile-body' }, tileBody(answers[index], insight));
    const age = h('span', { class: 'tile-age muted' });
    showAge(age, answers[index]);
    const element = h(
      'div',
      { class: 'tile', tabindex: 0, role: 'group', 'aria-label': `${name}: arrow keys move the tile, Shift with arrow keys resizes it`, 'data-insight': tile.insightId },
      h(
        'header',
        { class: 'tile-header' },
        insight ? h('a', { href: insightHref(insight), class: 'tile-title', title: `Open ${name}` }, name) : h('span', { class: 'tile-title muted' }, name),
        insight ? h('span', { class: 'pill pill-kind' }, KIND_LABELS[insight.kind] ?? insight.kind) : null,
        h('span', { class: 'spacer' }),
        age,
        ownZone(insight),
        remove,
      ),
      body,
    );
    element.addEventListener('keydown', (e) => {
      if (e.target !== element) return;
      const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
      if (!step) return;
      e.preventDefault();
      if (e.shiftKey) grid?.nudge(index, 0, 0, step[0]!, step[1]!);
      else grid?.nudge(index, step[0]!, step[1]!, 0, 0);
    });
    return element;
  };

  /** The layout after a drag, a resize or a key: saved once it settles. */
  const layoutChanged = (tiles: Tile[]) => {
    if (!dashboard) return;
    dashboard = { ...dashboard, tiles };
    clearTimeout(saveTimer);
    saveTimer = setTimeout(async () => {
      saveTimer = undefined;
      status.textContent = 'Saving the layout…';
      if (dashboard && (await save(dashboard, 'The layout was not saved'))) status.textContent = 'Layout saved';
    }, SAVE_DELAY_MS);
  };

  /** Draws the grid of tiles again (after tiles were added or removed). */
  function draw(): void {
    if (!dashboard) return;
    grid?.destroy();
    gridHost.replaceChildren();
    empty.replaceChildren(
      dashboard.tiles.length === 0 ? notice('empty', 'No tiles yet', 'Add a saved insight (a trend, a funnel, a SQL statement…) with “+ Add insight”. Drag a tile by its title to move it, and by its corner to resize it.') : '',
    );
    grid = dashboardGrid(gridHost, dashboard.tiles, tileElement, layoutChanged);
  }

  /** Asks `GET /dashboards/{id}/results` (with `stale`, the last answers at once), cancelling an answer still awaited. */
  const askResults = (stale = false): AskedResults => {
    loading?.abort();
    loading = new AbortController();
    const path = `/dashboards/${id}/results${stale ? '?stale=true' : ''}`;
    return { answer: api<{ results: TileAnswer[] }>('GET', path, undefined, loading.signal), started: performance.now(), signal: loading.signal };
  };

  /**
   * Answers every tile with one request (`asked`, or asked now) and draws each tile's body in
   * place. Answers some of which are stale are drawn, each stale tile marked with its time, and
   * the current ones are asked next.
   */
  async function loadResults(asked?: AskedResults, waiting = 'Loading…'): Promise<void> {
    if (!dashboard || stopped) return;
    const { answer, started, signal } = asked ?? askResults();
    refreshButton.disabled = true;
    status.textContent = waiting;
    let stale = false;
    try {
      const { results } = await answer;
      answers = results;
      grid?.items.forEach((item, i) => {
        item.querySelector('.tile-body')?.replaceChildren(tileBody(answers[i], saved.get(dashboard!.tiles[i]?.insightId ?? '')));
        showAge(item.querySelector('.tile-age'), answers[i]);
      });
      stale = answers.some((a) => a.stale);
      root.dataset.loaded = String(Date.now());
      root.toggleAttribute('data-stale', stale);
      if (!stale) status.textContent = `Updated ${formatTime(new Date().toISOString()).slice(11, 19)} · ${Math.round(performance.now() - started)} ms`;
    } catch (err) {
      if (!signal.aborted) fail('The tiles could not be answered', err);
      status.textContent = '';
    } finally {
      refreshButton.disabled = false;
    }
    if (stale) await loadResults(undefined, 'Earlier answers shown · computing the current ones…');
  }

  const schedule = () => {
    clearInterval(timer);
    if (dashboard?.refreshSeconds) timer = setInterval(() => void loadResults(), dashboard.refreshSeconds * 1000);
  };

  /** The controls show the dashboard's stored range and refresh. */
  const showSettings = (d: Dashboard) => {
    title.textContent = d.name;
    document.title = `${d.name} · Event analytics`;
    const preset = RANGES.find(([v]) => v && v !== 'custom' && v === d.dateFrom && !d.dateTo);
    range.value = !d.dateFrom ? '' : preset ? preset[0] : 'custom';
    dates.hidden = range.value !== 'custom';
    from.value = d.dateFrom && DATE.test(d.dateFrom.slice(0, 10)) && range.value === 'custom' ? d.dateFrom.slice(0, 10) : '';
    to.value = d.dateTo ? d.dateTo.slice(0, 10) : '';
    refresh.value = String(REFRESHES.some(([v]) => v === d.refreshSeconds) ? d.refreshSeconds : 0);
  };

  const setRange = async (dateFrom: string | undefined, dateTo: string | undefined) => {
    if (!dashboard) return;
    message.replaceChildren();
    if (await save({ ...dashboard, dateFrom, dateTo }, 'The date range was not saved')) {
      showSettings(dashboard);
      await loadResults();
    }
  };
  range.addEventListener('change', () => {
    dates.hidden = range.value !== 'custom';
    if (range.value === 'custom') return from.focus();
    void setRange(range.value || undefined, undefined);
  });
  applyDates.addEventListener('click', () => {
    if (!from.value) return from.focus();
    void setRange(from.value, to.value || undefined);
  });
  refresh.addEventListener('change', async () => {
    if (!dashboard) return;
    const seconds = Number(refresh.value);
    if (await save({ ...dashboard, refreshSeconds: seconds || undefined }, 'The refresh was not saved')) schedule();
  });
  refreshButton.addEventListener('click', () => void loadResults());
  renameButton.addEventListener('click', async () => {
    if (!dashboard) return;
    const name = await promptText('Rename the dashboard', 'Name', dashboard.name);
    if (name && name !== dashboard.name && (await save({ ...dashboard, name }, 'Not renamed'))) showSettings(dashboard);
  });
  deleteButton.addEventListener('click', async () => {
    if (!dashboard) return;
    const ok = await confirmAction(`Delete ${dashboard.name}?`, 'The dashboard and its layout go; its saved insights stay.', 'Delete dashboard');
    if (!ok) return;
    try {
      await api('DELETE', `/dashboards/${id}`);
      location.hash = '#/dashboards';
    } catch (err) {
      fail('The dashboard was not deleted', err);
    }
  });
  addButton.addEventListener('click', async () => {
    if (!dashboard) return;
    saved = new Map((await listSaved().catch(() => [])).map((s) => [s.id, s]));
    if (saved.size === 0) {
      await openDialog('No saved insights yet', h('p', {}, 'Save an insight from the Insights page, or a statement from the SQL page, then add it here.'));
      return;
    }
    const select = h('select', { name: 'insight', size: Math.min(10, saved.size + 1) }, ...[...saved.values()].map((s) => h('option', { value: s.id }, `${s.name} · ${KIND_LABELS[s.kind] ?? s.kind}`)));
    select.selectedIndex = 0;
    const pending = openDialog('Add a saved insight', h('label', { class: 'field wide' }, h('span', {}, 'Saved insight'), select), [
      { label: 'Cancel', value: '' },
      { label: 'Add tile', value: 'add', kind: 'primary' },
    ]);
    select.focus();
    if ((await pending) !== 'add' || !select.value) return;
    if (await save({ ...dashboard, tiles: [...dashboard.tiles, tileBelow(dashboard.tiles, select.value)] }, 'The tile was not added')) {
      draw();
      await loadResults();
      grid?.items.at(-1)?.scrollIntoView({ block: 'nearest' });
    }
  });

  (async () => {
    try {
      // The tiles' answers are asked beside the dashboard's own reads, not after them: they take longest.
      const first = askResults(true);
      first.answer.catch(() => {});
      const [d, list, z] = await Promise.all([api<Dashboard>('GET', `/dashboards/${id}`), listSaved(), workspaceZone()]);
      if (stopped) return;
      zone = z;
      zoneSlot.replaceChildren(zoneNote(z));
      dashboard = d;
      saved = new Map(list.map((s) => [s.id, s]));
      showSettings(d);
      draw();
      schedule();
      await loadResults(first);
    } catch (err) {
      title.textContent = 'Dashboard';
      fail('The dashboard could not be opened', err);
      for (const control of [renameButton, deleteButton, addButton, refreshButton, range, refresh]) control.disabled = true;
    }
  })();

  return () => {
    stopped = true;
    loading?.abort();
    clearInterval(timer);
    // A layout still waiting to be saved is saved on the way out.
    if (saveTimer !== undefined && dashboard) void saveDashboard(dashboard).catch(() => {});
    clearTimeout(saveTimer);
    grid?.destroy();
  };
}
