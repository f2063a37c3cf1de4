import { Elysia, t } from 'elysia';
import { auth } from '../http/auth';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { ACTOR_KINDS, ACTORS } from './actor-kinds';
import type { Insights } from './insights';
import { KINDS } from './insights';
import { INSIGHT_KINDS, type InsightKind } from './kinds';
import { ActorsAnswer, ExplainQuery, Explained, FunnelsAnswer, FunnelTimeToConvertAnswer, FunnelTrendsAnswer, LifecycleAnswer, PathsAnswer, RetentionAnswer, StickinessAnswer, TrendsAnswer } from './model';

const ANSWERS = { trends: TrendsAnswer, funnels: t.Union([FunnelsAnswer, FunnelTrendsAnswer, FunnelTimeToConvertAnswer]), retention: RetentionAnswer, paths: PathsAnswer, stickiness: StickinessAnswer, lifecycle: LifecycleAnswer };

const SUMMARIES: Record<InsightKind, string> = {
  trends: 'Trends: events, persons or a property per period',
  funnels: 'Funnels: how many went on from each step to the next',
  retention: 'Retention: of those who started in a period, how many came back in each after',
  paths: 'Paths: what came before or after an event, as edges of a Sankey diagram',
  stickiness: 'Stickiness: how many did it on exactly n periods of the range',
  lifecycle: 'Lifecycle: new, returning, resurrecting and dormant per period',
};

/**
 * `POST /insights/<kind>`: each insight of the key's workspace, or with `?explain=1` the SQL it
 * compiles to; `POST /insights/<kind>/persons`: the persons (or groups) behind one of its points.
 */
export function insightRoutes(store: WorkspaceStore, insights: Insights) {
  const app = new Elysia({ name: 'insights', normalize: false }).use(auth(store));
  for (const kind of INSIGHT_KINDS) {
    app.post(
      `/insights/${kind}`,
      // The compiled answer has its kind's shape (the kinds' tests check it against the schema).
      async ({ body, query, principal }) => (query.explain === '1' ? insights.explain(principal.workspace, kind, body, '') : (insights.answer(principal.workspace, kind, body, '') as Promise<never>)),
      {
        scope: 'private',
        body: KINDS[kind].schema,
        query: ExplainQuery,
        response: { 200: t.Union([ANSWERS[kind], Explained]), ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: { tags: ['Insights'], summary: SUMMARIES[kind], description: 'docs/api/insights.md has every field and a worked example. `?explain=1` answers the statement instead (`sql`, runnable through POST /queries).' },
      },
    );
  }
  for (const kind of ACTOR_KINDS) {
    app.post(`/insights/${kind}/persons`, async ({ body, principal }) => insights.actors(principal.workspace, kind, body as never) as Promise<never>, {
      scope: 'private',
      body: ACTORS[kind].schema,
      response: { 200: ActorsAnswer, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
      detail: { tags: ['Insights'], summary: `The persons behind a point of ${kind}`, description: 'docs/api/insights.md#persons-behind-a-point: `query` is the insight\'s request, the other fields say which point; the actors are listed by id, a page at a time.' },
    });
  }
  return app;
}
