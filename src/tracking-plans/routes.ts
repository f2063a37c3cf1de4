import { Elysia } from 'elysia';
import type { AcceptedEvent } from '../events/event-rows';
import type { IngestBuffer } from '../events/ingest-buffer';
import { auth } from '../http/auth';
import { pageWindow } from '../http/pagination';
import { BODY_PROBLEMS, notFound, problems } from '../http/problem';
import type { MonotonicClock } from '../monotonic-clock';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { PlanAnswer, PlanBody, QuarantinePage, QuarantineQuery, ReplayAnswer, ViolationsAnswer, ViolationsQuery } from './model';
import type { Quarantine } from './quarantine';
import type { PlanRecord, TrackingPlans } from './tracking-plans';
import type { ViolationCounts } from './violation-counts';

const tags = ['Tracking plan'];

export interface TrackingPlanDeps {
  store: WorkspaceStore;
  plans: TrackingPlans;
  counts: ViolationCounts;
  quarantine: Quarantine;
  buffer: IngestBuffer;
  clock: MonotonicClock;
}

const answer = (record: PlanRecord) => ({ format: 'native' as const, plan: record.plan, mode: record.mode, sources: record.sources, announce: record.announce, version: record.version, importedFrom: record.importedFrom, createdAt: record.createdAt });

/** `/tracking-plan`, `/violations`, `/quarantine`: a private key's governance of its own workspace (docs/api/tracking-plan.md). */
export function trackingPlanRoutes(deps: TrackingPlanDeps) {
  return new Elysia({ name: 'tracking-plan', normalize: false })
    .use(auth(deps.store))
    .get(
      '/tracking-plan',
      ({ principal }) => {
        const record = deps.plans.get(principal.workspace);
        if (!record) throw notFound('the workspace has no tracking plan (PUT /tracking-plan sets one)');
        return answer(record);
      },
      {
        scope: 'private',
        response: { 200: PlanAnswer, ...problems(401, 403, 404) },
        detail: { tags, summary: 'The tracking plan', description: 'The newest version of the workspace’s plan, in the native format, with its mode.' },
      },
    )
    .put(
      '/tracking-plan',
      async ({ body, principal }) => {
        const { record, ignored } = await deps.plans.put(principal.workspace, body.format, body.plan, { mode: body.mode, sources: body.sources }, body.announce ?? false);
        return { ...answer(record), ignored };
      },
      {
        scope: 'private',
        body: PlanBody,
        response: { 200: PlanAnswer, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: { tags, summary: 'Set the tracking plan', description: 'A new version of the plan, native or imported from Segment’s or RudderStack’s JSON, enforced at once on every door.' },
      },
    )
    .get(
      '/violations',
      async ({ query, principal }) => {
        // The violations of every request answered are counted by then (before its answer): no wait for the loader.
        return { results: await deps.counts.list(principal.workspace.databaseName, query.dateFrom ?? '1970-01-01', query.dateTo ?? '2299-12-31', query.event) };
      },
      {
        scope: 'private',
        query: ViolationsQuery,
        response: { 200: ViolationsAnswer, ...problems(400, 401, 403) },
        detail: { tags, summary: 'Violations of the plan', description: 'Counted per (event, property path, rule kind, expected, actual), with a count per day (of arrival, UTC); commonest first, at most 1,000.' },
      },
    )
    .get(
      '/quarantine',
      async ({ query, principal }) => {
        const { limit, offset } = pageWindow(query);
        return { ...(await deps.quarantine.list(principal.workspace.databaseName, limit, offset)), limit, offset };
      },
      {
        scope: 'private',
        query: QuarantineQuery,
        response: { 200: QuarantinePage, ...problems(400, 401, 403) },
        detail: { tags, summary: 'Quarantined events', description: 'Events a plan in quarantine mode kept apart, newest first, each with its violations.' },
      },
    )
    .post(
      '/quarantine/replay',
      ({ principal }) => {
        const database = principal.workspace.databaseName;
        return deps.quarantine.replay(database, () => deps.plans.validatorFor(database), deps.clock, (events: AcceptedEvent[]) => deps.buffer.submit(database, events));
      },
      {
        scope: 'private',
        response: { 200: ReplayAnswer, ...problems(401, 403, 503) },
        detail: { tags, summary: 'Replay the quarantine', description: 'Checks the quarantined events against the plan now (the oldest 10,000): those that keep it are stored and leave the quarantine, the others stay.' },
      },
    );
}
