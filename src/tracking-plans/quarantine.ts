import type { AcceptedEvent } from '../events/event-rows';
import type { Event } from '../events/model';
import { IngestOverloadedError } from '../events/ingest-buffer';
import { parseJsonLossless } from '../lossless-json';
import type { MonotonicClock } from '../monotonic-clock';
import { identifier, type Storage } from '../storage/storage';
import { engineToIso, toEngineDateTime, toIsoString } from '../timestamps';
import type { PlanValidator, Violation } from './plan-validator';

/** A quarantined event as listed. */
export interface QuarantinedEvent {
  event: Event;
  violations: Violation[];
  planVersion: number;
  quarantinedAt: string;
}

/** Events one replay takes, at most (a call replays the oldest; call again for more). */
export const REPLAY_MAX_EVENTS = 10_000;

/**
 * The events a plan in quarantine mode keeps apart, in the workspace's `quarantine` table. They
 * are written before their request is answered, flushed to disk by the engine (the table's
 * `fsync_after_insert`), so none is lost in a crash or a restart; a repeated write (same token)
 * is stored once.
 */
export class Quarantine {
  private readonly replaying = new Map<string, Promise<unknown>>();

  constructor(
    private readonly storage: Storage,
    private readonly onCluster: string,
  ) {}

  async hold(database: string, held: ReadonlyArray<{ accepted: AcceptedEvent; violations: Violation[] }>, planVersion: number): Promise<void> {
    const lines = held.map(({ accepted, violations }) =>
      JSON.stringify({ uuid: accepted.event.uuid, quarantinedAt: toEngineDateTime(accepted.parsedAt), planVersion, event: accepted.event.event ?? `$${accepted.event.type}`, userId: accepted.event.userId ?? '', anonymousId: accepted.event.anonymousId ?? '', row: accepted.json, violations: JSON.stringify(violations) }),
    );
    try {
      await this.storage.insert(database, 'quarantine', lines, `quarantine_${held[0]!.accepted.event.uuid}_${held.length}`);
    } catch (err) {
      throw new IngestOverloadedError(`the events this request's tracking plan quarantines could not be written (${(err as Error).message.split('\n')[0]}); nothing of this request was kept`);
    }
  }

  async list(database: string, limit: number, offset: number): Promise<{ results: QuarantinedEvent[]; total: number }> {
    const db = identifier(database);
    const rows = await this.storage.query(
      `SELECT row, violations, planVersion, quarantinedAt FROM ${db}.quarantine FINAL ORDER BY quarantinedAt DESC, uuid LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
      { limit, offset },
      'write',
    );
    const [count] = await this.storage.query(`SELECT count() AS n FROM ${db}.quarantine FINAL`, {}, 'write');
    return {
      results: rows.map((r) => ({
        event: parseJsonLossless(String(r.row)) as Event,
        violations: JSON.parse(String(r.violations)) as Violation[],
        planVersion: Number(r.planVersion),
        quarantinedAt: engineToIso(String(r.quarantinedAt)),
      })),
      total: Number(count?.n ?? 0),
    };
  }

  /**
   * Checks the oldest quarantined events again with the plan as it is when the replay begins
   * (`planNow`; none: every event passes), stores those that pass through `submit` (the ingest path, as newly accepted events,
   * their uuid and timestamp kept) and then takes them out; the rest stay. A crash between the two
   * leaves them in both places: a replay stores them again, once more unless they carry a messageId.
   */
  replay(database: string, planNow: () => PlanValidator | undefined, clock: MonotonicClock, submit: (events: AcceptedEvent[]) => Promise<unknown>): Promise<{ replayed: number; remaining: number }> {
    // One replay of a workspace at a time in this process: two at once would store the same events twice.
    const replay = (this.replaying.get(database) ?? Promise.resolve()).catch(() => {}).then(() => this.replayNow(database, planNow(), clock, submit));
    this.replaying.set(database, replay);
    void replay.finally(() => this.replaying.get(database) === replay && this.replaying.delete(database)).catch(() => {});
    return replay;
  }

  private async replayNow(database: string, validator: PlanValidator | undefined, clock: MonotonicClock, submit: (events: AcceptedEvent[]) => Promise<unknown>): Promise<{ replayed: number; remaining: number }> {
    const db = identifier(database);
    const rows = await this.storage.query(`SELECT toString(uuid) AS uuid, row FROM ${db}.quarantine FINAL ORDER BY quarantinedAt, uuid LIMIT ${REPLAY_MAX_EVENTS}`, {}, 'write');
    const passing: AcceptedEvent[] = [];
    for (const r of rows) {
      const event = parseJsonLossless(String(r.row)) as Event;
      if (validator && validator.check(event).length > 0) continue;
      const parsedAt = clock.next();
      const again = { ...event, parsedAt: toIsoString(parsedAt) };
      passing.push({ event: again, json: JSON.stringify(again), parsedAt });
    }
    if (passing.length > 0) {
      await submit(passing);
      await this.storage.command(`DELETE FROM ${db}.quarantine ${this.onCluster} WHERE toString(uuid) IN {uuids:Array(String)}`, { uuids: passing.map((a) => a.event.uuid) });
    }
    const [count] = await this.storage.query(`SELECT count() AS n FROM ${db}.quarantine FINAL`, {}, 'write');
    return { replayed: passing.length, remaining: Number(count?.n ?? 0) };
  }
}
