import { Elysia, t } from 'elysia';
import type { Server } from 'elysia/universal';
import { acceptEvent } from '../events/event-rows';
import type { IngestBuffer } from '../events/ingest-buffer';
import type { IngestMetrics, RequestEnricher } from '../events/routes';
import { clientAddress } from '../http/client-address';
import { decodeBody } from '../http/json-body';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { MonotonicClock } from '../monotonic-clock';
import type { CidrList } from '../net/address-ranges';
import type { Workspace } from '../workspaces/model';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { PlausibleEventBody } from './model';
import { readPlausibleEvent, toEventInput } from './plausible-event';
import { userAgentFacts } from './user-agent';
import { visitorId } from './visitor-id';
import type { VisitorSalts } from './visitor-salts';

/** Plausible's path for events, which its trackers append to their `apiHost`. */
export const PLAUSIBLE_EVENT_PATH = '/api/event';

/** Why a Plausible event was answered and not stored. */
export type PlausibleDropReason = 'unknown_domain' | 'bot' | 'origin_not_allowed';

export interface PlausibleRoutesDeps {
  store: WorkspaceStore;
  buffer: IngestBuffer;
  clock: MonotonicClock;
  metrics: IngestMetrics & { plausibleDropped(reason: PlausibleDropReason): void };
  trustedProxies: CidrList;
  salts: VisitorSalts;
  enrich?: RequestEnricher;
}

/** Plausible answers every event it takes, and every one it drops, with 202 and this text. */
const OK = 'ok';

/** The workspaces of the sites named, each once. */
function workspacesOf(store: WorkspaceStore, domains: readonly string[]): Workspace[] {
  const found = new Set<Workspace>();
  for (const domain of domains) {
    const workspace = store.bySiteDomain(domain);
    if (workspace) found.add(workspace);
  }
  return [...found];
}

const originAllowed = (workspace: Workspace, origin: string | null) => origin === null || workspace.allowedOrigins.includes('*') || workspace.allowedOrigins.includes(origin);

/**
 * `POST /api/event`: Plausible's Events API, so that Plausible's trackers and integrations send
 * here by changing their host. The `domain` names the workspace (its `siteDomains`), since they
 * send no key; the visitor is a daily-salted hash of the site, client address and user agent.
 */
export function plausibleRoutes(deps: PlausibleRoutesDeps) {
  const dropped = (reason: PlausibleDropReason, set: { status?: unknown; headers: Record<string, unknown> }) => {
    deps.metrics.plausibleDropped(reason);
    set.headers['x-plausible-dropped'] = '1';
    return OK;
  };
  return new Elysia({ name: 'plausible-events', normalize: false }).post(
    PLAUSIBLE_EVENT_PATH,
    async ({ body, request, server, set }) => {
      set.status = 202;
      set.headers['content-type'] = 'text/plain; charset=utf-8';
      const event = readPlausibleEvent(body);
      const userAgent = request.headers.get('user-agent') ?? '';
      if (userAgentFacts(userAgent).bot) return dropped('bot', set);
      const workspaces = workspacesOf(deps.store, event.domains);
      if (workspaces.length === 0) return dropped('unknown_domain', set);
      const origin = request.headers.get('origin');
      const allowed = workspaces.filter((w) => originAllowed(w, origin));
      if (allowed.length === 0) return dropped('origin_not_allowed', set);
      await store(deps, allowed, event, userAgent, request, server);
      return OK;
    },
    {
      transform: (ctx) => {
        // Before the body is decoded: shedding must cost next to nothing.
        deps.buffer.admit();
        // JSON whatever the Content-Type: Plausible's trackers send text/plain, which needs no preflight.
        ctx.body = decodeBody(ctx.body, 'any') as typeof ctx.body;
      },
      body: PlausibleEventBody,
      response: { 202: t.String({ examples: [OK] }), ...problems(...BODY_PROBLEMS, 429) },
      detail: {
        tags: ['Web analytics'],
        summary: "Plausible's Events API",
        description:
          "Records a Plausible event (`pageview` as a page event, any other name as a track event) in the workspace whose `siteDomains` list its `domain` (each of a comma-separated list). No key. Answers 202 `ok` as Plausible does, also when it drops the event (a domain no workspace lists, a robot's user agent, an origin outside the workspace's `allowedOrigins`), then with `x-plausible-dropped: 1`. JSON whatever the Content-Type.",
      },
    },
  );
}

/** Stores the event in each workspace, through the ingest log as every collection route does. */
async function store(deps: PlausibleRoutesDeps, workspaces: readonly Workspace[], event: ReturnType<typeof readPlausibleEvent>, userAgent: string, request: Request, server: Server | null): Promise<void> {
  const address = clientAddress(request, server, deps.trustedProxies);
  const salt = await deps.salts.saltOf(Date.now());
  const enrich = deps.enrich?.(request, server);
  for (const workspace of workspaces) {
    const input = toEventInput(event, visitorId(salt, workspace.workspaceId, address, userAgent), userAgent);
    const database = workspace.databaseName;
    await deps.buffer.submit(database, [acceptEvent(enrich ? enrich(input) : input, deps.clock.next(), database)], 'plausible');
    deps.metrics.eventsAccepted(database, 1);
  }
}
