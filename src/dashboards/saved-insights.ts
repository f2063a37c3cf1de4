import { invalidInput, notFound } from '../http/problem';
import { checkQuery } from '../insights/insights';
import { MonotonicClock } from '../monotonic-clock';
import { MAX_STATEMENT_LENGTH } from '../queries/model';
import { toIsoString } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import { MAX_DISPLAY_BYTES, MAX_SAVED_INSIGHTS, type SavedInsight, type SavedInsightInput } from './model';
import type { SavedInsightRecord, VersionedRecords } from './records';

/** A saved insight as answered: the record without its workspace. */
const answer = ({ workspaceId: _, ...insight }: SavedInsightRecord): SavedInsight => insight;

/**
 * Checks what is saved: an insight kind's query against that kind's schema (as `POST
 * /insights/<kind>` would), SQL as one statement of bounded length (the runner's guard judges it
 * when it runs), `display` within its size.
 */
function check(input: SavedInsightInput): void {
  if (input.kind === 'sql') {
    if (typeof input.query !== 'string' || input.query.trim() === '' || input.query.length > MAX_STATEMENT_LENGTH) {
      throw invalidInput('the query of a sql insight is one SQL statement', [{ pointer: '/query', detail: `must be a SQL statement of 1 to ${MAX_STATEMENT_LENGTH} characters` }]);
    }
  } else {
    checkQuery(input.kind, input.query, '/query');
  }
  if (input.display !== undefined && Buffer.byteLength(JSON.stringify(input.display)) > MAX_DISPLAY_BYTES) {
    throw invalidInput('display is too large', [{ pointer: '/display', detail: `must be at most ${MAX_DISPLAY_BYTES} bytes of JSON` }]);
  }
}

/** Insights saved per workspace: a kind and its query (or SQL), named, for dashboards and the console. */
export class SavedInsights {
  private readonly versions = new MonotonicClock();

  constructor(private readonly records: VersionedRecords<SavedInsightRecord>) {}

  async create(workspace: Workspace, input: SavedInsightInput): Promise<SavedInsight> {
    check(input);
    if ((await this.records.count(workspace.workspaceId)) >= MAX_SAVED_INSIGHTS) {
      throw invalidInput(`this workspace has ${MAX_SAVED_INSIGHTS} saved insights, the most it may have; delete one first`, [{ pointer: '', detail: `at most ${MAX_SAVED_INSIGHTS} saved insights` }]);
    }
    const now = toIsoString(this.versions.next());
    const record: SavedInsightRecord = { id: crypto.randomUUID(), workspaceId: workspace.workspaceId, ...fields(input), createdAt: now, updatedAt: now };
    await this.records.write(record, this.versions.next());
    return answer(record);
  }

  async list(workspace: Workspace): Promise<SavedInsight[]> {
    return (await this.records.list(workspace.workspaceId)).map(answer);
  }

  async get(workspace: Workspace, id: string): Promise<SavedInsight> {
    return answer(await this.record(workspace, id));
  }

  async update(workspace: Workspace, id: string, input: SavedInsightInput): Promise<SavedInsight> {
    check(input);
    const { createdAt } = await this.record(workspace, id);
    const record: SavedInsightRecord = { id, workspaceId: workspace.workspaceId, ...fields(input), createdAt, updatedAt: toIsoString(this.versions.next()) };
    await this.records.write(record, this.versions.next());
    return answer(record);
  }

  /** Deletes a saved insight; the tiles that show it answer a 404 problem until they are removed. */
  async remove(workspace: Workspace, id: string): Promise<SavedInsight> {
    const record = await this.record(workspace, id);
    await this.records.write(record, this.versions.next(), true);
    return answer(record);
  }

  /** The saved insights of `ids` that a workspace has. */
  find(workspaceId: string, ids: readonly string[]): Promise<SavedInsightRecord[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.records.find(workspaceId, ids);
  }

  removeWorkspace(workspaceId: string): Promise<void> {
    return this.records.removeWorkspace(workspaceId, this.versions.next());
  }

  private async record(workspace: Workspace, id: string): Promise<SavedInsightRecord> {
    const [record] = await this.records.find(workspace.workspaceId, [id]);
    if (!record) throw notFound(`no saved insight ${id}`);
    return record;
  }
}

/** The stored fields of an input (`display` only when given). */
function fields({ name, kind, query, display }: SavedInsightInput) {
  return { name, kind, query, ...(display !== undefined ? { display } : {}) };
}
