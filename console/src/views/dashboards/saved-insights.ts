import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Dashboard, SavedInsight } from '../../types';
import { confirmAction, openDialog } from '../../ui/dialog';
import { formatTime } from '../../ui/format';
import { listAction } from '../../ui/list-action';
import { notice } from '../../ui/notice';
import { promptText } from '../../ui/prompt';
import { dashboardHref, insightHref, KIND_LABELS, listDashboards, listSaved, saveDashboard, savedInput, tileBelow } from './common';

/** Asks which dashboard (or a new one) gets `insight` as a tile, and adds it there. */
async function addToDashboard(insight: SavedInsight): Promise<Dashboard | undefined> {
  const dashboards = await listDashboards();
  const NEW = '';
  const select = h(
    'select',
    { name: 'dashboard' },
    ...dashboards.map((d) => h('option', { value: d.id }, d.name)),
    h('option', { value: NEW }, 'A new dashboard…'),
  );
  const name = h('input', { type: 'text', name: 'dashboardName', maxlength: 200, autocomplete: 'off', placeholder: 'Name of the new dashboard', hidden: dashboards.length > 0 });
  select.addEventListener('change', () => (name.hidden = select.value !== NEW));
  const pending = openDialog(`Add “${insight.name}” to a dashboard`, h('div', { class: 'stack' }, h('label', { class: 'field wide' }, h('span', {}, 'Dashboard'), select), name), [
    { label: 'Cancel', value: '' },
    { label: 'Add tile', value: 'add', kind: 'primary' },
  ]);
  select.focus();
  if ((await pending) !== 'add') return undefined;
  if (select.value === NEW) {
    return api<Dashboard>('POST', '/dashboards', { name: name.value.trim() || insight.name, tiles: [tileBelow([], insight.id)] });
  }
  const dashboard = await api<Dashboard>('GET', `/dashboards/${select.value}`);
  return saveDashboard({ ...dashboard, tiles: [...dashboard.tiles, tileBelow(dashboard.tiles, insight.id)] });
}

/**
 * Saved insights: each opens in its insight builder (or the SQL page); rename, duplicate,
 * delete, and add to a dashboard as a tile.
 */
export function savedInsightsView(root: HTMLElement): void {
  const message = h('div', { 'aria-live': 'polite' });
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  root.append(
    h('div', { class: 'page-header' }, h('h1', {}, 'Saved insights'), h('span', { class: 'muted' }, 'Save an insight from its builder, or a statement from the SQL page.')),
    message,
    list,
  );

  const act = listAction(message, load);

  const row = (s: SavedInsight) => {
    const buttons = {
      add: h('button', { type: 'button', class: 'secondary small' }, 'Add to dashboard'),
      rename: h('button', { type: 'button', class: 'secondary small' }, 'Rename'),
      duplicate: h('button', { type: 'button', class: 'secondary small' }, 'Duplicate'),
      remove: h('button', { type: 'button', class: 'danger small' }, 'Delete'),
    };
    buttons.add.addEventListener('click', () =>
      act('Adding the tile', async () => {
        const dashboard = await addToDashboard(s);
        if (!dashboard) return undefined;
        message.replaceChildren(notice('info', `Added to ${dashboard.name}`), h('a', { href: dashboardHref(dashboard.id) }, `Open ${dashboard.name}`));
        return undefined;
      }),
    );
    buttons.rename.addEventListener('click', () =>
      act('Renaming', async () => {
        const name = await promptText(`Rename “${s.name}”`, 'Name', s.name);
        if (!name || name === s.name) return undefined;
        await api('PUT', `/insights/saved/${s.id}`, savedInput({ ...s, name }));
        return `Renamed to ${name}`;
      }),
    );
    buttons.duplicate.addEventListener('click', () =>
      act('Duplicating', async () => {
        const copy = await api<SavedInsight>('POST', '/insights/saved', savedInput({ ...s, name: `${s.name} (copy)`.slice(0, 200) }));
        return `Duplicated as ${copy.name}`;
      }),
    );
    buttons.remove.addEventListener('click', () =>
      act('Deleting', async () => {
        const ok = await confirmAction(`Delete “${s.name}”?`, 'Dashboards showing it keep an empty tile saying so until the tile is removed.', 'Delete insight');
        if (!ok) return undefined;
        await api('DELETE', `/insights/saved/${s.id}`);
        return `Deleted ${s.name}`;
      }),
    );
    return h(
      'tr',
      { 'data-name': s.name },
      h('td', {}, h('a', { href: insightHref(s), class: 'strong-link' }, s.name)),
      h('td', {}, h('span', { class: `pill pill-kind` }, KIND_LABELS[s.kind] ?? s.kind)),
      h('td', { class: 'hide-narrow' }, formatTime(s.updatedAt)),
      h('td', { class: 'actions' }, ...Object.values(buttons)),
    );
  };

  async function load(): Promise<void> {
    try {
      const saved = await listSaved();
      if (saved.length === 0) {
        list.replaceChildren(notice('empty', 'No saved insights yet', 'Build a trend, a funnel or any insight on the Insights page and save it, or save a statement on the SQL page; then put it on a dashboard.'));
        return;
      }
      list.replaceChildren(
        h(
          'div',
          { class: 'table-scroll' },
          h(
            'table',
            { class: 'data-table' },
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Updated'), h('th', { scope: 'col' }, ''))),
            h('tbody', {}, ...saved.toReversed().map(row)),
          ),
        ),
      );
    } catch (err) {
      list.replaceChildren(notice('error', 'Saved insights could not be read', describeError(err)));
    }
  }
  void load();
}
