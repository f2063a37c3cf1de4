import { problemOf, requestWith } from '../api';
import { h } from '../dom';
import { signIn } from '../session';
import type { KeyIdentity } from '../types';
import { notice } from '../ui/notice';

/** Why a key was not accepted, in words a person can act on. */
function refusal(status: number): string {
  if (status === 401) return 'The service does not know this key. Check that it was copied whole, or ask an admin for a private key.';
  if (status === 403) return 'This is a public key: it can only send events. Sign in with a private key, or an admin key to manage workspaces.';
  if (status === 429 || status === 503) return 'The service is busy. Try again in a moment.';
  return `The service answered ${status}.`;
}

/** Checks a key with GET /whoami and signs in with it; resolves once signed in. */
export function signInView(root: HTMLElement, reason: string | undefined, signedIn: () => void): void {
  const input = h('input', { type: 'password', id: 'key', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'sk_… or your admin key', 'aria-describedby': 'key-help' });
  const message = h('div', { class: 'sign-in-message', 'aria-live': 'polite' }, reason ? notice('error', 'Signed out', reason) : null);
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in-card' },
    h('div', { class: 'brand brand-large' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'Event analytics'),
    h('h1', {}, 'Sign in with a key'),
    h('label', { for: 'key' }, 'Private or admin key'),
    input,
    h('p', { id: 'key-help', class: 'help' }, 'The key stays in this tab only (session storage) and is sent as an Authorization header. A private key opens its workspace; an admin key also manages workspaces.'),
    message,
    button,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    button.disabled = true;
    button.textContent = 'Checking…';
    message.replaceChildren();
    try {
      const res = await requestWith(key, 'GET', '/whoami');
      if (!res.ok) {
        const problem = await problemOf(res);
        message.replaceChildren(notice('error', 'That key does not open the console', refusal(problem.status)));
        input.select();
        return;
      }
      signIn({ key, identity: (await res.json()) as KeyIdentity });
      signedIn();
    } catch (err) {
      message.replaceChildren(notice('error', 'The service could not be reached', (err as Error).message));
    } finally {
      button.disabled = false;
      button.textContent = 'Sign in';
    }
  });
  root.replaceChildren(h('main', { class: 'sign-in' }, form));
  input.focus();
}
