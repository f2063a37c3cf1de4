import type { KeyIdentity } from './types';

/**
 * The signed-in key. It lives in sessionStorage (gone with the tab), travels only in the
 * Authorization header, and is never put in a URL, a log or localStorage.
 */
const KEY_ITEM = 'console.key';

export interface Session {
  key: string;
  identity: KeyIdentity;
}

let current: Session | undefined;
const listeners: Array<(reason: string | undefined) => void> = [];

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function signIn(session: Session): void {
  sessionStorage.setItem(KEY_ITEM, session.key);
  current = session;
}

export function session(): Session | undefined {
  return current;
}

/** Forgets the key; `reason` is shown on the sign-in page (undefined: the user signed out). */
export function signOut(reason?: string): void {
  sessionStorage.removeItem(KEY_ITEM);
  const wasSignedIn = current !== undefined;
  current = undefined;
  if (wasSignedIn) for (const listener of listeners) listener(reason);
}

export function onSignOut(listener: (reason: string | undefined) => void): void {
  listeners.push(listener);
}
