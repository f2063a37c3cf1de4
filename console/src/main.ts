import './styles.css';
import { requestWith } from './api';
import { onSignOut, onSwitch, signIn, signOut, storedKey, storedWorkspace } from './session';
import type { KeyIdentity } from './types';
import { shell } from './views/shell';
import { signInView } from './views/sign-in';

const root = document.getElementById('app')!;
let stopShell: (() => void) | undefined;

function showConsole(): void {
  stopShell = shell(root);
}

function showSignIn(reason?: string): void {
  stopShell?.();
  stopShell = undefined;
  signInView(root, reason, showConsole);
}

onSignOut(showSignIn);
// Another workspace chosen in the switcher: the console is drawn again for it.
onSwitch(() => {
  stopShell?.();
  showConsole();
});

/**
 * A key kept from earlier in this tab is checked again: it may have been revoked since. An admin
 * key reopens the workspace it was acting on, or its own when that one is gone (404).
 */
async function start(): Promise<void> {
  const key = storedKey();
  if (!key) return showSignIn();
  try {
    let workspaceId = storedWorkspace() ?? undefined;
    let res = await requestWith({ key, workspaceId }, 'GET', '/whoami');
    if (res.status === 404 && workspaceId) {
      workspaceId = undefined;
      res = await requestWith(key, 'GET', '/whoami');
    }
    if (!res.ok) {
      signOut();
      return showSignIn(res.status === 401 ? 'Your key is no longer valid: it was revoked or its workspace was deleted.' : undefined);
    }
    signIn({ key, identity: (await res.json()) as KeyIdentity, workspaceId });
    showConsole();
  } catch {
    showSignIn('The service could not be reached. Check that it is running, then sign in again.');
  }
}

void start();
