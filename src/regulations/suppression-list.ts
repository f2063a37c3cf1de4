import type { Event } from '../events/model';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { SubjectType } from './model';
import type { Suppression } from './regulation-records';

type Subjects = Record<SubjectType, Set<string>>;

/**
 * The suppressed subjects of every workspace, in memory for the collection routes: checked for
 * each event on its way in, so it must cost next to nothing when a workspace has none. Kept by
 * workspace (a deleted workspace's name may be reused) and looked up by database, the name the
 * ingest path knows.
 */
export class SuppressionList {
  private byWorkspace = new Map<string, Subjects>();
  private byDatabase = new Map<string, Subjects>();

  constructor(private readonly store: WorkspaceStore) {
    store.onDatabasesChanged(() => this.index());
  }

  /**
   * Whether an event bound for `database` belongs to a suppressed subject; undefined when the
   * workspace has none, so that the ingest path skips the check altogether.
   */
  checkFor(database: string): ((event: Event) => boolean) | undefined {
    const subjects = this.byDatabase.get(database);
    if (!subjects) return undefined;
    return (event) => (event.userId !== undefined && subjects.userId.has(event.userId)) || (event.anonymousId !== undefined && subjects.anonymousId.has(event.anonymousId));
  }

  /** Replaces everything with what the metadata database holds (at start, and on each refresh). */
  replace(suppressions: readonly Suppression[]): void {
    this.byWorkspace = new Map();
    for (const s of suppressions) this.subjectsOf(s.workspaceId)[s.subjectType].add(s.subjectId);
    this.index();
  }

  add(workspaceId: string, subjectType: SubjectType, ids: readonly string[]): void {
    const set = this.subjectsOf(workspaceId)[subjectType];
    for (const id of ids) set.add(id);
    this.index();
  }

  remove(workspaceId: string, subjectType: SubjectType, ids: readonly string[]): void {
    const set = this.byWorkspace.get(workspaceId)?.[subjectType];
    for (const id of ids) set?.delete(id);
    this.index();
  }

  private subjectsOf(workspaceId: string): Subjects {
    let subjects = this.byWorkspace.get(workspaceId);
    if (!subjects) this.byWorkspace.set(workspaceId, (subjects = { userId: new Set(), anonymousId: new Set() }));
    return subjects;
  }

  /** Workspaces with at least one suppressed subject, by their database. */
  private index(): void {
    const byDatabase = new Map<string, Subjects>();
    for (const [workspaceId, subjects] of this.byWorkspace) {
      const workspace = this.store.find(workspaceId);
      if (workspace && subjects.userId.size + subjects.anonymousId.size > 0) byDatabase.set(workspace.databaseName, subjects);
    }
    this.byDatabase = byDatabase;
  }
}
