import type { WorkspaceStore } from '../workspaces/workspace-store';
import { BEARER } from './auth';
import { BASIC } from './collection-auth';
import { pathOf } from './url-path';

export interface BodyCallerOptions {
  /** Paths whose POST sends events: any key, or none (a public key in the body or query string). */
  collectionPaths: ReadonlySet<string>;
  /** Paths that take no key at all (Plausible's events): every request may send its body. */
  keylessPaths: ReadonlySet<string>;
}

/**
 * The keys a request carries, in every way a route takes one: `Authorization` (Bearer, or Basic
 * with the key as user name or password, as Segment's and ClickHouse's clients send it),
 * `X-ClickHouse-Key`, and ClickHouse's `password` parameter.
 */
function sentKeys(request: Request): string[] {
  const keys: string[] = [];
  const authorization = request.headers.get('authorization');
  const bearer = authorization === null ? null : BEARER.exec(authorization);
  const basic = authorization === null ? null : BASIC.exec(authorization);
  if (bearer) keys.push(bearer[1]!);
  if (basic) {
    const credentials = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = credentials.indexOf(':');
    keys.push(colon < 0 ? credentials : credentials.slice(0, colon), credentials.slice(colon + 1));
  }
  const header = request.headers.get('x-clickhouse-key');
  if (header !== null) keys.push(header);
  const query = request.url.indexOf('?');
  const password = query < 0 ? null : new URLSearchParams(request.url.slice(query + 1)).get('password');
  if (password !== null) keys.push(password);
  return keys.filter((key) => key !== '');
}

/**
 * Whether a request's body may be read (and hold memory), decided before any of it is: when it
 * sends a key a route could take (a public one on a collection path only), or none on a path that
 * takes a key in the body or none. A request refused here is one its route refuses (401 or 403)
 * whatever its body holds: a wrong key or a keyless call to a private route never holds memory.
 */
export function bodyCaller(store: WorkspaceStore, options: BodyCallerOptions): (request: Request) => boolean {
  return (request) => {
    const path = pathOf(request.url);
    if (options.keylessPaths.has(path)) return true;
    const collection = options.collectionPaths.has(path);
    const keys = sentKeys(request);
    if (keys.length === 0) return collection;
    return keys.some((key) => {
      const kind = store.resolve(key)?.kind;
      return kind !== undefined && (collection || kind !== 'public');
    });
  };
}
