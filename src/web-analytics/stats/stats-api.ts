import type { QueryRunner } from '../../queries/query-runner';
import type { Workspace } from '../../workspaces/model';
import { compileStatsQuery, needsFirstEvent } from './compile';
import { INVALID_KEY_OR_SITE, MISSING_SITE_ID, StatsQueryError } from './errors';
import type { StatsAnswer } from './model';
import { VISIT_EVENTS } from './sessions';
import type { VisitBuilder } from '../visits/visit-builder';

export interface StatsApiOptions {
  /** Minutes of inactivity that end a visit (SESSION_TIMEOUT_MINUTES). */
  sessionTimeoutMinutes: number;
}

/** The domains a workspace answers for, read tolerantly (lowercased; none: any site_id). */
export function siteDomainsOf(workspace: Workspace): string[] {
  const domains = (workspace as { siteDomains?: unknown }).siteDomains;
  return Array.isArray(domains) ? domains.filter((d): d is string => typeof d === 'string').map((d) => d.toLowerCase()) : [];
}

/**
 * Plausible's Stats API v2 for a workspace, whose events are its site: checks `site_id` (the
 * workspace's id, or one of its `siteDomains`), compiles the query and runs
 * the statement through the query runner (the scheduler, quota and limits of POST /queries) once
 * the events acknowledged before it are loaded and their persons resolved.
 */
export class StatsApi {
  constructor(
    private readonly runner: QueryRunner,
    private readonly ingested: (database: string) => Promise<void>,
    private readonly visits: VisitBuilder,
    private readonly options: StatsApiOptions,
  ) {}

  async query(workspace: Workspace, body: unknown): Promise<StatsAnswer> {
    checkSite(workspace, body);
    const database = workspace.databaseName;
    // The site's time zone is the workspace's: Plausible counts days in the site's.
    const context = { now: Date.now(), timezone: workspace.timezone, sessionTimeoutMinutes: this.options.sessionTimeoutMinutes };
    // Checked before any statement runs: a bad query costs nothing.
    compileStatsQuery(body, context);
    await this.ingested(database);
    // Until a workspace's history is built into visits, its questions are answered from events.
    const storedVisits = await this.visits.built(database);
    const firstEvent = needsFirstEvent(body) ? await this.firstEvent(database) : undefined;
    const compiled = compileStatsQuery(body, { ...context, firstEvent, storedVisits });
    return compiled.answer(await this.runner.runCompiled(database, compiled.sql, compiled.params));
  }

  /** The statement a query compiles to (for the benchmark and tests). */
  compile(body: unknown, now = Date.now(), timezone = 'UTC') {
    return compileStatsQuery(body, { now, timezone, sessionTimeoutMinutes: this.options.sessionTimeoutMinutes });
  }

  private async firstEvent(database: string): Promise<number | undefined> {
    const rows = await this.runner.runCompiled(database, `SELECT toString(toUnixTimestamp64Milli(min(timestamp))) AS first, count() AS n FROM events WHERE ${VISIT_EVENTS}`, {});
    const row = rows[0];
    return row && Number(row.n) > 0 ? Number(row.first) : undefined;
  }
}

/**
 * 400 without `site_id`, 401 (as Plausible answers) when it is neither the workspace's id nor one
 * of its `siteDomains` (any, when it lists none).
 */
function checkSite(workspace: Workspace, body: unknown): void {
  const siteId = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { site_id?: unknown }).site_id : undefined;
  if (siteId === undefined || siteId === null) throw new StatsQueryError(MISSING_SITE_ID);
  if (siteId === workspace.workspaceId) return;
  const domains = siteDomainsOf(workspace);
  if (domains.length === 0) return;
  if (typeof siteId !== 'string' || !domains.includes(siteId.toLowerCase())) throw new StatsQueryError(INVALID_KEY_OR_SITE, 401);
}
