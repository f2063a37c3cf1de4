import { Actor, MailboxFullError } from '../actors/actor';
import { VISIT_KEY } from '../storage/migrations/visits';
import type { Event } from '../events/model';
import { notFound, RETRY_AFTER_SECONDS, tooManyRequests } from '../http/problem';
import type { Logger } from '../log';
import { MonotonicClock } from '../monotonic-clock';
import { identifier, type Storage } from '../storage/storage';
import { nowMicros, toIsoString } from '../timestamps';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import type { Regulation, RegulationInput, SubjectType } from './model';
import { RegulationRecords, type RegulationRecord } from './regulation-records';
import type { SuppressionList } from './suppression-list';

/** What the regulations need of identity links (src/persons/identity-links.ts). */
export interface PersonIdentities {
  /** Every id that resolves to one of `personIds`. */
  idsOf(database: string, personIds: readonly string[]): Promise<string[]>;
  /** Removes the links of `ids` and of the persons `personIds`. */
  erase(database: string, ids: readonly string[], personIds: readonly string[]): Promise<void>;
}

export interface RegulationRunnerDeps {
  storage: Storage;
  store: WorkspaceStore;
  suppressions: SuppressionList;
  metaDatabase: string;
  /** `ON CLUSTER ...` or '', for the DELETE. */
  onCluster: string;
  /** The table erasures delete from: `events`, or on a cluster the shards' `events_local`. */
  eventsTable?: string;
  /** Resolves once every event accepted so far is committed or failed (the ingest buffer). */
  ingestSettled(): Promise<void>;
  /** Drops not-yet-sent webhook events of `database` that `erased` names. */
  discardDeliveries(database: string, erased: (event: Event) => boolean): void;
  /** Told once events are erased, with their visit keys: what was made from them (visits, kept answers) is made again. */
  eventsErased(database: string, keys: readonly string[]): Promise<void>;
  /** The ids linked to persons (anonymousIds, renamed userIds), which a regulation of a userId also covers. */
  identities: PersonIdentities;
  /** How often suppressions are re-read, to see those made by other processes. */
  refreshMs: number;
  log: Logger;
}

/** Regulations of one workspace waiting or running at once, at most: one workspace cannot hold up the others for long. */
const MAX_PENDING_PER_WORKSPACE = 10;
/** Regulations waiting over all workspaces, at most. */
const MAILBOX_CAPACITY = 1000;

/**
 * The regulation runner: an actor that carries out erasure and suppression requests one at a
 * time, in the order they came, away from the request and from ingestion. Each is recorded
 * (the audit list) and its status moves pending → running → finished or failed. A DELETE first
 * waits for every event accepted before it to be committed, so none of them slips in after the
 * delete, then removes the events with a lightweight DELETE on a session of its own (ingestion
 * and reads go on meanwhile). Regulations a stopped process left unfinished resume at start.
 */
export class RegulationRunner {
  private readonly records: RegulationRecords;
  private readonly versions = new MonotonicClock();
  private readonly actor = new Actor<RegulationRecord>((record) => this.carryOut(record), MAILBOX_CAPACITY);
  private readonly pending = new Map<string, number>();
  /** Suppression changes made here: a refresh that read the table before one of them must not undo it. */
  private suppressionChanges = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly deps: RegulationRunnerDeps) {
    this.records = new RegulationRecords(deps.storage, deps.metaDatabase);
  }

  async start(): Promise<void> {
    this.deps.suppressions.replace(await this.records.suppressions());
    for (const record of await this.records.unfinished()) this.enqueue(record);
    this.timer = setInterval(() => {
      const seen = this.suppressionChanges;
      this.records
        .suppressions()
        .then((s) => {
          if (seen === this.suppressionChanges) this.deps.suppressions.replace(s);
        })
        .catch((err) => this.deps.log.warn('suppression refresh failed', { err }));
    }, this.deps.refreshMs);
    this.timer.unref();
  }

  /** Finishes the regulations queued (a restart would resume them anyway), then stops. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.actor.stop();
  }

  /** Records a regulation as pending and queues it; answers its id. */
  async submit(principal: Principal, keyId: string, input: RegulationInput): Promise<{ id: string }> {
    const workspaceId = principal.workspace.workspaceId;
    if ((this.pending.get(workspaceId) ?? 0) >= MAX_PENDING_PER_WORKSPACE || this.actor.pending >= MAILBOX_CAPACITY) {
      throw tooManyRequests(`this workspace has ${MAX_PENDING_PER_WORKSPACE} regulations waiting or running; try again once one has finished`, RETRY_AFTER_SECONDS);
    }
    const record: RegulationRecord = {
      workspaceId,
      regulation: {
        id: crypto.randomUUID(),
        regulationType: input.regulationType,
        subjectType: input.subjectType,
        subjectIds: [...new Set(input.subjectIds)],
        subjectCount: 0,
        status: 'pending',
        eventsDeleted: 0,
        requestedBy: { keyKind: principal.kind, keyId },
        createdAt: toIsoString(nowMicros()),
      },
    };
    record.regulation.subjectCount = record.regulation.subjectIds.length;
    await this.save(record);
    this.enqueue(record);
    return { id: record.regulation.id };
  }

  async get(workspaceId: string, id: string): Promise<Regulation> {
    const record = await this.records.find(workspaceId, id);
    if (!record) throw notFound(`no regulation ${id}`);
    return record.regulation;
  }

  page(workspaceId: string, limit: number, offset: number) {
    return this.records.page(workspaceId, limit, offset);
  }

  private enqueue(record: RegulationRecord): void {
    const { workspaceId } = record;
    this.pending.set(workspaceId, (this.pending.get(workspaceId) ?? 0) + 1);
    this.actor
      .ask(record)
      .catch((err) => {
        // Full or stopping: it stays pending in the table and resumes at the next start.
        if (!(err instanceof MailboxFullError)) this.deps.log.warn('regulation left pending', { id: record.regulation.id, err });
      })
      .finally(() => this.pending.set(workspaceId, (this.pending.get(workspaceId) ?? 1) - 1));
  }

  private async carryOut(record: RegulationRecord): Promise<void> {
    const r = record.regulation;
    const started = performance.now();
    const workspace = this.deps.store.find(record.workspaceId);
    try {
      if (!workspace) throw new Error('the workspace was deleted');
      await this.save(record, { status: 'running' });
      const subjectType = r.subjectType as SubjectType;
      const database = workspace.databaseName;
      const deletes = r.regulationType === 'DELETE' || r.regulationType === 'SUPPRESS_WITH_DELETE';
      // A userId's person also has the anonymousIds and earlier userIds linked to it.
      const lifts = r.regulationType === 'UNSUPPRESS';
      if (!lifts) await this.deps.ingestSettled();
      const linked = subjectType === 'userId' && !lifts ? await this.deps.identities.idsOf(database, r.subjectIds) : [];
      if (lifts) await this.suppress(record, subjectType, false);
      if (r.regulationType === 'SUPPRESS' || r.regulationType === 'SUPPRESS_WITH_DELETE') await this.suppress(record, subjectType, true, linked);
      const eventsDeleted = deletes ? await this.erase(database, subjectType, r.subjectIds, linked) : 0;
      await this.save(record, { status: 'finished', eventsDeleted, finishedAt: toIsoString(nowMicros()) });
      this.deps.log.info('regulation finished', { id: r.id, type: r.regulationType, subjects: r.subjectCount, eventsDeleted, ms: Math.round(performance.now() - started) });
    } catch (err) {
      this.deps.log.error('regulation failed', { id: r.id, type: r.regulationType, err });
      await this.save(record, { status: 'failed', error: err instanceof Error ? err.message : String(err), finishedAt: toIsoString(nowMicros()) }).catch(
        (saveErr) => this.deps.log.error('regulation failure not recorded; it resumes at the next start', { id: r.id, err: saveErr }),
      );
    }
  }

  /** Suppresses the subjects (or lifts it); `linked` ids are suppressed as both userIds and anonymousIds. */
  private async suppress(record: RegulationRecord, subjectType: SubjectType, on: boolean, linked: readonly string[] = []): Promise<void> {
    const { workspaceId, regulation } = record;
    const byType: Array<[SubjectType, readonly string[]]> = [[subjectType, regulation.subjectIds]];
    if (linked.length > 0) byType.push(['userId', linked], ['anonymousId', linked]);
    const subjects = byType.flatMap(([type, ids]) => ids.map((subjectId) => ({ workspaceId, subjectType: type, subjectId })));
    await this.records.writeSuppressions(subjects, regulation.id, this.nextVersion(), !on);
    this.suppressionChanges++;
    for (const [type, ids] of byType) {
      if (on) this.deps.suppressions.add(workspaceId, type, ids);
      else this.deps.suppressions.remove(workspaceId, type, ids);
    }
  }

  /**
   * Removes every stored event of the subjects (quarantined ones too); answers how many there were just before. For
   * userIds, the person's events go too: those sent with a `linked` id (an earlier userId, or an
   * anonymousId on an event without a userId), and the links themselves.
   */
  private async erase(database: string, subjectType: SubjectType, ids: readonly string[], linked: readonly string[]): Promise<number> {
    const wanted = new Set(ids);
    const anonymous = new Set(linked);
    const userIds = [...ids, ...linked];
    const ofPerson = (e: Event) => wanted.has(e[subjectType] ?? '') || anonymous.has(e.userId ?? '') || (!e.userId && anonymous.has(e.anonymousId ?? ''));
    this.deps.discardDeliveries(database, ofPerson);
    const table = `${identifier(database)}.events`;
    const stored = `${identifier(database)}.${identifier(this.deps.eventsTable ?? 'events')}`;
    // subjectType is one of two validated column names; the ids are bound.
    const where =
      linked.length === 0
        ? `${identifier(subjectType)} IN {ids:Array(String)}`
        : `userId IN {userIds:Array(String)} OR (userId = '' AND anonymousId IN {linked:Array(String)})`;
    const params = { ids, userIds, linked };
    const rows = await this.deps.storage.query(`SELECT count() AS n, groupUniqArray(${VISIT_KEY}) AS keys FROM ${table} WHERE ${where}`, params, 'background');
    await this.deps.storage.command(`DELETE FROM ${stored} ${this.deps.onCluster} WHERE ${where}`, params, 'background');
    // Events a tracking plan keeps apart are theirs too (the quarantine has the same id columns).
    await this.deps.storage.command(`DELETE FROM ${identifier(database)}.quarantine ${this.deps.onCluster} WHERE ${where}`, params, 'background');
    if (subjectType === 'userId') await this.deps.identities.erase(database, linked, ids);
    await this.deps.eventsErased(database, (rows[0]?.keys as string[] | undefined) ?? []);
    return Number(rows[0]?.n ?? 0);
  }

  private async save(record: RegulationRecord, change: Partial<Regulation> = {}): Promise<void> {
    Object.assign(record.regulation, change);
    await this.records.write(record, this.nextVersion());
  }

  private nextVersion(): number {
    return Number(this.versions.next());
  }
}
