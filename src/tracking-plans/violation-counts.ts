import { MAX_EXAMPLES } from '../catalog/observations';
import type { Logger } from '../log';
import { identifier, type Storage } from '../storage/storage';
import { engineToIso, toEngineDateTime, type Micros } from '../timestamps';
import type { Violation } from './plan-validator';

interface Tally {
  day: string;
  violation: Omit<Violation, 'example'>;
  examples: Set<string>;
  count: number;
  firstSeen: Micros;
  lastSeen: Micros;
}

/** A violation summed over a range, with its count per day and a few of the values that came. */
export interface ViolationCount extends Omit<Violation, 'example'> {
  examples: string[];
  count: number;
  firstSeen: string;
  lastSeen: string;
  days: Array<{ day: string; count: number }>;
}

/** Who is told of violations of a kind (event, path, rule) a workspace never had before. */
export interface NewKinds {
  /** Whether `database` wants to be told (its plan announces them). */
  wanted(database: string): boolean;
  /** Told once per kind, as the counts that first hold it are stored. */
  found(database: string, violations: readonly Violation[]): Promise<void>;
}

/** How often the counts of the ingest path are added to the engine: violations are readable in SQL this soon. */
const FLUSH_MS = 1000;
/** The most distinct violations one read answers (the commonest). */
const MAX_RESULTS = 1000;

/**
 * Violations counted per day (of arrival, UTC) and (event, path, kind, expected, actual): summed in
 * memory on the ingest path (a map update per violation) and added to the workspace's `violations`
 * table once a second, as one insert per workspace, not one per request. A read flushes its
 * workspace's first, so it sees every violation of the events answered before it. A crash loses
 * at most the last second's counts (the events themselves are safe).
 */
export class ViolationCounts {
  private pending = new Map<string, Map<string, Tally>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly onCluster: string,
    private readonly log: Logger,
    private readonly newKinds?: NewKinds,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref?.();
  }

  add(database: string, violations: readonly Violation[], at: Micros): void {
    let tallies = this.pending.get(database);
    if (!tallies) this.pending.set(database, (tallies = new Map()));
    const day = toEngineDateTime(at).slice(0, 10);
    for (const { example, ...v } of violations) {
      const key = `${day}\u0000${v.event}\u0000${v.path}\u0000${v.kind}\u0000${v.expected}\u0000${v.actual}`;
      let tally = tallies.get(key);
      if (tally) {
        tally.count++;
        if (at > tally.lastSeen) tally.lastSeen = at;
        if (at < tally.firstSeen) tally.firstSeen = at;
      } else tallies.set(key, (tally = { day, violation: v, examples: new Set(), count: 1, firstSeen: at, lastSeen: at }));
      if (example !== undefined && tally.examples.size < MAX_EXAMPLES) tally.examples.add(example);
    }
  }

  /** Adds what is counted to the engine (one database's, or all), after any flush under way. */
  flush(database?: string): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(database));
    return this.flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Clears every example value of the workspace's violations, once its erased events are gone (which value came from whose event is not kept). */
  async erased(database: string): Promise<void> {
    await this.flush(database);
    await this.storage.command(`ALTER TABLE ${identifier(database)}.violations ${this.onCluster} UPDATE examples = [] WHERE notEmpty(examples) SETTINGS mutations_sync = 2`);
  }

  /** Forgets a deleted workspace's counts not yet written. */
  forget(database: string): void {
    this.pending.delete(database);
  }

  private async write(database?: string): Promise<void> {
    const targets = database === undefined ? [...this.pending.keys()] : this.pending.has(database) ? [database] : [];
    for (const db of targets) {
      const tallies = this.pending.get(db)!;
      this.pending.delete(db);
      const lines = [...tallies.values()].map((t) =>
        JSON.stringify({ day: t.day, ...t.violation, count: t.count, firstSeen: toEngineDateTime(t.firstSeen), lastSeen: toEngineDateTime(t.lastSeen), examples: [...t.examples] }),
      );
      try {
        const fresh = this.newKinds?.wanted(db) ? await this.unseen(db, [...tallies.values()]) : [];
        await this.storage.insert(db, 'violations', lines);
        if (fresh.length > 0) await this.newKinds!.found(db, fresh).catch((err) => this.log.warn('new kinds of violations could not be announced', { database: db, kinds: fresh.length, err }));
      } catch (err) {
        // Counts are not events: a workspace gone, or storage away, loses them (logged), never an event.
        this.log.warn('violation counts of a tracking plan could not be stored', { database: db, violations: lines.length, err });
      }
    }
  }

  /** One violation of each kind (event, path, rule) among `tallies` that `database`'s table has never counted. */
  private async unseen(database: string, tallies: readonly Tally[]): Promise<Violation[]> {
    const kindOf = (v: Omit<Violation, 'example'>) => `${v.event}\u0000${v.path}\u0000${v.kind}`;
    const byKind = new Map(tallies.map((t) => [kindOf(t.violation), t.violation]));
    const seen = await this.storage.query(
      `SELECT DISTINCT event, path, kind FROM ${identifier(database)}.violations WHERE event IN {events:Array(String)}`,
      { events: [...new Set(tallies.map((t) => t.violation.event))] },
      'write',
    );
    for (const row of seen) byKind.delete(kindOf({ event: String(row.event), path: String(row.path), kind: String(row.kind), expected: '', actual: '' }));
    return [...byKind.values()];
  }

  /** The violations of `database` between two days (inclusive), of one event or all, commonest first. */
  async list(database: string, from: string, to: string, event?: string): Promise<ViolationCount[]> {
    await this.flush(database);
    const db = identifier(database);
    const rows = await this.storage.query(
      `SELECT event, path, kind, expected, actual, sum(c) AS count, min(f) AS firstSeen, max(l) AS lastSeen, arraySort(groupArray((toString(day), c))) AS days, groupUniqArrayArray(${MAX_EXAMPLES})(x) AS examples
       FROM (SELECT day, event, path, kind, expected, actual, sum(count) AS c, min(firstSeen) AS f, max(lastSeen) AS l, groupUniqArrayArray(${MAX_EXAMPLES})(examples) AS x FROM ${db}.violations
             WHERE day >= {from:Date} AND day <= {to:Date} ${event === undefined ? '' : 'AND event = {event:String}'}
             GROUP BY day, event, path, kind, expected, actual)
       GROUP BY event, path, kind, expected, actual ORDER BY count DESC, event, path, kind, expected, actual LIMIT ${MAX_RESULTS}`,
      { from, to, ...(event === undefined ? {} : { event }) },
      'write',
    );
    return rows.map((r) => ({
      event: String(r.event),
      path: String(r.path),
      kind: String(r.kind),
      expected: String(r.expected),
      actual: String(r.actual),
      count: Number(r.count),
      firstSeen: engineToIso(String(r.firstSeen)),
      lastSeen: engineToIso(String(r.lastSeen)),
      examples: (r.examples as unknown[]).map(String).sort(),
      days: (r.days as Array<[string, unknown] | { [k: string]: unknown }>).map((d) => {
        const [day, count] = Array.isArray(d) ? d : Object.values(d);
        return { day: String(day), count: Number(count) };
      }),
    }));
  }
}
