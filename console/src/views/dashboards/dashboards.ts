import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { Dashboard } from '../../types';
import { confirmAction } from '../../ui/dialog';
import { formatTime } from '../../ui/format';
import { currentRoute } from '../../ui/hash';
import { listAction } from '../../ui/list-action';
import { notice } from '../../ui/notice';
import { promptText } from '../../ui/prompt';
import { dashboardHref, listDashboards, saveDashboard } from './common';
import { dashboardView } from './dashboard';

const rangeText = (d: Dashboard) => (d.dateFrom ? `${d.dateFrom}${d.dateTo ? ` to ${d.dateTo}` : ' to now'}` : 'each tile’s own');

/** The dashboards of the workspace: open, create, rename, delete. */
function dashboardList(root: HTMLElement): void {
  const message = h('div', { 'aria-live': 'polite' });
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off', placeholder: 'Growth, Activation, Weekly review…' });
  const create = h('button', { type: 'submit', class: 'primary' }, 'Create dashboard');
  const form = h('form', { class: 'inline-form', 'aria-label': 'New dashboard' }, h('label', { class: 'field' }, h('span', {}, 'New dashboard'), name), create);
  root.append(h('div', { class: 'page-header' }, h('h1', {}, 'Dashboards')), message, list, form);

  const act = listAction(message, load);

  const row = (d: Dashboard) => {
    const rename = h('button', { type: 'button', class: 'secondary small' }, 'Rename');
    const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
    rename.addEventListener('click', () =>
      act('Renaming', async () => {
        const next = await promptText(`Rename ${d.name}`, 'Name', d.name);
        if (!next || next === d.name) return undefined;
        await saveDashboard({ ...d, name: next });
        return `Renamed to ${next}`;
      }),
    );
    remove.addEventListener('click', () =>
      act('Deleting', async () => {
        if (!(await confirmAction(`Delete ${d.name}?`, 'The dashboard and its layout go; its saved insights stay.', 'Delete dashboard'))) return undefined;
        await api('DELETE', `/dashboards/${d.id}`);
        return `Deleted ${d.name}`;
      }),
    );
    return h(
      'tr',
      { 'data-name': d.name },
      h('td', {}, h('a', { href: dashboardHref(d.id), class: 'strong-link' }, d.name)),
      h('td', {}, `${d.tiles.length} tile${d.tiles.length === 1 ? '' : 's'}`),
      h('td', { class: 'hide-narrow' }, rangeText(d)),
      h('td', { class: 'hide-narrow' }, d.refreshSeconds ? `every ${d.refreshSeconds} s` : '—'),
      h('td', { class: 'hide-narrow' }, formatTime(d.updatedAt)),
      h('td', { class: 'actions' }, rename, remove),
    );
  };

  async function load(): Promise<void> {
    try {
      const dashboards = await listDashboards();
      list.replaceChildren(
        dashboards.length === 0
          ? notice('empty', 'No dashboards yet', 'Create one below, then add saved insights to it as tiles.')
          : h(
              'div',
              { class: 'table-scroll' },
              h(
                'table',
                { class: 'data-table' },
                h('thead', {}, h('tr', {}, ...['Name', 'Tiles', 'Date range', 'Refresh', 'Updated', ''].map((c, i) => h('th', { scope: 'col', class: i >= 2 && i <= 4 ? 'hide-narrow' : null }, c)))),
                h('tbody', {}, ...dashboards.map(row)),
              ),
            ),
      );
    } catch (err) {
      list.replaceChildren(notice('error', 'Dashboards could not be read', describeError(err)));
    }
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!name.value.trim()) return;
    create.disabled = true;
    try {
      const created = await api<Dashboard>('POST', '/dashboards', { name: name.value.trim(), tiles: [] });
      location.hash = dashboardHref(created.id);
    } catch (err) {
      message.replaceChildren(notice('error', 'The dashboard was not created', describeError(err)));
    } finally {
      create.disabled = false;
    }
  });
  void load();
}

/** `#/dashboards`: the list; `#/dashboards/<id>`: that dashboard. */
export function dashboardsView(root: HTMLElement): (() => void) | void {
  const [id] = currentRoute().rest;
  if (id) return dashboardView(root, id);
  dashboardList(root);
}
