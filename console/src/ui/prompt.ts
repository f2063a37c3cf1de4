import { h } from '../dom';
import { openDialog } from './dialog';

/**
 * Asks for one line of text (a name) in a dialog; resolves with it trimmed, or undefined when
 * cancelled or left blank. Enter confirms.
 */
export async function promptText(title: string, label: string, initial = '', action = 'Save'): Promise<string | undefined> {
  const input = h('input', { type: 'text', name: 'name', maxlength: 200, autocomplete: 'off', value: initial });
  enterConfirms(input);
  const pending = openDialog(title, h('label', { class: 'field wide' }, h('span', {}, label), input), [
    { label: 'Cancel', value: '' },
    { label: action, value: 'ok', kind: 'primary' },
  ]);
  input.focus();
  input.select();
  const choice = await pending;
  const text = input.value.trim();
  return choice === 'ok' && text ? text : undefined;
}

/**
 * Enter in `field` presses its dialog's primary button (a form's implicit submission would press
 * the first button, Cancel).
 */
export function enterConfirms(field: HTMLElement): void {
  field.addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key !== 'Enter') return;
    e.preventDefault();
    field.closest('form')?.querySelector<HTMLButtonElement>('button.primary')?.click();
  });
}
