import { createHash } from 'node:crypto';

/**
 * Plausible's cookieless visitor: a hash of the day's salt, the site (its workspace), the client
 * address and the user agent. The same browser on the same address is one visitor all day, and
 * a new one the next; without the salt, deleted after its day, the id cannot be traced back to
 * an address. 128 bits of SHA-256, in hex.
 */
export function visitorId(salt: string, workspaceId: string, address: string, userAgent: string): string {
  return createHash('sha256').update(salt).update('\n').update(workspaceId).update('\n').update(address).update('\n').update(userAgent).digest('hex').slice(0, 32);
}
