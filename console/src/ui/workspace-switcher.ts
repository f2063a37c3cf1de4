import { api, describeError, problemOf, requestWith, type Credentials } from '../api';
import { h } from '../dom';
import { session, switchSession } from '../session';
import type { KeyIdentity, Page, Workspace } from '../types';
import { openDialog } from './dialog';
import { notice } from './notice';

/** Reads the list of the switcher on the page again; the Workspaces page calls it after a change. */
let reloadSwitcher: (() => void) | undefined;
export function workspacesChanged(): void {
  reloadSwitcher?.();
}

async function identityOf(credentials: Credentials): Promise<KeyIdentity> {
  const res = await requestWith(credentials, 'GET', '/whoami');
  if (!res.ok) throw await problemOf(res);
  return (await res.json()) as KeyIdentity;
}

/**
 * Continues with the signed-in admin key on `target`: its own (default) workspace without
 * X-Workspace-Id, any other with it. No other key is asked for or kept.
 */
export async function openWorkspace(target: Pick<Workspace, 'workspaceId' | 'isDefault'>): Promise<void> {
  const { key } = session()!;
  const credentials: Credentials = target.isDefault ? { key } : { key, workspaceId: target.workspaceId };
  switchSession({ ...credentials, identity: await identityOf(credentials) });
}

/**
 * The workspace switcher of the top bar, for an admin key: every workspace. The admin key acts on
 * the one chosen through the X-Workspace-Id header, as that workspace's private key would; the
 * default workspace is the key's own. Null for a private key, which opens one workspace only.
 */
export function workspaceSwitcher(): HTMLElement | null {
  const current = session()!;
  if (current.identity.kind !== 'admin') return null;
  const currentId = current.identity.workspace.workspaceId;
  const select = h('select', { class: 'workspace-switcher', 'aria-label': 'Switch workspace' }, h('option', { value: currentId }, current.identity.workspace.name));
  let workspaces: Workspace[] = [];
  const load = () =>
    api<Page<Workspace>>('GET', '/workspaces?limit=1000')
      .then((page) => {
        workspaces = page.results;
        select.replaceChildren(...workspaces.map((w) => h('option', { value: w.workspaceId, selected: w.workspaceId === currentId }, `${w.name}${w.isDefault ? ' (default)' : ''}`)));
      })
      .catch(() => (select.disabled = true));
  reloadSwitcher = () => void load();
  void load();
  select.addEventListener('change', async () => {
    const target = workspaces.find((w) => w.workspaceId === select.value);
    if (!target) return void (select.value = currentId);
    try {
      await openWorkspace(target);
    } catch (err) {
      select.value = currentId;
      await openDialog('The workspace could not be opened', notice('error', 'Not switched', describeError(err)));
    }
  });
  return select;
}
