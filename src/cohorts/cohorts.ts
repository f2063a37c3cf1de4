import type { FilterContext } from '../filters/compile';
import type { Filter } from '../filters/model';
import { invalidInput, notFound } from '../http/problem';
import { MonotonicClock } from '../monotonic-clock';
import type { QueryRunner } from '../queries/query-runner';
import { SqlParams } from '../sql-params';
import { toIsoString } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import { CohortRecords, type CohortRecord } from './cohort-records';
import { cohortMembers } from './cohort-sql';
import type { Cohort, CohortInput } from './model';

/** Cohorts of one workspace at most. */
const MAX_COHORTS = 500;

/**
 * Saved cohorts: their definitions in the metadata database, their members computed by the
 * engine whenever a cohort is listed or used as a filter.
 */
export class Cohorts {
  private readonly versions = new MonotonicClock();

  constructor(
    private readonly records: CohortRecords,
    private readonly runner: QueryRunner,
    /** Resolves once the events acknowledged so far are loaded into a database (sizes count them). */
    private readonly ingested: (database: string) => Promise<void>,
  ) {}

  async create(workspace: Workspace, input: CohortInput): Promise<Cohort> {
    if ((await this.records.list(workspace.workspaceId)).length >= MAX_COHORTS) {
      throw invalidInput(`this workspace has ${MAX_COHORTS} cohorts, the most it may have; delete one first`, [{ pointer: '', detail: `at most ${MAX_COHORTS} cohorts` }]);
    }
    const now = toIsoString(this.versions.next());
    const record: CohortRecord = { id: crypto.randomUUID(), workspaceId: workspace.workspaceId, name: input.name, filters: input.filters, includeBots: input.includeBots ?? false, createdAt: now, updatedAt: now };
    await this.size(workspace, record);
    await this.records.write(record, this.versions.next());
    return this.answer(workspace, record);
  }

  async list(workspace: Workspace): Promise<Cohort[]> {
    const records = await this.records.list(workspace.workspaceId);
    return Promise.all(records.map((r) => this.answer(workspace, r)));
  }

  async get(workspace: Workspace, id: string): Promise<Cohort> {
    return this.answer(workspace, await this.record(workspace, id));
  }

  async update(workspace: Workspace, id: string, input: CohortInput): Promise<Cohort> {
    const record = { ...(await this.record(workspace, id)), name: input.name, filters: input.filters, includeBots: input.includeBots ?? false, updatedAt: toIsoString(this.versions.next()) };
    await this.size(workspace, record);
    await this.records.write(record, this.versions.next());
    return this.answer(workspace, record);
  }

  async remove(workspace: Workspace, id: string): Promise<Cohort> {
    const record = await this.record(workspace, id);
    const answer = await this.answer(workspace, record);
    await this.records.write(record, this.versions.next(), true);
    return answer;
  }

  removeWorkspace(workspaceId: string): Promise<void> {
    return this.records.removeWorkspace(workspaceId, this.versions.next());
  }

  /**
   * A filter context whose cohorts are those `filters` name, loaded now; an unknown one is a 400
   * at its pointer.
   */
  async context(workspace: Workspace, filters: readonly Filter[], params = new SqlParams()): Promise<FilterContext> {
    const ids = [...new Set(filters.flatMap((f) => ('cohort' in f ? [f.cohort] : [])))];
    const known = new Map((ids.length > 0 ? await this.records.find(workspace.workspaceId, ids) : []).map((r) => [r.id, r]));
    const context: FilterContext = {
      params,
      cohort: (cohortId, pointer) => {
        const record = known.get(cohortId);
        if (!record) throw invalidInput(`no cohort ${cohortId} in this workspace`, [{ pointer, detail: 'must be the id of a cohort of this workspace' }]);
        return cohortMembers(record.filters, context, pointer, record.includeBots);
      },
    };
    return context;
  }

  private async record(workspace: Workspace, id: string): Promise<CohortRecord> {
    const [record] = await this.records.find(workspace.workspaceId, [id]);
    if (!record) throw notFound(`no cohort ${id}`);
    return record;
  }

  private async answer(workspace: Workspace, record: CohortRecord): Promise<Cohort> {
    const { id, name, filters, includeBots, createdAt, updatedAt } = record;
    return { id, name, filters, includeBots, createdAt, updatedAt, size: await this.size(workspace, record) };
  }

  /** Persons in a cohort of `record`'s definition now (which also checks that its statement runs). */
  private async size(workspace: Workspace, record: Pick<CohortRecord, 'filters' | 'includeBots'>): Promise<number> {
    const params = new SqlParams();
    const members = cohortMembers(record.filters, { params, cohort: () => '' }, '/filters', record.includeBots);
    await this.ingested(workspace.databaseName);
    const [row] = await this.runner.runCompiled(workspace.databaseName, `SELECT count() AS size FROM (${members})`, params.values);
    return Number(row?.size ?? 0);
  }
}
