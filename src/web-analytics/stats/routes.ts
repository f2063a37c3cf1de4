import { Elysia } from 'elysia';
import { authenticate, rememberPrincipal, workspaceHeaderOf } from '../../http/auth';
import { decodeBody } from '../../http/json-body';
import { HttpProblem } from '../../http/problem';
import type { WorkspaceStore } from '../../workspaces/workspace-store';
import { INVALID_KEY_OR_SITE, MISSING_KEY } from './errors';
import { StatsAnswer, StatsError, StatsQuery } from './model';
import type { StatsApi } from './stats-api';

export const STATS_QUERY_PATH = '/api/v2/query';

/** An answer in Plausible's error shape. */
function plausibleError(status: number, error: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error }), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

/**
 * `POST /api/v2/query`: Plausible's Stats API v2 with a private key as the bearer token (an admin
 * key with X-Workspace-Id acts on that workspace). Every refusal, the key's included, is answered
 * in Plausible's shape, `{ "error": message }`, not as a problem.
 */
export function statsRoutes(store: WorkspaceStore, stats: StatsApi) {
  return new Elysia({ name: 'stats-api', normalize: false }).post(
    STATS_QUERY_PATH,
    async ({ body, request, headers }) => {
      try {
        if (!headers.authorization) return plausibleError(401, MISSING_KEY);
        let principal;
        try {
          principal = authenticate(store, headers.authorization, 'private', workspaceHeaderOf(request));
        } catch (err) {
          if (err instanceof HttpProblem && err.status === 404) return plausibleError(404, err.detail);
          if (err instanceof HttpProblem) return plausibleError(401, INVALID_KEY_OR_SITE);
          throw err;
        }
        rememberPrincipal(request, principal);
        const answer = await stats.query(principal.workspace, decodeBody(body));
        return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
      } catch (err) {
        if (err instanceof HttpProblem) return plausibleError(err.status, err.detail, err.extra.headers);
        throw err;
      }
    },
    {
      response: { 200: StatsAnswer, 400: StatsError, 401: StatsError, 429: StatsError, 503: StatsError },
      detail: {
        tags: ['Web analytics'],
        // The body is checked by the Stats API itself (Plausible's messages), so it is described here.
        requestBody: { required: true, content: { 'application/json': { schema: StatsQuery as never } } },
        summary: "Plausible's Stats API v2",
        description:
          "Plausible's `POST /api/v2/query` over the key's workspace: metrics, dimensions, filters, ordering and pagination as Plausible documents them, answered in its shape. The workspace's events are the site: `site_id` is the workspace's id or one of its `siteDomains` (any, when it lists none). Bots and backend calls are never counted. Errors are Plausible's `{ \"error\": message }`. docs/api/stats.md has what is supported. Request body:\n\n```json\n" +
          JSON.stringify(StatsQuery.examples?.[0] ?? {}, null, 2) +
          '\n```',
      },
    },
  );
}
