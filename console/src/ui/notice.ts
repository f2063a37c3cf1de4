import { h } from '../dom';

/** A message in place of content: empty states and errors read as sentences, not codes. */
export function notice(kind: 'empty' | 'error' | 'info', title: string, detail?: string): HTMLElement {
  return h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, h('strong', {}, title), detail ? h('p', {}, detail) : null);
}
