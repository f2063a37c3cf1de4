import { Elysia } from 'elysia';
import { principalOf, rememberPrincipal } from '../http/auth';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { clickhousePrincipal } from './auth';
import { CLICKHOUSE_PATH, ClickHouseQueryString } from './model';
import { StatementAnswer, type StatementAnswerDeps } from './statement-answer';

/** What a page of another origin (allowed by CORS_ORIGINS) may read of an answer: ClickHouse's own headers. */
const EXPOSED_HEADERS = 'X-ClickHouse-Query-Id, X-ClickHouse-Format, X-ClickHouse-Summary, X-ClickHouse-Exception-Code';

export interface ClickHouseRoutesDeps extends StatementAnswerDeps {
  store: WorkspaceStore;
}

/**
 * ClickHouse's HTTP interface over the workspace of the key (docs/api/clickhouse.md): the
 * statement in the `query` parameter or the body, answered in the format it asks for
 * (statement-answer.ts); errors are ClickHouse's text with its code (errors.ts). Left out of the
 * OpenAPI document: it speaks ClickHouse's protocol, not JSON.
 */
export function clickhouseRoutes(deps: ClickHouseRoutesDeps) {
  const statements = new StatementAnswer(deps);
  const hidden = { hide: true } as const;
  const authenticated = {
    query: ClickHouseQueryString,
    detail: hidden,
    transform({ request }: { request: Request }) {
      if (!isHealthCheck(request)) rememberPrincipal(request, clickhousePrincipal(deps.store, request));
    },
  };
  const answer = ({ request, body, set }: { request: Request; body?: unknown; set: { headers: Record<string, string | number> } }) => {
    if (isHealthCheck(request)) return ok();
    if (typeof set.headers['access-control-expose-headers'] === 'string') set.headers['access-control-expose-headers'] += `, ${EXPOSED_HEADERS}`;
    return statements.answer(request, body, principalOf(request)!.workspace.databaseName);
  };
  return new Elysia({ name: 'clickhouse-http', normalize: false })
    .get(CLICKHOUSE_PATH, answer, authenticated)
    .post(CLICKHOUSE_PATH, answer, authenticated)
    .get(`${CLICKHOUSE_PATH}/ping`, ok, { detail: hidden });
}

/** A GET without a statement: ClickHouse answers it as it answers /ping, without a key. */
const isHealthCheck = (request: Request) => request.method !== 'POST' && !new URL(request.url).searchParams.has('query');

const ok = () => new Response('Ok.\n', { headers: { 'content-type': 'text/plain; charset=UTF-8' } });
