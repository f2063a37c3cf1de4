import type { KeyIdentity } from './types';

/**
 * The signed-in key. It lives in sessionStorage (gone with the tab), travels only in the
 * Authorization header, and is never put in a URL, a log or localStorage.
 */
const KEY_ITEM = 'console.key';

export interface Session {
  key: string;
  identity: KeyIdentity;
  /**
   * The workspace an admin key acts on (sent as X-Workspace-Id); absent: the key's own (the
   * default workspace, for an admin key).
   */
  workspaceId?: string;
}

let current: Session | undefined;
const listeners: Array<(reason: string | undefined) => void> = [];

/** The workspace an admin key acts on, to open it again after a reload. Not secret: an id. */
const WORKSPACE_ITEM = 'console.workspace';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

/** The workspace an admin key acted on before a reload, if any. */
export function storedWorkspace(): string | null {
  return sessionStorage.getItem(WORKSPACE_ITEM);
}

export function signIn(session: Session): void {
  sessionStorage.setItem(KEY_ITEM, session.key);
  if (session.workspaceId) sessionStorage.setItem(WORKSPACE_ITEM, session.workspaceId);
  else sessionStorage.removeItem(WORKSPACE_ITEM);
  current = session;
}

export function session(): Session | undefined {
  return current;
}

const switchListeners: Array<() => void> = [];

/**
 * Continues in another workspace without signing out (the workspace switcher: the same admin
 * key, another X-Workspace-Id). Listeners redraw.
 */
export function switchSession(next: Session): void {
  signIn(next);
  for (const listener of switchListeners) listener();
}

export function onSwitch(listener: () => void): void {
  switchListeners.push(listener);
}

/** Forgets the key; `reason` is shown on the sign-in page (undefined: the user signed out). */
export function signOut(reason?: string): void {
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(WORKSPACE_ITEM);
  const wasSignedIn = current !== undefined;
  current = undefined;
  if (wasSignedIn) for (const listener of listeners) listener(reason);
}

export function onSignOut(listener: (reason: string | undefined) => void): void {
  listeners.push(listener);
}
