import type { AcceptedEvent } from '../events/event-rows';
import { forEachLink, type IdentityLink } from '../events/identity-link';
import type { Logger } from '../log';
import { MonotonicClock } from '../monotonic-clock';
import { derivedFirstLinks, FIRST_LINKS, LOOKUP_TABLES } from '../storage/migrations/persons';
import { identifier, jsonLines, type Storage } from '../storage/storage';
import { parseIsoDateTime, toEngineDateTime, type Micros } from '../timestamps';

/** Links remembered per process as already resolved, at most: beyond, the oldest are forgotten. */
const REMEMBERED_LINKS = 200_000;
/**
 * Rounds of re-pointing after renames (`alias`) within one load: a chain of renames made in one
 * batch is followed this deep (renames in separate loads compose without limit).
 */
const RENAME_ROUNDS = 5;
/**
 * How long links gather before a resolution round, at least, unless a read waits for them: under
 * steady ingest, rounds of this many milliseconds' links cost far less than a round after every
 * load (a round costs the engine about 20 ms of CPU however few its links).
 */
const GATHER_MS = 250;
/**
 * A round that took long (many new links, or a busy machine) is followed by a gathering this many
 * times its length, up to GATHER_MAX_MS: under load, rounds come less often and take more links
 * each, and resolving keeps to about a fifth of the time.
 */
const ROUND_SPACING = 4;
const GATHER_MAX_MS = 2000;
/** Rounds a database's links are tried in before they are given up (logged) until the next start derives them again. */
const ATTEMPTS = 5;
/**
 * At start, links are derived again from the events parsed this long before the newest stored
 * link, and after it: a stop may have come between an insert and the round storing its links,
 * and requests accepted at the same time reach the log a little out of order.
 */
const RECOVERY_MARGIN_MINUTES = 10;

const NO_LINKS: readonly IdentityLink[] = Object.freeze([]);

/** A link this process has stored and resolved: the first of its id it has seen. */
interface Remembered {
  database: string;
  userId: string;
  /**
   * The time of the event it was remembered from. A link of the id dated after it loses to it (in
   * `person_first_links` too) and is not stored; one dated before it (an import of older events)
   * takes its place, here and there.
   */
  at: Micros;
}

/** A link waiting for its round: the first of its id, by time, then arrival. */
interface PendingLink {
  userId: string;
  rename: boolean;
  at: Micros;
  parsedAt: Micros;
}

/** A database's links waiting for a round, by id; `renamed`, the ids an alias renamed; `attempts`, rounds that failed. */
interface Pending {
  links: Map<string, PendingLink>;
  renamed: Set<string>;
  attempts: number;
}

/**
 * `IN` over the Array(String) parameter `param`, through a subquery. Compared directly with a
 * table's key, an array parameter of more than about 750 KB (20,000 ids of 36 characters) took
 * the engine time growing with rows × ids (chDB 3.4.0: 28 s for 22,000 ids against 200,000 rows,
 * 24 s for a round of 50,000 new links; through the subquery 0.1 s and 0.8 s): a round of new
 * links reaches that size under load.
 */
const inList = (param: string) => `(SELECT arrayJoin({${param}:Array(String)}))`;

/**
 * Each id's first link (id, userId, kind), of the ids `where` (SQL over `id`) selects when given.
 * By `min`, not FINAL: a tuple's element read under FINAL comes from one of the unmerged rows
 * (chDB 3.4.0).
 */
const firstLinks = (db: string, where?: string) => `SELECT id, f.userId AS userId, f.kind AS kind
  FROM (SELECT id, min(first) AS f FROM ${db}.${FIRST_LINKS}${where ? ` WHERE ${where}` : ''} GROUP BY id)`;

/**
 * Keeps `person_first_links` (each id's first link) and `person_lookup` (each linked id resolved
 * to its person) in step with the events loaded. In rounds after the loads, the new links are
 * stored and the ids whose link may have changed are resolved again in the engine: their first
 * link (FINAL), then
 * the person of its userId when that was itself renamed. A rename also re-points every id that
 * resolved to the renamed id. Links this process has already resolved to the same userId are
 * skipped as their events are submitted, which keeps the cost at ingest to the links that are new
 * (docs/api/persons.md).
 */
export class IdentityLinks {
  private readonly versions = new MonotonicClock();
  /**
   * id → the first link of the id this process has seen and resolved, in insertion order
   * (oldest first). Another link of the id dated before it is stored and resolved again. Keyed by the id alone, so that the
   * lookup every linking event makes builds no key: the same id in another database takes the
   * place (forgetting a link costs only its resolving again).
   */
  private readonly resolved = new Map<string, Remembered>();
  /**
   * id → the last of its links handed out by `linksOf` and not yet `loaded`, and its database.
   * While one is, the id's repeats are handed out too: loading it may change what is remembered
   * for the id. (One whose events never load, refused or of a dropped database, stays until the
   * id's next link is loaded, or its database is dropped.)
   */
  private readonly inFlight = new Map<string, { link: IdentityLink; database: string }>();
  /** Links waiting for their round, per database. */
  private readonly pending = new Map<string, Pending>();
  /** The resolution running, per database. */
  private readonly running = new Map<string, Promise<void>>();
  /** Ends the gathering of links before a database's next round (a read waits for them). */
  private readonly hurry = new Map<string, () => void>();
  /** Databases a read waits on: their rounds start at once until nothing is queued. */
  private readonly hurried = new Set<string>();
  /** Databases seen to hold a renamed id (an `alias`): until one is, a round looks up no renames. */
  private readonly renaming = new Set<string>();

  constructor(
    private readonly storage: Storage,
    private readonly cluster: boolean,
    private readonly log: Logger,
  ) {}

  /**
   * The links of `events`, submitted for `database` and called in log order, that `loaded` is to
   * be given once they are inserted: a repeat of the link remembered for its id is left out
   * (unless a link of the id handed out earlier is not loaded yet), as `loaded` would skip it.
   * Signed-in traffic repeats its link on every event: this keeps it to one lookup an event,
   * with no object kept until the insert (which the garbage collector paid for).
   */
  linksOf(database: string, events: readonly AcceptedEvent[]): readonly IdentityLink[] {
    let links: IdentityLink[] | undefined;
    forEachLink(events, (id, userId, rename, { event, parsedAt }) => {
      if (!rename) {
        const known = this.resolved.get(id);
        if (known !== undefined && known.userId === userId && known.database === database && !this.inFlight.has(id)) return;
      }
      const link = { id, userId, rename, timestamp: event.timestamp, parsedAt };
      this.inFlight.set(id, { link, database });
      (links ??= []).push(link);
    });
    return links ?? NO_LINKS;
  }

  /**
   * Queues `links` (of events just inserted into `database`) for resolution, and answers
   * at once: the loader goes on with the next insert meanwhile. Links queued while the next round
   * gathers (GATHER_MS, longer after a long round) or while one runs are resolved together by the
   * next one. Reads wait for it with `settled`. A repeat of the link remembered for its id is
   * skipped before its time is even parsed.
   */
  loaded(database: string, links: readonly IdentityLink[]): void {
    let pending = this.pending.get(database);
    for (const link of links) {
      const { id, userId, rename, timestamp, parsedAt } = link;
      if (this.inFlight.get(id)?.link === link) this.inFlight.delete(id);
      const known = this.resolved.get(id);
      if (known !== undefined && known.userId === userId && known.database === database && !rename) continue;
      const at = parseIsoDateTime(timestamp)!;
      // Dated after the first link stored for the id (or at its time, and parsed later): it loses.
      if (known !== undefined && known.database === database && at >= known.at) continue;
      if (!pending) this.pending.set(database, (pending = { links: new Map(), renamed: new Set(), attempts: 0 }));
      const queued = pending.links.get(id);
      if (queued && at >= queued.at) continue;
      pending.links.set(id, { userId, rename, at, parsedAt });
      if (rename) pending.renamed.add(id);
      this.remember(database, id, userId, at);
    }
    if (pending && !this.running.has(database)) this.running.set(database, this.drain(database));
  }

  /** Resolves once the links queued for `database` so far are resolved (at once, without gathering more). */
  async settled(database: string): Promise<void> {
    const running = this.running.get(database);
    if (!running) return;
    this.hurried.add(database);
    this.hurry.get(database)?.();
    await running;
  }

  /**
   * Stores and resolves what is queued for `database`, round after round, until nothing is. A
   * round that fails is tried again with the next (the first of each id's links kept), at most
   * ATTEMPTS times. Never throws.
   */
  private async drain(database: string): Promise<void> {
    for (let failed = false, gatherMs = GATHER_MS; ; ) {
      await this.gather(database, failed, gatherMs);
      const next = this.pending.get(database);
      if (!next) break;
      this.pending.delete(database);
      const started = performance.now();
      try {
        await this.store(database, next.links);
        await this.resolve(database, [...next.links.keys()], [...next.renamed]);
        failed = false;
      } catch (err) {
        failed = true;
        this.forgetDatabase(database);
        const attempts = next.attempts + 1;
        if (attempts < ATTEMPTS) this.requeue(database, next, attempts);
        this.log.error(
          attempts < ATTEMPTS ? 'storing identity links failed; trying again' : 'storing identity links failed again; given up until the next start, which derives them from the events again',
          { database, links: next.links.size, attempts, err },
        );
      }
      gatherMs = Math.min(GATHER_MAX_MS, Math.max(GATHER_MS, ROUND_SPACING * (performance.now() - started)));
    }
    this.running.delete(database);
    this.hurried.delete(database);
  }

  /** Puts a failed round's links back with those queued since, the first of each id's kept. */
  private requeue(database: string, failed: Pending, attempts: number): void {
    const since = this.pending.get(database);
    for (const [id, link] of since?.links ?? []) {
      const earlier = failed.links.get(id);
      if (!earlier || link.at < earlier.at) failed.links.set(id, link);
    }
    for (const id of since?.renamed ?? []) failed.renamed.add(id);
    this.pending.set(database, { links: failed.links, renamed: failed.renamed, attempts });
  }

  /** Stores a round's links in `person_first_links` (where each id keeps its first). */
  private async store(database: string, links: ReadonlyMap<string, PendingLink>): Promise<void> {
    const rows = [...links].map(([id, l]) => ({
      id,
      first: { linkedAt: toEngineDateTime(l.at), parsedAt: toEngineDateTime(l.parsedAt), userId: l.userId, kind: l.rename ? 'alias' : 'identify' },
    }));
    await this.storage.insert(database, FIRST_LINKS, jsonLines(rows));
  }

  /** Waits `ms` for more links, unless a read waits for `database` and the last round did not fail. */
  private async gather(database: string, failed: boolean, ms: number): Promise<void> {
    if (this.hurried.has(database) && !failed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref?.();
      this.hurry.set(database, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.hurry.delete(database);
  }

  /**
   * At start: stores the links of the events parsed since shortly before the newest stored link
   * (of every event when none is: a data directory of an earlier release, or bulk-loaded events),
   * since a process may have stopped between an insert and the round storing its links; then
   * resolves every link whose resolution differs from `person_lookup`, and refills the Join tables
   * from it (a Join table is not in a backup).
   */
  async rebuild(database: string): Promise<void> {
    const db = identifier(database);
    // The newest first link stored: links dated after the first of their id are not stored, so
    // the links a stop lost were parsed after it (or lose anyway).
    const since = `(SELECT max(first.parsedAt) FROM ${db}.${FIRST_LINKS}) - INTERVAL ${RECOVERY_MARGIN_MINUTES} MINUTE`;
    await this.storage.command(`INSERT INTO ${db}.${FIRST_LINKS} (id, first) ${derivedFirstLinks(`${db}.events`, `parsedAt >= ${since}`)}`, {}, 'background');
    await this.storage.command(
      `INSERT INTO ${db}.person_lookup (id, personId, isAlias, version)
       SELECT r.id, r.personId, r.isAlias, {version:UInt64} FROM (${this.resolution(db, firstLinks(db), `SELECT first.userId FROM ${db}.${FIRST_LINKS}`)}) AS r
       LEFT ANY JOIN (SELECT id, personId, isAlias FROM ${db}.person_lookup FINAL) AS old ON old.id = r.id
       WHERE old.personId != r.personId OR old.isAlias != r.isAlias`,
      { version: this.version() },
      'background',
    );
    for (let round = 0; round < RENAME_ROUNDS && (await this.repoint(database)); round++);
    await this.refillJoinTables(database);
  }

  /** Every id that resolves to one of `personIds` (anonymous ids and renamed userIds). */
  async idsOf(database: string, personIds: readonly string[]): Promise<string[]> {
    const rows = await this.storage.query(
      `SELECT DISTINCT id FROM ${identifier(database)}.person_lookup FINAL WHERE personId IN {personIds:Array(String)}`,
      { personIds },
      'background',
    );
    return rows.map((r) => String(r.id));
  }

  /**
   * Removes the links of `ids` and of the persons `personIds` (an erasure), derives the links of
   * `ids` again from the events left, then refills the Join tables.
   */
  async erase(database: string, ids: readonly string[], personIds: readonly string[]): Promise<void> {
    const db = identifier(database);
    // Not ON CLUSTER: on a cluster both tables are replicated on every node and replicate their own DELETE.
    const params = { ids, personIds };
    await this.storage.command(`DELETE FROM ${db}.${FIRST_LINKS} WHERE id IN {ids:Array(String)} OR first.userId IN {personIds:Array(String)}`, params, 'background');
    await this.storage.command(`DELETE FROM ${db}.person_lookup WHERE id IN {ids:Array(String)} OR personId IN {personIds:Array(String)}`, params, 'background');
    this.forgetDatabase(database);
    // The events left may link the ids again (a shared browser's later user): their first link now.
    if (ids.length > 0) {
      const left = derivedFirstLinks(`${db}.events`, `anonymousId IN {ids:Array(String)} OR type = 'alias'`);
      await this.storage.command(`INSERT INTO ${db}.${FIRST_LINKS} (id, first) SELECT id, first FROM (${left}) WHERE id IN {ids:Array(String)}`, params, 'background');
      await this.resolveIds(database, [...ids]);
    }
    await this.refillJoinTables(database);
  }

  /** Forgets what this process resolved in `database` (links removed, or a resolution failed). */
  forgetDatabase(database: string): void {
    this.retain((db) => db !== database);
  }

  /** Forgets what this process resolved in databases no longer in `databases` (dropped workspaces), and their links in flight. */
  retainOnly(databases: ReadonlySet<string>): void {
    this.retain((db) => databases.has(db));
    for (const [id, { database }] of this.inFlight) if (!databases.has(database)) this.inFlight.delete(id);
  }

  private retain(keep: (database: string) => boolean): void {
    for (const [id, known] of this.resolved) if (!keep(known.database)) this.resolved.delete(id);
    for (const database of this.renaming) if (!keep(database)) this.renaming.delete(database);
  }

  private async resolve(database: string, ids: string[], renamed: string[]): Promise<void> {
    await this.resolveIds(database, ids);
    for (let round = 0; round < RENAME_ROUNDS && (await this.repoint(database, renamed)); round++);
  }

  /**
   * The SELECT resolving `links` (id, userId, kind): the person of the userId when it was renamed,
   * else the userId. `userIds` selects the userIds, so that only their renames are read; without
   * `renames` (the database holds none), none are.
   */
  private resolution(db: string, links: string, userIds: string, renames = true): string {
    if (!renames) return `SELECT id, userId AS personId, kind = 'alias' AS isAlias FROM (${links})`;
    return `SELECT l.id AS id, if(a.personId != '', a.personId, l.userId) AS personId, l.kind = 'alias' AS isAlias
      FROM (${links}) AS l
      LEFT ANY JOIN (SELECT id, personId FROM ${db}.person_lookup FINAL WHERE isAlias AND id IN (${userIds})) AS a ON a.id = l.userId`;
  }

  /**
   * Whether `person_lookup` of `database` holds a renamed id, in any version (if none does, the
   * rename of no userId is to be looked up): once one is seen, until the database is forgotten.
   * Most workspaces never call `alias`, and looking renames up was half of a round's cost.
   */
  private async holdsRenames(database: string): Promise<boolean> {
    if (this.renaming.has(database)) return true;
    const rows = await this.storage.query(`SELECT 1 AS renamed FROM ${identifier(database)}.person_lookup WHERE isAlias LIMIT 1`, {}, 'background');
    if (rows.length > 0) this.renaming.add(database);
    return rows.length > 0;
  }

  /**
   * Resolves again the ids that resolve to one of `renamed` (every renamed id when not given),
   * whose chains are then not at their end; answers whether there were any.
   */
  private async repoint(database: string, renamed?: readonly string[]): Promise<boolean> {
    if (renamed?.length === 0) return false;
    const db = identifier(database);
    const rows = await this.storage.query(
      `SELECT id FROM ${db}.person_lookup FINAL
       WHERE personId IN ${renamed ? '{renamed:Array(String)}' : `(SELECT id FROM ${db}.person_lookup FINAL WHERE isAlias)`} AND id != personId`,
      renamed ? { renamed } : {},
      'background',
    );
    if (rows.length > 0) await this.resolveIds(database, rows.map((r) => String(r.id)));
    return rows.length > 0;
  }

  private async resolveIds(database: string, ids: string[]): Promise<void> {
    const db = identifier(database);
    const links = firstLinks(db, `id IN ${inList('ids')}`);
    const renames = await this.holdsRenames(database);
    await this.storage.command(
      `INSERT INTO ${db}.person_lookup (id, personId, isAlias, version)
       SELECT id, personId, isAlias, {version:UInt64} FROM (${this.resolution(db, links, `SELECT first.userId FROM ${db}.${FIRST_LINKS} WHERE id IN ${inList('ids')}`, renames)})`,
      { ids, version: this.version() },
      'background',
    );
  }

  /** Refills the Join tables `joinGet` reads from `person_lookup` (no cluster: there the view joins it). */
  private async refillJoinTables(database: string): Promise<void> {
    if (this.cluster) return;
    const db = identifier(database);
    for (const [table, where] of [
      [LOOKUP_TABLES.anonymous, ''],
      [LOOKUP_TABLES.alias, 'WHERE isAlias'],
    ] as const) {
      await this.storage.command(`TRUNCATE TABLE ${db}.${table}`, {}, 'background');
      await this.storage.command(`INSERT INTO ${db}.${table} SELECT id, personId FROM ${db}.person_lookup FINAL ${where}`, {}, 'background');
    }
  }

  private remember(database: string, id: string, userId: string, at: Micros): void {
    this.resolved.delete(id);
    this.resolved.set(id, { database, userId, at });
    if (this.resolved.size > REMEMBERED_LINKS) this.resolved.delete(this.resolved.keys().next().value!);
  }

  private version(): number {
    return Number(this.versions.next());
  }
}
