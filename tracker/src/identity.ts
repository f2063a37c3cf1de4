import { randomId } from './ids';

const ANONYMOUS_ID = 'ea_aid';
const USER_ID = 'ea_uid';

/** Who the visitor is: an anonymousId, and a userId once the page identified them. */
export interface Identity {
  anonymousId: string;
  userId?: string;
  identify(userId: string): void;
}

/**
 * The visitor's ids, kept in localStorage (never cookies: nothing goes to any server but in the
 * calls). Cookieless, or where storage is refused, they live as long as the page does.
 */
export function loadIdentity(cookieless: boolean): Identity {
  let storage: Storage | undefined;
  try {
    storage = cookieless ? undefined : localStorage;
  } catch {
    // Storage blocked by the browser's settings: keep the ids in memory.
  }
  const anonymousId = storage?.getItem(ANONYMOUS_ID) || randomId();
  storage?.setItem(ANONYMOUS_ID, anonymousId);
  const identity: Identity = {
    anonymousId,
    userId: storage?.getItem(USER_ID) || undefined,
    identify(userId) {
      identity.userId = userId;
      storage?.setItem(USER_ID, userId);
    },
  };
  return identity;
}
