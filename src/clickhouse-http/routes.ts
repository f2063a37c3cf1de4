import { Elysia } from 'elysia';
import { rememberPrincipal, principalOf } from '../http/auth';
import type { QueryRunner } from '../queries/query-runner';
import type { Storage } from '../storage/storage';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { clickhousePrincipal } from './auth';
import { Catalog } from './catalog';
import { encodedAnswer } from './compression';
import { asClickHouseError, outside } from './errors';
import { contentTypeOf } from './formats';
import { Introspection } from './introspection';
import { CLICKHOUSE_PATH, ClickHouseQueryString } from './model';
import { parseRequest } from './request';
import { statementSettings } from './settings';

/** The database clients name when told none: taken as the workspace's own. */
const DEFAULT_DATABASE = 'default';

/** What a page of another origin (allowed by CORS_ORIGINS) may read of an answer: ClickHouse's own headers. */
const EXPOSED_HEADERS = 'X-ClickHouse-Query-Id, X-ClickHouse-Format, X-ClickHouse-Summary, X-ClickHouse-Exception-Code';

export interface ClickHouseRoutesDeps {
  store: WorkspaceStore;
  runner: QueryRunner;
  storage: Storage;
  /** Resolves once the events of `database` acknowledged before the call are in the engine (read-your-writes). */
  ingested(database: string): Promise<void>;
}

/**
 * ClickHouse's HTTP interface over the workspace of the key: the statement in the `query`
 * parameter or the body, answered in the format it asks for. Each statement goes through the same
 * guard, scheduler, limits and log as POST /queries (QueryRunner.answer); errors are ClickHouse's
 * text with its code (errors.ts).
 */
export function clickhouseRoutes(deps: ClickHouseRoutesDeps) {
  const introspection = new Introspection(new Catalog(deps.storage));
  const hidden = { hide: true } as const;

  async function answer(request: Request, body: unknown, headers: Record<string, string | number>): Promise<Response> {
    const started = performance.now();
    const database = principalOf(request)!.workspace.databaseName;
    try {
      const asked = parseRequest(request, body);
      if (asked.database !== undefined && asked.database !== database && asked.database !== DEFAULT_DATABASE) throw outside(asked.database);
      const { settings, maxResultBytes } = statementSettings(asked.settings, deps.runner.limits);
      await deps.ingested(database);
      const { statement, params } = await introspection.rewrite(asked.statement, { database, settings });
      const chunks = await deps.runner.answer(database, statement, { format: asked.format, params: { ...asked.params, ...params }, settings, maxResultBytes });
      const { body: answered, encoding } = await encodedAnswer(chunks, asked.compress, request.headers.get('accept-encoding'));
      const resultBytes = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
      if (typeof headers['access-control-expose-headers'] === 'string') headers['access-control-expose-headers'] += `, ${EXPOSED_HEADERS}`;
      return new Response(answered, {
        headers: {
          'content-type': contentTypeOf(asked.format),
          'x-clickhouse-query-id': asked.queryId,
          'x-clickhouse-format': asked.format,
          // What the service knows of the statement: the rows it read are the engine's to count.
          'x-clickhouse-summary': JSON.stringify({
            read_rows: '0',
            read_bytes: '0',
            written_rows: '0',
            written_bytes: '0',
            total_rows_to_read: '0',
            result_rows: '0',
            result_bytes: String(resultBytes),
            elapsed_ns: String(Math.round((performance.now() - started) * 1e6)),
          }),
          ...(encoding ? { 'content-encoding': encoding } : {}),
        },
      });
    } catch (err) {
      throw asClickHouseError(err);
    }
  }

  const authenticated = {
    query: ClickHouseQueryString,
    detail: hidden,
    transform({ request }: { request: Request }) {
      if (!isHealthCheck(request)) rememberPrincipal(request, clickhousePrincipal(deps.store, request));
    },
  };
  return new Elysia({ name: 'clickhouse-http', normalize: false })
    .get(CLICKHOUSE_PATH, ({ request, set }) => (isHealthCheck(request) ? ok() : answer(request, undefined, set.headers)), authenticated)
    .post(CLICKHOUSE_PATH, ({ request, body, set }) => answer(request, body, set.headers), authenticated)
    .get(`${CLICKHOUSE_PATH}/ping`, ok, { detail: hidden });
}

/** A GET without a statement: ClickHouse answers it as it answers /ping, without a key. */
const isHealthCheck = (request: Request) => request.method !== 'POST' && !new URL(request.url).searchParams.has('query');

const ok = () => new Response('Ok.\n', { headers: { 'content-type': 'text/plain; charset=UTF-8' } });
