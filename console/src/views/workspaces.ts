import { api, describeError } from '../api';
import { h } from '../dom';
import { session } from '../session';
import type { CreatedWorkspace, Page, RotatedKey, Workspace } from '../types';
import { copyable } from '../ui/copy';
import { confirmAction, openDialog } from '../ui/dialog';
import { formatTime } from '../ui/format';
import { notice } from '../ui/notice';
import { openWorkspace, workspacesChanged } from '../ui/workspace-switcher';

const KEY_KINDS = {
  public: { label: 'public key', use: 'send events; safe in a web page' },
  private: { label: 'private key', use: 'read, query, webhooks; keep secret' },
} as const;

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
  const sites = h('input', { type: 'text', name: 'siteDomains', placeholder: 'example.com, shop.example.com', value: existing?.siteDomains?.join(', ') ?? '', autocomplete: 'off', spellcheck: 'false' });
  const retention = h('input', { type: 'number', name: 'retentionDays', min: 0, max: 36500, step: 1, placeholder: existing ? '' : 'default', value: existing?.retentionDays ?? '' });
  const fields = h(
    'div',
    { class: 'stack' },
    h('label', { class: 'field wide' }, h('span', {}, 'Name'), name),
    h('label', { class: 'field wide' }, h('span', {}, existing ? 'Database (cannot change)' : 'Database name (optional)'), database),
    h('label', { class: 'check' }, isDefault, 'Default workspace (the admin keys and the keys from the environment use it)'),
    h('label', { class: 'field wide' }, h('span', {}, "Sites (Plausible's data-domain; the Overview's site picker), separated by commas"), sites),
    h('label', { class: 'field wide' }, h('span', {}, 'Retention in days (0 keeps events for ever)'), retention),
    h('label', { class: 'field wide' }, h('span', {}, 'Properties (JSON object, optional)'), properties),
  );
  const body = () => {
    const input: Record<string, unknown> = { name: name.value.trim(), isDefault: isDefault.checked };
    if (!existing && database.value.trim()) input.databaseName = database.value.trim();
    // Left empty: the service's default on creation, unchanged on an edit.
    if (retention.value.trim() !== '') input.retentionDays = Number(retention.value);
    // An edit sends the list even when emptied (that removes every site); a creation only when given.
    const domains = sites.value.split(/[\s,]+/).filter(Boolean);
    if (existing || domains.length) input.siteDomains = domains;
    const props = propertiesFrom(properties.value);
    if (props) input.properties = props;
    return input;
  };
  return { fields, body, focus: () => name.focus() };
}

/**
 * Replaces a workspace's public or private key after a confirmation; the new key is shown once,
 * with a copy button. Resolves with what to say on the page, or undefined when cancelled.
 */
async function rotateKey(workspace: Workspace, kind: 'public' | 'private'): Promise<HTMLElement | undefined> {
  const { label, use } = KEY_KINDS[kind];
  const environment = workspace.isDefault ? ` The keys from the environment (${kind === 'public' ? 'PUBLIC_API_KEYS' : 'PRIVATE_API_KEYS'}) are settings: they keep working.` : '';
  const ok = await confirmAction(
    `Rotate the ${label} of ${workspace.name}?`,
    `A new ${label} is made and shown once. The current ${label} of ${workspace.name} stops working at once: every client still sending it is refused until it has the new one.${environment}`,
    `Rotate ${label}`,
  );
  if (!ok) return undefined;
  try {
    const rotated = await api<RotatedKey>('POST', `/workspaces/${workspace.workspaceId}/keys`, { kind });
    await openDialog(
      `New ${label} of ${workspace.name}`,
      h(
        'div',
        { class: 'stack' },
        h('p', {}, `It is shown this once: the service keeps only its hash. Copy it now. ${rotated.revokedKeys === 1 ? 'The old key was' : `${rotated.revokedKeys} old keys were`} revoked.`),
        copyable(`${label[0]!.toUpperCase()}${label.slice(1)} (${use})`, rotated.apiKey),
      ),
      [{ label: 'I have copied it', value: '', kind: 'primary' }],
    );
    return notice('info', `Rotated the ${label} of ${workspace.name}`);
  } catch (err) {
    return notice('error', `The ${label} was not rotated`, describeError(err));
  }
}

/** Workspaces (admin key): list, create (keys shown once), edit, rotate keys, delete after confirmation. */
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
    workspacesChanged();
    try {
      const page = await api<Page<Workspace>>('GET', '/workspaces?limit=1000');
      // On a phone: the name and the actions; the table scrolls sideways if even that is too wide.
      const narrow = (column: string) => (['Database', 'Created', 'Retention', 'Properties'].includes(column) ? 'hide-narrow' : null);
      const table = h(
        'table',
        { class: 'data-table workspaces-table' },
        h('thead', {}, h('tr', {}, ...['Name', 'Database', 'Created', 'Retention', 'Properties', ''].map((c) => h('th', { scope: 'col', class: narrow(c) }, c)))),
        h(
          'tbody',
          {},
          ...page.results.map((w) => {
            const editButton = h('button', { type: 'button', class: 'secondary small' }, 'Edit');
            const rotateButtons = (['public', 'private'] as const).map((kind) => {
              const button = h('button', { type: 'button', class: 'secondary small', 'data-rotate': kind }, `Rotate ${KEY_KINDS[kind].label}`);
              button.addEventListener('click', async () => {
                const said = await rotateKey(w, kind);
                if (said) message.replaceChildren(said);
              });
              return button;
            });
            const remove = h('button', { type: 'button', class: 'danger small', disabled: w.isDefault, title: w.isDefault ? 'The default workspace cannot be deleted; make another the default first' : null }, 'Delete');
            editButton.addEventListener('click', () => void edit(w));
            remove.addEventListener('click', async () => {
              const ok = await confirmAction(`Delete ${w.name}?`, `Its keys stop working at once, its webhooks stop, and its database ${w.databaseName} is dropped with every event in it. This cannot be undone.`, 'Delete workspace');
              if (!ok) return;
              try {
                await api('DELETE', `/workspaces/${w.workspaceId}`);
                // The console was acting on it: back to the admin key's own workspace.
                const fallback = page.results.find((other) => other.isDefault);
                if (session()?.workspaceId === w.workspaceId && fallback) return await openWorkspace(fallback);
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
              h('td', { class: 'hide-narrow' }, h('code', {}, w.databaseName)),
              h('td', { class: 'hide-narrow' }, formatTime(w.createdAt)),
              h('td', { class: 'hide-narrow' }, w.retentionDays ? `${w.retentionDays} days` : 'for ever'),
              h('td', { class: 'wrap hide-narrow' }, w.properties ? h('code', {}, JSON.stringify(w.properties)) : '—'),
              h('td', { class: 'actions' }, h('div', { class: 'action-row' }, editButton, remove), h('div', { class: 'action-row' }, ...rotateButtons)),
            );
          }),
        ),
      );
      list.replaceChildren(h('div', { class: 'table-scroll' }, table));
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
