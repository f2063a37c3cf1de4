import { h } from '../dom';

/**
 * A modal <dialog>: focus stays inside, Escape closes it, and it is removed from the page when
 * closed. Resolves with the button pressed (its value) or '' when dismissed.
 */
export function openDialog(title: string, body: Node, buttons: Array<{ label: string; value: string; kind?: 'primary' | 'danger' }> = [{ label: 'Close', value: '' }]): Promise<string> {
  const dialog = h('dialog', { class: 'dialog', 'aria-label': title });
  const form = h('form', { method: 'dialog' });
  const footer = h('footer', { class: 'dialog-buttons' });
  for (const b of buttons) footer.append(h('button', { value: b.value, class: b.kind ?? 'secondary' }, b.label));
  form.append(h('header', { class: 'dialog-title' }, h('h2', {}, title)), h('div', { class: 'dialog-body' }, body), footer);
  dialog.append(form);
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue);
    });
  });
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export async function confirmAction(title: string, message: string, action: string): Promise<boolean> {
  return (await openDialog(title, h('p', {}, message), [
    { label: 'Cancel', value: '' },
    { label: action, value: 'yes', kind: 'danger' },
  ])) === 'yes';
}
