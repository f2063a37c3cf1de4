import { HttpProblem, invalidInput, notFound, type ProblemError } from '../http/problem';
import { instantOf } from '../insights/time-range';
import { MonotonicClock } from '../monotonic-clock';
import { toIsoString } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import { GRID_COLUMNS, MAX_DASHBOARDS, type Dashboard, type DashboardInput, type DashboardResults } from './model';
import type { DashboardRecord, VersionedRecords } from './records';
import type { SavedInsights } from './saved-insights';
import { answerTiles, type TileAnswering } from './tile-answers';

/** A dashboard as answered: the record without its workspace. */
const answer = ({ workspaceId: _, ...dashboard }: DashboardRecord): Dashboard => dashboard;

/** The problems of a time the insights would refuse (its form only: each tile's kind checks the rest). */
function timeProblems(text: string | undefined, pointer: string): ProblemError[] {
  if (text === undefined) return [];
  try {
    instantOf(text, 'UTC', Date.now(), false, pointer);
    return [];
  } catch (err) {
    if (err instanceof HttpProblem) return err.extra.errors ?? [];
    throw err;
  }
}

/** Dashboards per workspace: saved insights on a grid, answered together. */
export class Dashboards {
  private readonly versions = new MonotonicClock();

  constructor(
    private readonly records: VersionedRecords<DashboardRecord>,
    private readonly insights: SavedInsights,
    private readonly tiles: TileAnswering,
  ) {}

  async create(workspace: Workspace, input: DashboardInput): Promise<Dashboard> {
    await this.check(workspace, input);
    if ((await this.records.count(workspace.workspaceId)) >= MAX_DASHBOARDS) {
      throw invalidInput(`this workspace has ${MAX_DASHBOARDS} dashboards, the most it may have; delete one first`, [{ pointer: '', detail: `at most ${MAX_DASHBOARDS} dashboards` }]);
    }
    const now = toIsoString(this.versions.next());
    const record: DashboardRecord = { id: crypto.randomUUID(), workspaceId: workspace.workspaceId, ...input, createdAt: now, updatedAt: now };
    await this.records.write(record, this.versions.next());
    return answer(record);
  }

  async list(workspace: Workspace): Promise<Dashboard[]> {
    return (await this.records.list(workspace.workspaceId)).map(answer);
  }

  async get(workspace: Workspace, id: string): Promise<Dashboard> {
    return answer(await this.record(workspace, id));
  }

  async update(workspace: Workspace, id: string, input: DashboardInput): Promise<Dashboard> {
    await this.check(workspace, input);
    const { createdAt } = await this.record(workspace, id);
    const record: DashboardRecord = { id, workspaceId: workspace.workspaceId, ...input, createdAt, updatedAt: toIsoString(this.versions.next()) };
    await this.records.write(record, this.versions.next());
    return answer(record);
  }

  async remove(workspace: Workspace, id: string): Promise<Dashboard> {
    const record = await this.record(workspace, id);
    await this.records.write(record, this.versions.next(), true);
    return answer(record);
  }

  /** Every tile's answer (or its problem), in the order of the tiles; with `stale`, kept answers at once even if events arrived since. */
  async results(workspace: Workspace, id: string, stale: boolean): Promise<DashboardResults> {
    const dashboard = await this.record(workspace, id);
    const saved = await this.insights.find(workspace.workspaceId, [...new Set(dashboard.tiles.map((tile) => tile.insightId))]);
    return { results: await answerTiles(workspace, dashboard, new Map(saved.map((s) => [s.id, s])), this.tiles, stale) };
  }

  removeWorkspace(workspaceId: string): Promise<void> {
    return this.records.removeWorkspace(workspaceId, this.versions.next());
  }

  /** Each tile on the grid and showing a saved insight of the workspace; the date range's form and its start. */
  private async check(workspace: Workspace, input: DashboardInput): Promise<void> {
    const known = new Set((await this.insights.find(workspace.workspaceId, [...new Set(input.tiles.map((tile) => tile.insightId))])).map((s) => s.id));
    const errors: ProblemError[] = [];
    for (const [i, tile] of input.tiles.entries()) {
      if (!known.has(tile.insightId)) errors.push({ pointer: `/tiles/${i}/insightId`, detail: 'must be the id of a saved insight of this workspace' });
      if (tile.x + tile.w > GRID_COLUMNS) errors.push({ pointer: `/tiles/${i}/w`, detail: `x + w must be at most ${GRID_COLUMNS}, the columns of the grid` });
    }
    errors.push(...timeProblems(input.dateFrom, '/dateFrom'), ...timeProblems(input.dateTo, '/dateTo'));
    // A range with an end alone would meet each tile's own start, or its default of 7 days back.
    if (input.dateTo !== undefined && input.dateFrom === undefined) errors.push({ pointer: '/dateTo', detail: 'needs a dateFrom: the range replaces the tiles\' own' });
    if (errors.length > 0) throw invalidInput(`${errors.length} invalid field${errors.length > 1 ? 's' : ''} in the dashboard`, errors);
  }

  private async record(workspace: Workspace, id: string): Promise<DashboardRecord> {
    const [record] = await this.records.find(workspace.workspaceId, [id]);
    if (!record) throw notFound(`no dashboard ${id}`);
    return record;
  }
}
