import { api, describeError } from '../api';
import { h } from '../dom';
import type { CreatedWorkspace, Page, Workspace } from '../types';
import { copyable } from '../ui/copy';
import { confirmAction, openDialog } from '../ui/dialog';
import { formatTime } from '../ui/format';
import { notice } from '../ui/notice';

/** The properties field's text as an object; undefined when empty. Throws on JSON that is not an object. */
function propertiesFrom(text: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  const value = JSON.parse(text) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('properties must be a JSON object, such as {"plan": "pro"}');
  return value as Record<string, unknown>;
}

/** A form for a workspace: new (with databaseName) or an edit of `existing`. */
function workspaceForm(existing?: Workspace) {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, value: existing?.name ?? '', autocomplete: 'off' });
  const database = h('input', { type: 'text', name: 'databaseName', pattern: '[A-Za-z_][A-Za-z0-9_]*', placeholder: 'derived from the name', value: existing?.databaseName ?? '', disabled: existing !== undefined, autocomplete: 'off' });
  const isDefault = h('input', { type: 'checkbox', name: 'isDefault', checked: existing?.isDefault ?? false });
  const properties = h('textarea', { name: 'properties', rows: 3, placeholder: '{"plan": "enterprise"}', spellcheck: 'false' }, existing?.properties ? JSON.stringify(existing.properties, null, 2) : '');
  const fields = h(
    'div',
    { class: 'stack' },
    h('label', { class: 'field wide' }, h('span', {}, 'Name'), name),
    h('label', { class: 'field wide' }, h('span', {}, existing ? 'Database (cannot change)' : 'Database name (optional)'), database),
    h('label', { class: 'check' }, isDefault, 'Default workspace (the admin keys and the keys from the environment use it)'),
    h('label', { class: 'field wide' }, h('span', {}, 'Properties (JSON object, optional)'), properties),
  );
  const body = () => {
    const input: Record<string, unknown> = { name: name.value.trim(), isDefault: isDefault.checked };
    if (!existing && database.value.trim()) input.databaseName = database.value.trim();
    const props = propertiesFrom(properties.value);
    if (props) input.properties = props;
    return input;
  };
  return { fields, body, focus: () => name.focus() };
}

/** Workspaces (admin key): list, create (keys shown once), edit, delete after confirmation. */
export function workspacesView(root: HTMLElement): void {
  const list = h('div', {});
  const message = h('div', { 'aria-live': 'polite' });
  const form = workspaceForm();
  const create = h('button', { type: 'submit', class: 'primary' }, 'Create workspace');
  const createForm = h('form', { class: 'card form-card', 'aria-label': 'New workspace' }, h('h2', {}, 'New workspace'), form.fields, h('div', { class: 'form-actions' }, h('span', { class: 'spacer' }), create));
  root.append(h('div', { class: 'page-header' }, h('h1', {}, 'Workspaces')), message, list, createForm);

  const edit = async (workspace: Workspace) => {
    const editForm = workspaceForm(workspace);
    const problem = h('div', { 'aria-live': 'polite' });
    for (;;) {
      const choice = await openDialog(`Edit ${workspace.name}`, h('div', {}, editForm.fields, problem), [
        { label: 'Cancel', value: '' },
        { label: 'Save', value: 'save', kind: 'primary' },
      ]);
      if (choice !== 'save') return;
      try {
        await api('PUT', `/workspaces/${workspace.workspaceId}`, editForm.body());
        message.replaceChildren(notice('info', `Saved ${workspace.name}`));
        return load();
      } catch (err) {
        problem.replaceChildren(notice('error', 'Not saved', err instanceof SyntaxError ? `properties: ${err.message}` : describeError(err)));
      }
    }
  };

  const load = async () => {
    try {
      const page = await api<Page<Workspace>>('GET', '/workspaces?limit=1000');
      list.replaceChildren(
        h(
          'table',
          { class: 'data-table' },
          h('thead', {}, h('tr', {}, ...['Name', 'Database', 'Created', 'Properties', ''].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            {},
            ...page.results.map((w) => {
              const editButton = h('button', { type: 'button', class: 'secondary small' }, 'Edit');
              const remove = h('button', { type: 'button', class: 'danger small', disabled: w.isDefault, title: w.isDefault ? 'The default workspace cannot be deleted; make another the default first' : null }, 'Delete');
              editButton.addEventListener('click', () => void edit(w));
              remove.addEventListener('click', async () => {
                const ok = await confirmAction(`Delete ${w.name}?`, `Its keys stop working at once, its webhooks stop, and its database ${w.databaseName} is dropped with every event in it. This cannot be undone.`, 'Delete workspace');
                if (!ok) return;
                try {
                  await api('DELETE', `/workspaces/${w.workspaceId}`);
                  message.replaceChildren(notice('info', `Deleted ${w.name}`));
                  await load();
                } catch (err) {
                  message.replaceChildren(notice('error', 'The workspace was not deleted', describeError(err)));
                }
              });
              return h(
                'tr',
                { 'data-name': w.name },
                h('td', {}, h('strong', {}, w.name), w.isDefault ? h('span', { class: 'pill pill-default' }, 'default') : null),
                h('td', {}, h('code', {}, w.databaseName)),
                h('td', {}, formatTime(w.createdAt)),
                h('td', { class: 'wrap' }, w.properties ? h('code', {}, JSON.stringify(w.properties)) : '—'),
                h('td', { class: 'actions' }, editButton, remove),
              );
            }),
          ),
        ),
      );
    } catch (err) {
      list.replaceChildren(notice('error', 'Workspaces could not be read', describeError(err)));
    }
  };

  createForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    create.disabled = true;
    message.replaceChildren();
    try {
      const created = await api<CreatedWorkspace>('POST', '/workspaces', form.body());
      createForm.reset();
      await load();
      await openDialog(
        `Workspace ${created.name} created`,
        h(
          'div',
          { class: 'stack' },
          h('p', {}, 'Its keys are shown this once: the service keeps only their hashes. Copy them now.'),
          copyable('Public key (send events; safe in a web page)', created.publicApiKey),
          copyable('Private key (read, query, webhooks; keep secret)', created.privateApiKey),
        ),
        [{ label: 'I have copied them', value: '', kind: 'primary' }],
      );
    } catch (err) {
      message.replaceChildren(notice('error', 'The workspace was not created', err instanceof SyntaxError ? `properties: ${err.message}` : describeError(err)));
    } finally {
      create.disabled = false;
    }
  });
  void load();
}
