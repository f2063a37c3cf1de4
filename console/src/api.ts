import { session, signOut } from './session';

/** A problem document (RFC 9457) as the service answers every error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: Array<{ pointer?: string; parameter?: string; detail: string }>;
}

/** An answer other than 2xx, with the service's problem document. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly problem: Problem,
    readonly retryAfter: number | undefined,
  ) {
    super(problem.detail || problem.title);
  }

  get status(): number {
    return this.problem.status;
  }
}

/** What the sign-in page says when a key stops working mid-session (its workspace deleted). */
export const REVOKED = 'Your key is no longer valid: it was revoked or its workspace was deleted. Sign in with another key.';

/** The problem of a failed answer; a body that is not a problem document still gives a readable one. */
export async function problemOf(res: Response): Promise<ApiError> {
  let problem: Problem;
  try {
    problem = (await res.json()) as Problem;
  } catch {
    problem = { type: 'about:blank', title: res.statusText || 'Error', status: res.status, detail: `the service answered ${res.status}` };
  }
  const retryAfter = Number(res.headers.get('retry-after'));
  return new ApiError(problem, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
}

/** A key, and for an admin key the workspace it acts on (sent as X-Workspace-Id; the id is no secret). */
export interface Credentials {
  key: string;
  workspaceId?: string;
}

/** A request with explicit credentials (sign-in checks a key before it is the session's). */
export async function requestWith(credentials: string | Credentials, method: string, path: string, init: RequestInit = {}): Promise<Response> {
  const { key, workspaceId } = typeof credentials === 'string' ? { key: credentials, workspaceId: undefined } : credentials;
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  if (workspaceId) headers.set('x-workspace-id', workspaceId);
  return fetch(path, { ...init, method, headers, cache: 'no-store' });
}

/**
 * A JSON request with the session's key. A 401 means the key stopped working: the session ends
 * and the console returns to the sign-in page.
 */
export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const current = session();
  if (!current) throw new ApiError({ type: 'about:blank', title: 'Signed out', status: 401, detail: 'sign in first' }, undefined);
  const init: RequestInit = { signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (body !== undefined) init.headers = { 'content-type': 'application/json' };
  const res = await requestWith(current, method, path, init);
  if (res.status === 401) signOut(REVOKED);
  if (!res.ok) throw await problemOf(res);
  return (await res.json()) as T;
}

/** A readable sentence for any failure: the problem's detail and its field errors, or the network error. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    const detail = err.problem.detail || err.problem.title;
    // A field's entry often repeats the detail (a failed statement): only what it adds is shown.
    const fields = (err.problem.errors ?? []).filter((e) => !detail.includes(e.detail)).map((e) => `${e.parameter ?? e.pointer ?? ''} ${e.detail}`.trim());
    return [detail, ...fields].join('\n');
  }
  if (err instanceof DOMException && err.name === 'AbortError') return 'cancelled';
  return `The service could not be reached (${(err as Error).message}).`;
}
