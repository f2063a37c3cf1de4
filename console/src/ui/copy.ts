import { h } from '../dom';

/** A value shown once (a key, a secret) with a button that copies it. */
export function copyable(label: string, value: string): HTMLElement {
  const button = h('button', { type: 'button', class: 'secondary small' }, 'Copy');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = 'Copied';
    } catch {
      // Clipboard access can be refused (an insecure origin): select the text for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      button.textContent = 'Press Ctrl+C';
    }
  });
  const code = h('code', { class: 'secret' }, value);
  return h('div', { class: 'copyable' }, h('span', { class: 'copyable-label' }, label), code, button);
}
