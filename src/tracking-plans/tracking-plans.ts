import { acceptEvent, type AcceptedEvent } from '../events/event-rows';
import type { Logger } from '../log';
import type { MonotonicClock } from '../monotonic-clock';
import type { Door, Screening } from '../events/ingest-buffer';
import { identifier, type Storage } from '../storage/storage';
import { engineToIso, nowMicros, toEngineDateTime, toIsoString } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { importPlan, type NativePlan, type PlanFormat } from './plan-formats';
import { PlanValidator, type Violation } from './plan-validator';
import type { Quarantine } from './quarantine';
import type { ViolationCounts } from './violation-counts';

/** The event a new kind of violation is announced as. */
export const VIOLATION_EVENT = '$tracking_plan_violation';

/** What becomes of an event that breaks the plan: stored all the same, dropped, or kept apart. */
export type PlanMode = 'record' | 'drop' | 'quarantine';

/** A workspace's plan as stored, in the native format. */
export interface PlanRecord {
  workspaceId: string;
  version: number;
  plan: NativePlan;
  mode: PlanMode;
  /** Doors with a mode of their own (the others take `mode`). */
  sources: Partial<Record<Door, PlanMode>>;
  /** The format it was sent in. */
  importedFrom: PlanFormat;
  /** Whether a kind of violation never seen before is stored as a `$tracking_plan_violation` event (which webhooks deliver). */
  announce: boolean;
  createdAt: string;
}

interface Enforced {
  record: PlanRecord;
  validator: PlanValidator;
}

export interface PlanOutcomes {
  broken(database: string, outcome: 'recorded' | 'dropped' | 'quarantined', events: number): void;
  violated(database: string, kind: string, violations: number): void;
}

/**
 * Each workspace's tracking plan, compiled once per version and kept in memory for the ingest
 * path: `screen` is called for every submission (every door's events pass there) and costs one
 * map look-up when the workspace has no plan.
 */
export class TrackingPlans {
  private byWorkspace = new Map<string, Enforced>();
  private byDatabase = new Map<string, Enforced>();
  private readonly table: string;
  /** PUTs and removals made here: a refresh that read the table before one of them must not undo it. */
  private changes = 0;
  private putting: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | undefined;
  private submit?: (database: string, events: AcceptedEvent[]) => Promise<unknown>;
  private clock?: MonotonicClock;

  constructor(
    private readonly storage: Storage,
    private readonly metaDatabase: string,
    private readonly store: WorkspaceStore,
    private readonly quarantine: Quarantine,
    private readonly counts: ViolationCounts,
    private readonly outcomes: PlanOutcomes,
  ) {
    this.table = `${identifier(metaDatabase)}.tracking_plans`;
    store.onDatabasesChanged(() => this.index());
  }

  /**
   * Reads every workspace's newest plan, then again every `refreshMs`, to enforce the plans other
   * processes sharing the ClickHouse server set (a PUT here is enforced here at once).
   */
  async start(refreshMs: number, log: Logger): Promise<void> {
    await this.load();
    this.timer = setInterval(() => {
      const seen = this.changes;
      this.load(() => seen === this.changes).catch((err) => log.warn('tracking plan refresh failed', { err }));
    }, refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads every workspace's newest plan, compiling only those not compiled yet; `current` says whether no PUT here came meanwhile. */
  private async load(current = () => true): Promise<void> {
    const rows = await this.storage.query(
      `SELECT workspaceId, version, plan, mode, sources, importedFrom, announce, createdAt, isDeleted FROM ${this.table}
       WHERE (workspaceId, version) IN (SELECT workspaceId, max(version) FROM ${this.table} GROUP BY workspaceId)`,
      {},
      'write',
    );
    const byWorkspace = new Map<string, Enforced>();
    for (const row of rows) {
      if (Number(row.isDeleted) === 1) continue;
      const record: PlanRecord = {
        workspaceId: String(row.workspaceId),
        version: Number(row.version),
        plan: JSON.parse(String(row.plan)) as NativePlan,
        mode: String(row.mode) as PlanMode,
        sources: row.sources as Partial<Record<Door, PlanMode>>,
        importedFrom: String(row.importedFrom) as PlanFormat,
        announce: row.announce === true || Number(row.announce) === 1,
        createdAt: engineToIso(String(row.createdAt)),
      };
      const known = this.byWorkspace.get(record.workspaceId);
      byWorkspace.set(record.workspaceId, known?.record.version === record.version ? known : { record, validator: new PlanValidator(record.plan) });
    }
    if (!current()) return;
    this.byWorkspace = byWorkspace;
    this.index();
  }

  get(workspace: Workspace): PlanRecord | undefined {
    return this.byWorkspace.get(workspace.workspaceId)?.record;
  }

  /** The plan enforced for `database`, if any. */
  validatorFor(database: string): PlanValidator | undefined {
    return this.byDatabase.get(database)?.validator;
  }

  /** Stores a new version of the workspace's plan (400, changing nothing, for a plan that is not one) and enforces it at once. */
  put(workspace: Workspace, format: PlanFormat, plan: unknown, modes: { mode: PlanMode; sources?: Partial<Record<Door, PlanMode>> }, announce: boolean): Promise<{ record: PlanRecord; ignored: string[] }> {
    // One after another, so that two PUTs at once do not take the same version.
    const putting = this.putting.then(() => this.write(workspace, format, plan, modes, announce));
    this.putting = putting.catch(() => {});
    return putting;
  }

  private async write(workspace: Workspace, format: PlanFormat, plan: unknown, modes: { mode: PlanMode; sources?: Partial<Record<Door, PlanMode>> }, announce: boolean): Promise<{ record: PlanRecord; ignored: string[] }> {
    const { mode, sources = {} } = modes;
    const imported = importPlan(format, plan);
    const validator = new PlanValidator(imported.plan);
    const [last] = await this.storage.query(`SELECT max(version) AS v FROM ${this.table} WHERE workspaceId = {workspaceId:String}`, { workspaceId: workspace.workspaceId }, 'write');
    const now = nowMicros();
    const record: PlanRecord = { workspaceId: workspace.workspaceId, version: Number(last?.v ?? 0) + 1, plan: imported.plan, mode, sources, importedFrom: format, announce, createdAt: toIsoString(now) };
    await this.storage.insert(this.metaDatabase, 'tracking_plans', [
      JSON.stringify({ workspaceId: record.workspaceId, version: record.version, plan: JSON.stringify(record.plan), mode, sources, importedFrom: format, announce, createdAt: toEngineDateTime(now), isDeleted: 0 }),
    ]);
    this.changes++;
    this.byWorkspace.set(workspace.workspaceId, { record, validator });
    this.index();
    return { record, ignored: imported.ignored };
  }

  /** A deleted workspace's plans are marked deleted (a new workspace reusing the id starts without one). */
  async removeWorkspace(workspace: Workspace): Promise<void> {
    const enforced = this.byWorkspace.get(workspace.workspaceId);
    this.changes++;
    this.byWorkspace.delete(workspace.workspaceId);
    this.counts.forget(workspace.databaseName);
    this.index();
    if (!enforced) return;
    await this.storage.command(
      `INSERT INTO ${this.table} (workspaceId, version, plan, mode, sources, importedFrom, announce, createdAt, isDeleted) VALUES ({workspaceId:String}, {version:UInt64}, '{"events":{}}', 'record', map(), 'native', false, now64(6), 1)`,
      { workspaceId: workspace.workspaceId, version: enforced.record.version + 1 },
    );
  }

  /**
   * The ingest path's check of a submission bound for `database`: undefined when its workspace has
   * no plan (or an empty one), else the events to store and what to do with the others.
   */
  screen(database: string, events: readonly AcceptedEvent[], door: Door | undefined): Screening | undefined {
    const enforced = this.byDatabase.get(database);
    if (!enforced) return undefined;
    const { validator, record } = enforced;
    let broken: Array<{ accepted: AcceptedEvent; violations: Violation[] }> | undefined;
    for (const accepted of events) {
      const violations = validator.check(accepted.event);
      if (violations.length > 0) (broken ??= []).push({ accepted, violations });
    }
    if (!broken) return undefined;
    const found = broken;
    const mode = (door && record.sources[door]) || record.mode;
    const out = new Set(found.map((b) => b.accepted));
    const kept = mode === 'record' ? events : events.filter((e) => !out.has(e));
    return {
      kept,
      hold: () => (mode === 'quarantine' ? this.quarantine.hold(database, found, record.version) : Promise.resolve()),
      settle: () => {
        const byKind = new Map<string, number>();
        for (const { accepted, violations } of found) {
          this.counts.add(database, violations, accepted.parsedAt);
          for (const v of violations) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1);
        }
        for (const [kind, n] of byKind) this.outcomes.violated(database, kind, n);
        this.outcomes.broken(database, mode === 'record' ? 'recorded' : mode === 'drop' ? 'dropped' : 'quarantined', found.length);
      },
    };
  }

  /** Where announcements of new kinds of violations are stored (the ingest path), once it exists. */
  announceThrough(submit: (database: string, events: AcceptedEvent[]) => Promise<unknown>, clock: MonotonicClock): void {
    this.submit = submit;
    this.clock = clock;
  }

  /** Whether `database`'s plan announces new kinds of violations. */
  announces(database: string): boolean {
    return this.byDatabase.get(database)?.record.announce === true;
  }

  /**
   * Stores a `$tracking_plan_violation` event per kind of violation `database` never had before:
   * an event as any other, so the workspace's webhooks deliver it (signed, retried) and SQL reads it.
   */
  async announce(database: string, violations: readonly Violation[]): Promise<void> {
    const version = this.byDatabase.get(database)?.record.version;
    if (!this.submit || !this.clock || version === undefined) return;
    const clock = this.clock;
    const events = violations.map(({ event, path, kind, expected, actual }) =>
      acceptEvent({ type: 'track', event: VIOLATION_EVENT, properties: { event, path, kind, expected, actual, planVersion: version } }, clock.next(), database),
    );
    await this.submit(database, events);
  }

  /** Workspaces with a plan that checks something, by their database. */
  private index(): void {
    const byDatabase = new Map<string, Enforced>();
    for (const [workspaceId, enforced] of this.byWorkspace) {
      const workspace = this.store.find(workspaceId);
      if (workspace && !enforced.validator.empty) byDatabase.set(workspace.databaseName, enforced);
    }
    this.byDatabase = byDatabase;
  }
}
