import { api } from '../api';
import { h } from '../dom';
import type { KeyIdentity } from '../types';

/** The workspace's time zone, read again (it may have been changed since signing in); UTC when unread. */
export async function workspaceZone(): Promise<string> {
  try {
    return (await api<KeyIdentity>('GET', '/whoami')).workspace.timezone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** "Times in Europe/Paris": which zone a page's dates and periods are in. */
export function zoneNote(zone: string): HTMLElement {
  return h('span', { class: 'zone-note muted', 'data-timezone': zone, title: 'Days, weeks and months start in this time zone' }, `Times in ${zone}`);
}
