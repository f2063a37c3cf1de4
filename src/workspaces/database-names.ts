/** How a workspace database name must look (the identifier pattern of `storage.ts`). */
export const DATABASE_NAME_RULE = 'must be 1 to 63 ASCII letters, digits or underscores, not starting with a digit';

const PREFIX = 'ws_';
const MAX_LENGTH = 63;

/** `ws_` and the name's letters and digits in lower case, `_` for the rest: `Acme Inc.` gives `ws_acme_inc`. */
export function databaseNameFor(workspaceName: string): string {
  const slug = workspaceName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (PREFIX + slug).slice(0, MAX_LENGTH).replace(/_+$/, '') || PREFIX.slice(0, -1);
}

/** `base` with a random suffix, still within the length limit, for when `base` is taken. */
export function withRandomSuffix(base: string): string {
  const suffix = '_' + Buffer.from(crypto.getRandomValues(new Uint8Array(4))).toString('hex');
  return base.slice(0, MAX_LENGTH - suffix.length) + suffix;
}
