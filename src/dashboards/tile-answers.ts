import type { TObject } from '@sinclair/typebox';
import { problemOf } from '../http/error-mapper';
import { HttpProblem } from '../http/problem';
import { cohortFilters, KINDS } from '../insights/insights';
import type { InsightAnswerer, InsightKind } from '../insights/kinds';
import type { Logger } from '../log';
import type { QueryRunner } from '../queries/query-runner';
import type { Workspace } from '../workspaces/model';
import type { TileResult } from './model';
import type { TileAnswerCache } from './tile-answer-cache';
import type { DashboardRecord, SavedInsightRecord } from './records';

/**
 * Tiles answered at once, at most: they queue in the runner behind the workspace's own
 * statements (QUERY_WORKSPACE_CONCURRENCY run), and a dashboard of 50 must not fill its queue.
 */
const TILES_AT_ONCE = 4;

/** Where a dashboard's tiles get their answers. */
export interface TileAnswering {
  insights: InsightAnswerer;
  /** SQL tiles run as `POST /queries` runs a statement: guarded, on the same scheduler and limits. */
  runner: QueryRunner;
  /** Resolves once the events acknowledged so far are loaded into a database (read-your-writes). */
  ingested(database: string): Promise<void>;
  /** Insight tiles' answers kept while the workspace's events are unchanged. */
  answers: TileAnswerCache;
  log: Logger;
}

type DateRange = Pick<DashboardRecord, 'dateFrom' | 'dateTo'>;

/**
 * A saved query with the dashboard's date range in place of its own: when the dashboard has a
 * `dateFrom`, the tile's `dateFrom` and `dateTo` are both replaced (without the dashboard's
 * `dateTo`, the range runs to now), each only where the kind takes it.
 */
export function withDashboardRange(kind: InsightKind, query: unknown, range: DateRange): unknown {
  if (range.dateFrom === undefined) return query;
  if (query === null || typeof query !== 'object' || Array.isArray(query)) return query;
  const takes = (KINDS[kind].schema as TObject).properties;
  const { dateFrom: _from, dateTo: _to, ...rest } = query as Record<string, unknown>;
  return {
    ...rest,
    ...('dateFrom' in takes ? { dateFrom: range.dateFrom } : {}),
    ...('dateTo' in takes && range.dateTo !== undefined ? { dateTo: range.dateTo } : {}),
  };
}

/** `problem` with the pointers under `from` moved under `to` (a statement of POST /queries is a tile's query here). */
function repointed(problem: HttpProblem, from: string, to: string): HttpProblem {
  const errors = problem.extra.errors?.map((e) => (e.pointer?.startsWith(from) ? { ...e, pointer: to + e.pointer.slice(from.length) } : e));
  return new HttpProblem(problem.status, problem.title, problem.detail, { ...problem.extra, ...(errors ? { errors } : {}) });
}

/**
 * An insight tile's answer, kept (tile-answer-cache.ts) unless the query names a cohort, whose
 * definition may change while the events do not; kept by question and workspace time zone. The events acknowledged before are loaded first,
 * so a kept answer is as fresh as one asked now.
 */
async function answerInsight(workspace: Workspace, kind: InsightKind, query: unknown, pointer: string, deps: TileAnswering): Promise<unknown> {
  const database = workspace.databaseName;
  if (cohortFilters(query).length > 0) return deps.insights.answer(workspace, kind, query, pointer);
  await deps.ingested(database);
  // The workspace's time zone is part of the question: a query naming none is answered in it.
  const question = JSON.stringify([kind, query, workspace.timezone]);
  const version = deps.answers.version(database);
  const kept = deps.answers.get(database, question, Date.now());
  if (kept !== undefined) return kept;
  const answer = await deps.insights.answer(workspace, kind, query, pointer);
  deps.answers.keep(database, question, version, answer, Date.now());
  return answer;
}

async function answerOne(workspace: Workspace, insight: SavedInsightRecord, range: DateRange, pointer: string, deps: TileAnswering): Promise<unknown> {
  if (insight.kind !== 'sql') return answerInsight(workspace, insight.kind, withDashboardRange(insight.kind, insight.query, range), pointer, deps);
  await deps.ingested(workspace.databaseName);
  try {
    const [rows] = await deps.runner.run(workspace.databaseName, [insight.query as string]);
    return { results: rows! };
  } catch (err) {
    throw err instanceof HttpProblem ? repointed(err, '/queries/0', pointer) : err;
  }
}

/**
 * Every tile's answer, in the order of the tiles; a tile that fails answers its problem instead,
 * and the others are not affected. A tile whose saved insight is gone answers 404.
 */
export async function answerTiles(workspace: Workspace, dashboard: DashboardRecord, saved: ReadonlyMap<string, SavedInsightRecord>, deps: TileAnswering): Promise<TileResult[]> {
  const answerTile = async (index: number): Promise<TileResult> => {
    const { insightId } = dashboard.tiles[index]!;
    const insight = saved.get(insightId);
    if (!insight) {
      const problem = new HttpProblem(404, 'Not Found', `no saved insight ${insightId}: it was deleted`, { errors: [{ pointer: `/tiles/${index}/insightId`, detail: 'the saved insight was deleted; remove the tile' }] });
      return { insightId, error: problem.toBody() };
    }
    try {
      return { insightId, kind: insight.kind, result: await answerOne(workspace, insight, dashboard, `/tiles/${index}/query`, deps) };
    } catch (err) {
      return { insightId, kind: insight.kind, error: problemOf(err, deps.log, { dashboardId: dashboard.id, tile: index }).toBody() };
    }
  };
  const results: TileResult[] = new Array(dashboard.tiles.length);
  let next = 0;
  const worker = async () => {
    while (next < results.length) {
      const index = next++;
      results[index] = await answerTile(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(TILES_AT_ONCE, results.length) }, worker));
  return results;
}
