import { createHash, timingSafeEqual } from 'node:crypto';

/** What a key may do: public sends events; private reads its workspace; admin also manages workspaces. */
export type KeyKind = 'public' | 'private' | 'admin';

/** What a key grants: a kind, on a workspace (`null`: whichever workspace is the default). */
export interface KeyGrant {
  workspaceId: string | null;
  kind: KeyKind;
}

/** A workspace's key as stored: its hash (hex), never the key. */
export interface KeyRecord {
  keyHash: string;
  workspaceId: string;
  kind: 'public' | 'private';
}

/** Keys whose hashes are remembered, at most. */
const RECENT_HASHES = 10_000;

/** The SHA-256 of a key, as stored and looked up. Keys themselves are never stored. */
export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** A new random key: `pk_` or `sk_` and 32 base64url characters (192 bits). */
export function generateKey(kind: 'public' | 'private'): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `${kind === 'public' ? 'pk' : 'sk'}_${Buffer.from(bytes).toString('base64url')}`;
}

/**
 * Keys by hash, in memory. A key is found by its hash and then compared in constant time, so a
 * lookup reveals nothing about how much of a guess was right.
 */
export class KeyRing {
  private readonly grants = new Map<string, { hash: Buffer; grant: KeyGrant }>();
  /**
   * Hashes of keys recently found, by key: a hash per request was a measurable share of a
   * single-event request. Only keys that were found are kept, so guesses cannot fill it; a
   * revoked key's hash no longer finds a grant.
   */
  private readonly recentHashes = new Map<string, { hash: Buffer; hex: string }>();

  add(hash: Buffer, grant: KeyGrant): void {
    this.grants.set(hash.toString('hex'), { hash, grant });
  }

  find(key: string): KeyGrant | undefined {
    let recent = this.recentHashes.get(key);
    if (!recent) {
      const hash = hashKey(key);
      recent = { hash, hex: hash.toString('hex') };
    }
    const entry = this.grants.get(recent.hex);
    if (!entry || !timingSafeEqual(entry.hash, recent.hash)) return undefined;
    if (this.recentHashes.size >= RECENT_HASHES) this.recentHashes.clear();
    this.recentHashes.set(key, recent);
    return entry.grant;
  }

  /** The keys bound to `workspaceId`, as stored. */
  recordsOf(workspaceId: string): KeyRecord[] {
    const records: KeyRecord[] = [];
    for (const [keyHash, { grant }] of this.grants) {
      if (grant.workspaceId === workspaceId) records.push({ keyHash, workspaceId, kind: grant.kind as KeyRecord['kind'] });
    }
    return records;
  }

  delete(keyHash: string): void {
    this.grants.delete(keyHash);
  }
}
