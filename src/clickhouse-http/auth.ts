import { authorize, WORKSPACE_HEADER, workspaceHeaderOf } from '../http/auth';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import { clickhouseError } from './errors';

/** The ways a ClickHouse client sends its credentials, as ClickHouse names them in its errors. */
const BY_HEADERS = 'X-ClickHouse HTTP headers';
const BY_AUTHORIZATION = 'Authorization HTTP header';
const BY_PARAMETERS = 'authentication via parameters';

const failed = (message: string) => clickhouseError('AUTHENTICATION_FAILED', message);

/**
 * The key a ClickHouse client sent as its password: in X-ClickHouse-Key, in HTTP Basic, in the
 * `password` parameter, or (this service's own way) as `Authorization: Bearer <key>`. As
 * ClickHouse does, two ways at once are refused. The user name is not needed: the key names the
 * workspace, so any user (`default`, the workspace's database) is taken.
 */
function sentKey(request: Request, search: URLSearchParams): string {
  const headerKey = request.headers.get('x-clickhouse-key');
  const authorization = request.headers.get('authorization');
  const paramKey = search.get('password');
  const ways = [
    headerKey !== null || request.headers.has('x-clickhouse-user') ? BY_HEADERS : undefined,
    authorization !== null ? BY_AUTHORIZATION : undefined,
    paramKey !== null || search.has('user') ? BY_PARAMETERS : undefined,
  ].filter((way) => way !== undefined);
  if (ways.length > 1) throw failed(`Invalid authentication: it is not allowed to use ${ways[0]} and ${ways[1]} simultaneously`);
  if (authorization !== null) {
    const [scheme = '', credentials = ''] = authorization.trim().split(/ +/, 2);
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      return decoded.slice(decoded.indexOf(':') + 1);
    }
    if (/^bearer$/i.test(scheme)) return credentials;
    throw failed(`Invalid authentication: '${scheme}' HTTP Authorization scheme is not supported`);
  }
  return headerKey ?? paramKey ?? '';
}

/**
 * The caller of a request of the interface: its key must be a private (or admin) key, whose
 * workspace the statements read (an admin key's may be chosen with X-Workspace-Id).
 * AUTHENTICATION_FAILED for no key or an unknown one, ACCESS_DENIED for a public key or a
 * non-admin key with X-Workspace-Id, UNKNOWN_DATABASE for an X-Workspace-Id of no workspace.
 */
export function clickhousePrincipal(store: WorkspaceStore, request: Request): Principal {
  const key = sentKey(request, new URL(request.url).searchParams);
  if (key === '') throw failed("Authentication failed: the password must be a workspace's private key (HTTP Basic, X-ClickHouse-Key or the password parameter)");
  const workspaceId = workspaceHeaderOf(request);
  try {
    return authorize(store, key, 'private', workspaceId);
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401) throw failed("Authentication failed: the password is not a key of any workspace");
    if (status === 403 && workspaceId !== null) throw clickhouseError('ACCESS_DENIED', `only an admin key may choose a workspace with ${WORKSPACE_HEADER}`);
    if (status === 403) throw clickhouseError('ACCESS_DENIED', 'a public key cannot read: the password must be a private key of the workspace');
    if (status === 404) throw clickhouseError('UNKNOWN_DATABASE', `no workspace ${JSON.stringify(workspaceId)} (the ${WORKSPACE_HEADER} header)`);
    throw err;
  }
}
