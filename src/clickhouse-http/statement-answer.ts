import { heldBody } from '../queries/held-answer';
import type { QueryRunner } from '../queries/query-runner';
import type { Storage } from '../storage/storage';
import { Catalog } from './catalog';
import { encodedAnswer } from './compression';
import { asClickHouseError, outside } from './errors';
import { contentTypeOf } from './formats';
import { Introspection } from './introspection';
import { parseRequest } from './request';
import { statementSettings } from './settings';

/** The database clients name when told none: taken as the workspace's own. */
const DEFAULT_DATABASE = 'default';

export interface StatementAnswerDeps {
  runner: QueryRunner;
  storage: Storage;
  /** Resolves once the events of `database` acknowledged before the call are in the engine (read-your-writes). */
  ingested(database: string): Promise<void>;
}

/**
 * One request of the interface answered over `database`: the statement and its format, settings
 * and parameters read from the request, introspection rewritten over the workspace's rows, then
 * run by the query runner (the guard, scheduler, limits and log of POST /queries) and sent as
 * ClickHouse sends it. Failures are thrown in ClickHouse's words (errors.ts).
 */
export class StatementAnswer {
  private readonly introspection: Introspection;

  constructor(private readonly deps: StatementAnswerDeps) {
    this.introspection = new Introspection(new Catalog(deps.storage));
  }

  async answer(request: Request, body: unknown, database: string): Promise<Response> {
    const started = performance.now();
    const hold = this.deps.runner.resultHold();
    try {
      const asked = parseRequest(request, body);
      if (asked.database !== undefined && asked.database !== database && asked.database !== DEFAULT_DATABASE) throw outside(asked.database);
      const { settings, maxResultBytes } = statementSettings(asked.settings, this.deps.runner.limits);
      await this.deps.ingested(database);
      const { statement, params } = await this.introspection.rewrite(asked.statement, { database, settings });
      const chunks = await this.deps.runner.answer(database, statement, { format: asked.format, params: { ...asked.params, ...params }, settings, maxResultBytes }, hold);
      const { body: answered, encoding } = await encodedAnswer(chunks, asked.compress, request.headers.get('accept-encoding'));
      // Also when the client goes before its answer is begun.
      request.signal.addEventListener('abort', () => hold.release(), { once: true });
      return new Response(heldBody(answered, hold), {
        headers: {
          'content-type': contentTypeOf(asked.format),
          'x-clickhouse-query-id': asked.queryId,
          'x-clickhouse-format': asked.format,
          'x-clickhouse-summary': summary(chunks, started),
          ...(encoding ? { 'content-encoding': encoding } : {}),
        },
      });
    } catch (err) {
      hold.release();
      throw asClickHouseError(err);
    }
  }
}

/** What the service knows of the statement: the bytes it answered and the time; the rows read are the engine's to count. */
function summary(chunks: readonly Uint8Array[], started: number): string {
  return JSON.stringify({
    read_rows: '0',
    read_bytes: '0',
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: '0',
    result_bytes: String(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)),
    elapsed_ns: String(Math.round((performance.now() - started) * 1e6)),
  });
}
