import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Cohorts } from '../cohorts/cohorts';
import type { Filter } from '../filters/model';
import { invalidInput } from '../http/problem';
import type { QueryRunner } from '../queries/query-runner';
import { SqlParams } from '../sql-params';
import type { Workspace } from '../workspaces/model';
import { ACTORS, type ActorKind } from './actor-kinds';
import { actorNamesOf, namesOfRow } from './actor-names';
import { pagedActors, type ActorsPage } from './actors';
import type { CompileContext, CompiledInsight } from './compile-context';
import { inlineParameters } from './explain';
import { compileFunnels } from './funnels';
import type { InsightAnswerer, InsightKind } from './kinds';
import { compileLifecycle } from './lifecycle';
import { FunnelsQuery, LifecycleQuery, PathsQuery, RetentionQuery, StickinessQuery, TrendsQuery } from './model';
import { compilePaths } from './paths';
import { compileRetention } from './retention';
import { compileStickiness } from './stickiness';
import { compileTrends } from './trends';

interface Kind {
  schema: TSchema;
  compile(query: never, context: CompileContext): CompiledInsight;
}

/** Each insight's request schema and compiler. */
export const KINDS: Record<InsightKind, Kind> = {
  trends: { schema: TrendsQuery, compile: compileTrends },
  funnels: { schema: FunnelsQuery, compile: compileFunnels },
  retention: { schema: RetentionQuery, compile: compileRetention },
  paths: { schema: PathsQuery, compile: compilePaths },
  stickiness: { schema: StickinessQuery, compile: compileStickiness },
  lifecycle: { schema: LifecycleQuery, compile: compileLifecycle },
};

/** Problems of a body reported at most, as the routes report them. */
const MAX_REPORTED = 20;

/** Every cohort filter anywhere in a request (top-level filters, a series', a step's). */
export function cohortFilters(value: unknown, found: Filter[] = []): Filter[] {
  if (Array.isArray(value)) for (const v of value) cohortFilters(v, found);
  else if (value !== null && typeof value === 'object') {
    if (typeof (value as { cohort?: unknown }).cohort === 'string') found.push(value as Filter);
    else for (const v of Object.values(value)) cohortFilters(v, found);
  }
  return found;
}

/**
 * `query` (checked already) in the workspace's time zone when it names none: PostHog counts an
 * insight's days in the project's zone unless the request says otherwise.
 */
function inWorkspaceZone(query: unknown, workspace: Workspace): unknown {
  if (query === null || typeof query !== 'object' || Array.isArray(query) || 'timezone' in query) return query;
  return { ...query, timezone: workspace.timezone };
}

/**
 * Checks a request against its kind's schema: a 400 naming each problem, its pointer under
 * `pointer` (saved insights check their query with it before they are stored).
 */
export function checkQuery(kind: InsightKind, query: unknown, pointer: string): void {
  const errors = [...Value.Errors(KINDS[kind].schema, query)].slice(0, MAX_REPORTED);
  if (errors.length > 0) {
    throw invalidInput(`${errors.length} invalid field${errors.length > 1 ? 's' : ''} in the ${kind} query`, errors.map((e) => ({ pointer: `${pointer}${e.path}`, detail: e.schema.error ? String(e.schema.error) : e.message })));
  }
}

/**
 * Answers insights: checks a request against its kind's schema, compiles it to one statement
 * (the cohorts it names loaded first) and runs it through the query runner, the same scheduler
 * and limits as POST /queries, once the events acknowledged before it are loaded.
 */
export class Insights implements InsightAnswerer {
  constructor(
    private readonly runner: QueryRunner,
    private readonly cohorts: Cohorts,
    private readonly ingested: (database: string) => Promise<void>,
  ) {}

  async answer(workspace: Workspace, kind: InsightKind, query: unknown, pointer: string): Promise<unknown> {
    const compiled = await this.compile(workspace, kind, query, pointer);
    await this.ingested(workspace.databaseName);
    return compiled.answer(await this.runner.runCompiled(workspace.databaseName, compiled.sql, compiled.params));
  }

  /** `POST /insights/<kind>/persons`: the actors behind one point of the insight `body.query` (a body its route has checked). */
  async actors(workspace: Workspace, kind: ActorKind, body: { query: unknown } & ActorsPage): Promise<unknown> {
    const filters = await this.cohorts.context(workspace, cohortFilters(body.query), new SqlParams());
    const context: CompileContext = { ...filters, now: Date.now(), pointer: '/query' };
    const compiled = pagedActors(ACTORS[kind].select({ ...body, query: inWorkspaceZone(body.query, workspace) } as never, context), body, context);
    await this.ingested(workspace.databaseName);
    const page = compiled.answer(await this.runner.runCompiled(workspace.databaseName, compiled.sql, compiled.params)) as { results: Array<Record<string, unknown>> };
    return { ...page, results: await this.withNames(workspace, page.results) };
  }

  /** The page's actors with their names and emails (their traits), read in one statement. */
  private async withNames(workspace: Workspace, actors: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
    if (actors.length === 0) return actors;
    const key = actors[0]!.personId !== undefined ? 'personId' : 'groupId';
    const params = new SqlParams();
    const rows = await this.runner.runCompiled(workspace.databaseName, actorNamesOf(key, actors.map((a) => String(a[key])), params), params.values);
    const names = new Map(rows.map((row) => [String(row.actor), namesOfRow(row)]));
    return actors.map((actor) => ({ ...actor, ...names.get(String(actor[key])) }));
  }

  /** The statement `query` compiles to, as run and with its values written in. */
  async explain(workspace: Workspace, kind: InsightKind, query: unknown, pointer: string) {
    const { sql, params } = await this.compile(workspace, kind, query, pointer);
    return { sql: inlineParameters(sql, params), statement: sql, params };
  }

  private async compile(workspace: Workspace, kind: InsightKind, query: unknown, pointer: string): Promise<CompiledInsight> {
    checkQuery(kind, query, pointer);
    const { compile } = KINDS[kind];
    const filters = await this.cohorts.context(workspace, cohortFilters(query), new SqlParams());
    return compile(inWorkspaceZone(query, workspace) as never, { ...filters, now: Date.now(), pointer });
  }
}
