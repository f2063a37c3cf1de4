import type { Logger } from '../log';
import { identifier, type Storage } from '../storage/storage';
import type { AcceptedEvent } from './event-rows';
import { toEngineDateTime } from '../timestamps';

/** A time in milliseconds as a bound parameter of type DateTime64(6). */
const engineTime = (ms: number) => toEngineDateTime(BigInt(ms) * 1000n);

export interface RecentMessageIdsOptions {
  /** A messageId stored this long ago or less makes a new message with it a repeat. */
  windowMs: number;
  /** Message ids remembered in memory, over all databases; beyond, the oldest are forgotten. */
  maxIds: number;
}

/** A claim being inserted: repeats of its ids wait for its outcome. */
interface Pending {
  done: Promise<void>;
}

/** What this process knows of one database's messageIds. */
interface DatabaseIds {
  /** messageId to the time (ms) it was stored, or its pending claim; oldest first. */
  ids: Map<string, number | Pending>;
  /**
   * From when (ms) `ids` holds every stored messageId: ids stored before it (before this
   * process started, or forgotten for room) are looked up in the table.
   */
  knownSince: number;
  loaded?: Promise<void>;
}

/** The events of a claim to insert, and how to record the outcome. */
export interface Claim {
  /** Events whose messageId is new (or that have none), in their order: these are inserted. */
  fresh: AcceptedEvent[];
  /** Records the insert of `fresh`: stored, or not (their ids are then free again). */
  settle(stored: boolean): void;
}

/**
 * De-duplication by `messageId`, per database (workspace): which events of an insert repeat a
 * message stored within the window. Recent ids live in memory, up to `maxIds` over all
 * databases; after a restart each database's most recent ids are read back from its table on
 * its first insert, and whatever memory does not cover (older than what was read or kept) is
 * looked up in the table, by its bloom-filter index on messageId, for the ids of each insert.
 *
 * On a server shared by several processes, memory covers only this process's own inserts: every
 * id it does not hold is looked up in the table over the whole window (one indexed query per
 * insert that carries such ids), so a repeat sent to another process after the first was stored
 * is recognised there too.
 *
 * An id is claimed (synchronously, so two inserts cannot both take it) before its insert and
 * settled after: a repeat arriving meanwhile waits for the first insert's outcome, so it is
 * never acknowledged on the strength of an insert that then failed.
 */
export class RecentMessageIds {
  private readonly databases = new Map<string, DatabaseIds>();
  private remembered = 0;

  constructor(
    private readonly storage: Storage,
    private readonly options: RecentMessageIdsOptions,
    private readonly log: Logger,
  ) {}

  /** Ids held in memory now. */
  get size(): number {
    return this.remembered;
  }

  /** Splits `events` into new messages (claimed for this insert) and repeats. */
  async claim(database: string, events: readonly AcceptedEvent[]): Promise<Claim> {
    if (!events.some((e) => e.event.messageId !== undefined)) return { fresh: [...events], settle: () => {} };
    const db = await this.load(database);
    const claimed: string[] = [];
    const done = Promise.withResolvers<void>();
    const pending: Pending = { done: done.promise };
    const fresh: AcceptedEvent[] = [];
    let waiting = events;
    while (waiting.length > 0) {
      const now = Date.now();
      const waits: Array<Promise<void>> = [];
      const later: AcceptedEvent[] = [];
      for (const e of waiting) {
        const id = e.event.messageId;
        if (id === undefined) {
          fresh.push(e);
          continue;
        }
        const known = db.ids.get(id);
        if (known === undefined || (typeof known === 'number' && known <= now - this.options.windowMs)) {
          this.remember(db, id, pending);
          claimed.push(id);
          fresh.push(e);
        } else if (typeof known !== 'number' && known !== pending) {
          waits.push(known.done);
          later.push(e);
        }
        // Otherwise a repeat: of a stored message, or of one earlier in this insert.
      }
      waiting = later;
      if (waits.length > 0) await Promise.all(waits);
    }
    const settle = (stored: boolean) => {
      const at = Date.now();
      for (const id of claimed) {
        if (db.ids.get(id) !== pending) continue;
        this.forget(db, id);
        if (stored) this.remember(db, id, at);
      }
      this.trim();
      done.resolve();
    };
    try {
      const alreadyStored = await this.storedBefore(database, db, claimed);
      if (alreadyStored.size === 0) return { fresh, settle };
      for (const id of alreadyStored) {
        this.forget(db, id);
        this.remember(db, id, Date.now());
      }
      return { fresh: fresh.filter((e) => !alreadyStored.has(e.event.messageId!)), settle };
    } catch (err) {
      settle(false);
      throw err;
    }
  }

  /** Forgets the databases not in `databases` (their workspaces were deleted; a name may be reused). */
  retainOnly(databases: ReadonlySet<string>): void {
    for (const [name, db] of this.databases) {
      if (databases.has(name)) continue;
      this.remembered -= db.ids.size;
      this.databases.delete(name);
    }
  }

  /**
   * Which of `ids` the table holds from before what memory covers, within the window; on a shared
   * server, from anywhere in the window (other processes store ids this one never saw).
   */
  private async storedBefore(database: string, db: DatabaseIds, ids: string[]): Promise<Set<string>> {
    const from = Date.now() - this.options.windowMs;
    const shared = this.storage.mode === 'server';
    if (ids.length === 0 || (!shared && db.knownSince <= from)) return new Set();
    const until = shared ? '' : ` AND parsedAt < {until:DateTime64(6, 'UTC')}`;
    const rows = await this.storage.query(
      `SELECT DISTINCT messageId FROM ${identifier(database)}.events
       WHERE messageId IN {ids:Array(String)} AND parsedAt >= {from:DateTime64(6, 'UTC')}${until}`,
      { ids, from: engineTime(from), ...(shared ? {} : { until: engineTime(db.knownSince) }) },
      'write',
    );
    return new Set(rows.map((r) => String(r.messageId)));
  }

  /** The database's ids, read back from its table (the most recent, up to the cap) on first use. */
  private async load(database: string): Promise<DatabaseIds> {
    let db = this.databases.get(database);
    if (!db) {
      db = { ids: new Map(), knownSince: Date.now() };
      this.databases.set(database, db);
      db.loaded = this.readBack(database, db);
    }
    await db.loaded;
    return db;
  }

  private async readBack(database: string, db: DatabaseIds): Promise<void> {
    const started = performance.now();
    const from = Date.now() - this.options.windowMs;
    const until = db.knownSince;
    try {
      const rows = await this.storage.query(
        `SELECT messageId, toUnixTimestamp64Milli(max(parsedAt)) AS at FROM ${identifier(database)}.events
         WHERE messageId != '' AND parsedAt >= {from:DateTime64(6, 'UTC')} AND parsedAt < {until:DateTime64(6, 'UTC')}
         GROUP BY messageId ORDER BY at DESC LIMIT {limit:UInt64}`,
        { from: engineTime(from), until: engineTime(until), limit: this.options.maxIds },
        'write',
      );
      // Oldest first, ahead of anything claimed meanwhile.
      const ids = new Map<string, number | Pending>();
      for (let i = rows.length - 1; i >= 0; i--) ids.set(String(rows[i]!.messageId), Number(rows[i]!.at));
      for (const [id, value] of db.ids) {
        ids.delete(id);
        ids.set(id, value);
      }
      this.remembered += ids.size - db.ids.size;
      db.ids = ids;
      db.knownSince = rows.length < this.options.maxIds ? from : Number(rows.at(-1)!.at) + 1;
      this.trim();
      this.log.info('message ids read back for de-duplication', { database, ids: rows.length, ms: Math.round(performance.now() - started) });
    } catch (err) {
      // Storage is failing (the insert would too): the next insert reads back again.
      this.databases.delete(database);
      throw err;
    }
  }

  private remember(db: DatabaseIds, id: string, value: number | Pending): void {
    if (!db.ids.has(id)) this.remembered++;
    db.ids.set(id, value);
  }

  private forget(db: DatabaseIds, id: string): void {
    if (db.ids.delete(id)) this.remembered--;
  }

  /** Over the cap: forget the oldest stored ids, and note that memory no longer covers them. */
  private trim(): void {
    if (this.remembered <= this.options.maxIds) return;
    // One iterator per database for the whole trim: each new iterator would start from the map's
    // beginning and step over every entry deleted before it, which made a trim of many ids
    // quadratic (seconds per insert once the cap was reached).
    const heads = [...this.databases.values()].map((db) => {
      const entries = db.ids.entries();
      return { db, entries, head: entries.next().value };
    });
    while (this.remembered > this.options.maxIds) {
      let oldest: (typeof heads)[number] | undefined;
      for (const h of heads) {
        const at = h.head?.[1];
        if (typeof at === 'number' && (!oldest || at < (oldest.head![1] as number))) oldest = h;
      }
      // Only claims still being inserted are left: they are settled (and trimmed) soon.
      if (!oldest) return;
      const [id, at] = oldest.head as [string, number];
      this.forget(oldest.db, id);
      oldest.db.knownSince = Math.max(oldest.db.knownSince, at + 1);
      oldest.head = oldest.entries.next().value;
    }
  }
}
