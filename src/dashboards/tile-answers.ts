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
  /** Tiles' last answers, current while the workspace's events are unchanged (tile-answer-cache.ts). */
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

/** A tile's answer, when it was asked, and whether it may not be current (a kept answer answered as it is). */
interface Answered {
  result: unknown;
  at: number;
  stale: boolean;
}

/** A tile's statement run now: a saved insight's, or a SQL tile's as `POST /queries` runs it. */
async function ask(workspace: Workspace, kind: InsightKind | 'sql', query: unknown, pointer: string, deps: TileAnswering): Promise<unknown> {
  if (kind !== 'sql') return deps.insights.answer(workspace, kind, query, pointer);
  try {
    const [rows] = await deps.runner.run(workspace.databaseName, [query as string]);
    return { results: rows! };
  } catch (err) {
    throw err instanceof HttpProblem ? repointed(err, '/queries/0', pointer) : err;
  }
}

/**
 * A tile's answer (tile-answer-cache.ts), once the events acknowledged before are loaded (so that
 * `stale` is exact). With `stale`, its last kept answer, marked stale unless it is current.
 * Otherwise an insight's kept answer is used while it is current: never a SQL tile's (a statement
 * may read anything, `now()` included) nor one naming a cohort (whose definition changes while the
 * events do not). Every answer is kept, as the last one, by question and workspace time zone.
 */
async function answerOne(workspace: Workspace, insight: SavedInsightRecord, range: DateRange, pointer: string, deps: TileAnswering, stale: boolean): Promise<Answered> {
  const database = workspace.databaseName;
  const { kind } = insight;
  const query = kind === 'sql' ? insight.query : withDashboardRange(kind, insight.query, range);
  // The workspace's time zone is part of the question: a query naming none is answered in it.
  const question = JSON.stringify([kind, query, workspace.timezone]);
  const reusable = kind !== 'sql' && cohortFilters(query).length === 0;
  await deps.ingested(database);
  if (stale) {
    const last = deps.answers.last(database, question);
    if (last !== undefined) return { result: last.answer, at: last.at, stale: !reusable || deps.answers.current(database, question, Date.now()) === undefined };
  }
  const at = Date.now();
  const current = reusable ? deps.answers.current(database, question, at) : undefined;
  if (current !== undefined) return { result: current.answer, at: current.at, stale: false };
  const version = deps.answers.version(database);
  const result = await ask(workspace, kind, query, pointer, deps);
  deps.answers.keep(database, question, version, result, at);
  return { result, at, stale: false };
}

/**
 * Every tile's answer, in the order of the tiles; a tile that fails answers its problem instead,
 * and the others are not affected. A tile whose saved insight is gone answers 404.
 */
export async function answerTiles(workspace: Workspace, dashboard: DashboardRecord, saved: ReadonlyMap<string, SavedInsightRecord>, deps: TileAnswering, stale = false): Promise<TileResult[]> {
  const answerTile = async (index: number): Promise<TileResult> => {
    const { insightId } = dashboard.tiles[index]!;
    const insight = saved.get(insightId);
    if (!insight) {
      const problem = new HttpProblem(404, 'Not Found', `no saved insight ${insightId}: it was deleted`, { errors: [{ pointer: `/tiles/${index}/insightId`, detail: 'the saved insight was deleted; remove the tile' }] });
      return { insightId, error: problem.toBody() };
    }
    try {
      const answered = await answerOne(workspace, insight, dashboard, `/tiles/${index}/query`, deps, stale);
      return { insightId, kind: insight.kind, result: answered.result, computedAt: new Date(answered.at).toISOString(), ...(stale ? { stale: answered.stale } : {}) };
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
